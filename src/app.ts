import fsp from 'node:fs/promises';
import type { LookupFunction, Socket } from 'node:net';
import path from 'node:path';
import Fastify, { type FastifyBaseLogger, type FastifyReply } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import addFormats from 'ajv-formats';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import type { App, AppContext } from './context.js';
import { openDatabase } from './db/database.js';
import { isTempName } from './files/atomic.js';
import { MediaRoot } from './files/media-root.js';
import { installErrorHandling } from './http/errors.js';
import { installGuard } from './http/guard.js';
import { DISCARD_LIMITS, installLingeringClose, type DiscardLimits } from './http/lingering-close.js';
import { DEFAULT_BODY_LIMIT, installJsonParser } from './http/json-body.js';
import { perPartValidation } from './http/validation.js';
import { JobRunner } from './jobs/runner.js';
import { OutboundHttp } from './net/outbound.js';
import type { QueueWorker } from './jobs/queue.js';
import { registerWorkerRoutes } from './jobs/worker-routes.js';
import { registerJobs } from './jobs/routes.js';
import { nameSchemasAndOperations } from './http/openapi.js';
import { Tools } from './tools/locate.js';
import { BrowserPool } from './tools/browser.js';
import { browserPoolOptions } from './html/config.js';
import { BoardEvents } from './boards/events.js';
import { BoardService } from './boards/service.js';
import { BoardStore } from './boards/store.js';
import { BoardOutputs } from './boards/outputs.js';
import { MediaProber } from './boards/probe.js';
import { registerBoards } from './boards/routes.js';
import { registerServing } from './serving/routes.js';
import { registerUploads } from './uploads/routes.js';
import { registerHealth } from './health/routes.js';
import {
  elementInitializers,
  JOB_RESULTS,
  registerFeatures,
  SERVICE_DATA_KEYS,
  type FeatureParts,
} from './features.js';
import { SERVICE_VERSION } from './version.js';
import { ProbeCache } from './tools/probe-cache.js';

/** How long in-flight requests may take to finish once shutdown starts. */
const SHUTDOWN_GRACE_MS = 10_000;

export interface Service {
  app: App;
  ctx: AppContext;
  /** What features built that tests look into (the bridge's and the agent sessions' in-memory state). */
  features: FeatureParts;
  /** Graceful stop: stop accepting, let in-flight requests finish, stop jobs, close the database. */
  close(): Promise<void>;
}

/**
 * Temp files left by a crash (a write that never reached its rename) are removed at start. Links are not followed
 * (a Dirent of a link is neither a directory nor a file here).
 */
async function removeStaleTemps(dir: string, recursive: boolean): Promise<void> {
  const entries = await fsp.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (recursive) await removeStaleTemps(full, true);
    } else if (e.isFile() && isTempName(e.name)) await fsp.rm(full, { force: true });
  }
}

/**
 * The service context without HTTP, in the order its parts depend on each other: the database, boards and the media
 * root, the tools, the prober, the job runner (with the board outputs it commits), the browser pool. `stop` ends jobs
 * and probes, runs the closers features registered, closes the browsers and the database. Tests build it alone to test feature logic directly.
 */
export async function buildContext(
  config: Config,
  log: FastifyBaseLogger,
  opts: Pick<BuildOptions, 'lookup'> = {},
): Promise<{ ctx: AppContext; outputs: BoardOutputs; start(): void; stop(): Promise<void> }> {
  const db = openDatabase(path.join(config.dataDir, 'board-media.sqlite'));
  const events = new BoardEvents();
  const store = new BoardStore(db);
  const media = new MediaRoot(config.dataDir, (id) => store.connectedFolderOf(id));
  const tools = new Tools(config.env);
  const prober = new MediaProber(store, media, tools, events, log);
  const boards = new BoardService({
    store,
    dataDir: config.dataDir,
    media,
    events,
    log,
    probe: (el) => prober.enqueue(el),
    initializers: elementInitializers(media),
    serviceDataKeys: SERVICE_DATA_KEYS,
  });
  // Every folder the service writes into: all of DATA_DIR (media, card versions, sounds, ...) and, only at their top
  // (where the service writes), the boards' connected folders.
  await removeStaleTemps(config.dataDir, true);
  for (const folder of boards.connectedFolders()) await removeStaleTemps(folder, false);
  const outputs = new BoardOutputs(media, boards);
  const browsers = new BrowserPool(tools, log, browserPoolOptions(config));
  const probes = new ProbeCache(tools);
  const resolve = async (url: string) => (await media.resolveUrl(url)).path;
  const jobs = new JobRunner(
    db,
    config.jobConcurrency,
    log,
    { resolve, outputs },
    { tools, probes, log, browsers, media: resolve, scratchRoot: path.join(config.dataDir, 'tmp') },
  );
  // JOB_QUEUE: portable jobs go to the shared queue; the service takes them too unless LOCAL_WORKER=0. BullMQ and its
  // Redis client (about 400 modules) are loaded only then.
  const queue = config.jobQueue && { settings: config.jobQueue, ...(await import('./jobs/queue.js')) };
  const shared = queue
    ? new queue.SharedQueue(
        queue.settings,
        {
          started: (id) => jobs.remoteStarted(id),
          requeued: (id) => jobs.remoteRequeued(id),
          progress: (id, f) => jobs.remoteProgress(id, f),
          failed: (id, f) => jobs.remoteFailed(id, f),
        },
        log,
      )
    : undefined;
  if (shared) jobs.useRemote(shared);
  let localWorker: QueueWorker | undefined;
  /** Once every feature has defined its job kinds: jobs left by the last run, then the service's own queue worker. */
  const start = () => {
    jobs.recover();
    if (queue?.settings.localWorker) {
      localWorker = queue.startQueueWorker(
        queue.settings,
        config.jobConcurrency,
        (job, signal) => jobs.runFromQueue(job.id, signal),
        log,
        queue.lacksTools(tools, jobs.toolsNeeded()),
      );
    }
  };
  const closers: (() => Promise<void> | void)[] = [];
  const outbound = new OutboundHttp(opts.lookup);
  const ctx: AppContext = {
    config,
    db,
    log,
    media,
    tools,
    probes,
    browsers,
    jobs,
    boards,
    events,
    outbound,
    onClose: (fn) => closers.push(fn),
  };
  const stop = async () => {
    await jobs.shutdown();
    await localWorker?.close();
    await shared?.close();
    await prober.idle();
    for (const fn of closers.reverse()) {
      try {
        await fn();
      } catch (err) {
        log.error({ err }, 'error while closing');
      }
    }
    await browsers.close();
    outbound.close();
    db.close();
  };
  return { ctx, outputs, start, stop };
}

/** Builds one isolated service instance: its database, media root, tools, jobs and every feature's routes. */
export interface BuildOptions {
  /** false: no logging at all. */
  logger?: boolean;
  /** Where log lines go (stdout by default); tests read them from here. */
  logStream?: NodeJS.WritableStream;
  /**
   * Test seam: the resolver outbound fetches use (the system's `dns.lookup` when absent), so tests give names
   * answers (a link-local address, a rebinding one) without touching the machine's DNS. The address policy wraps it.
   */
  lookup?: LookupFunction;
  /** Test seam: how much of a refused body is discarded before its connection is cut (DISCARD_LIMITS by default). */
  discardLimits?: DiscardLimits;
}

export async function buildService(config: Config, opts: BuildOptions = {}): Promise<Service> {
  await fsp.mkdir(config.dataDir, { recursive: true });
  await fsp.rm(path.join(config.dataDir, 'tmp'), { recursive: true, force: true });

  const app = Fastify({
    logger:
      opts.logger === false
        ? false
        : {
            level: config.logLevel,
            ...(opts.logStream ? { stream: opts.logStream } : {}),
            // `/media?token=` must never reach a log file.
            serializers: {
              req: (req) => ({
                method: req.method,
                url: req.url.replace(/([?&]token=)[^&]*/g, '$1[redacted]'),
                remoteAddress: req.ip,
              }),
            },
          },
    // A URL the router cannot even decode (`/api/%zz`) still answers with the one error body.
    frameworkErrors: (err, _req, reply) => {
      void (reply as FastifyReply).status(400).send({ error: { code: 'bad_url', message: err.message } });
    },
    // Routes that take more (an HTML card, a video project) raise it for themselves.
    bodyLimit: DEFAULT_BODY_LIMIT,
    ajv: {
      customOptions: { removeAdditional: false, allErrors: false, strictNumbers: true },
      plugins: [addFormats as never],
    },
    // Bodies are validated exactly as sent; query strings, path parameters and headers are converted (http/validation.ts).
    schemaController: perPartValidation(),
    // Idle keep-alive connections are closed at once on shutdown; busy ones get SHUTDOWN_GRACE_MS to finish.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  const { ctx, outputs, start, stop } = await buildContext(config, app.log, opts);

  installErrorHandling(app);
  installGuard(app, config);
  installJsonParser(app);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Board Media Service',
        version: SERVICE_VERSION,
        description:
          'Local backend of a desktop moodboard application. Every error answers `{error: {code, message, details?}}`.',
      },
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Only when API_TOKEN is set' } },
      },
    },
    // The document is OpenAPI 3 (`openapi` above), so `openapiObject` is the one given.
    transformObject: (doc) =>
      nameSchemasAndOperations((doc as { openapiObject: Record<string, unknown> }).openapiObject),
  });
  await app.register(swaggerUi, { routePrefix: '/api/docs' });
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  registerHealth(app, ctx, SERVICE_VERSION);
  registerBoards(app, ctx);
  registerServing(app, ctx);
  await registerUploads(app, ctx);
  registerJobs(app, ctx, JOB_RESULTS);
  registerWorkerRoutes(app, ctx, outputs);
  const features = await registerFeatures(app, ctx);

  await app.ready();
  // After the media fast path, which takes the place of fastify's request listener.
  installLingeringClose(app.server, opts.discardLimits ?? DISCARD_LIMITS);
  start();

  // A connection that has not sent a byte yet is neither idle nor busy to Node, so closing would wait the whole grace
  // for it (fetch opens a spare one after an event stream is dropped): shutdown ends those at once.
  const sockets = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const force = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy();
      await app.close();
      clearTimeout(force);
      await stop();
    })());
  return { app, ctx, features, close };
}
