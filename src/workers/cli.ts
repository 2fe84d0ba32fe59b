import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { command, parseFlags, positiveInt, UsageError } from '../bridge/clients/cli-options.js';
import { DomainError } from '../errors.js';
import { loadJobsConfig } from '../jobs/config.js';
import { lacksTools, startQueueWorker } from '../jobs/queue.js';
import { browserPoolOptions, loadHtmlConfig } from '../html/config.js';
import { BrowserPool } from '../tools/browser.js';
import { Tools } from '../tools/locate.js';
import { ProbeCache } from '../tools/probe-cache.js';
import { endAllProcesses } from '../tools/process.js';
import { InputCache } from './input-cache.js';
import { runQueuedJob } from './run-job.js';
import { ServiceClient, ServiceUnreachable } from './service-client.js';
import { PORTABLE_HANDLERS } from './handlers.js';

const HELP = `Usage: board-media worker --service URL --token TOKEN --queue redis://HOST:PORT [--concurrency N] [--dir DIR]
       npm run worker -- (same options)

A render worker: takes jobs from the service's shared queue (JOB_QUEUE), runs them with this machine's ffmpeg and
Chromium, and sends the results back. It listens on no port. Options fall back to the environment:
  --service      SERVICE_URL   the service's base URL (http://host:4100)
  --token        API_TOKEN     the service's API_TOKEN
  --queue        JOB_QUEUE     the Redis or Valkey URL the service uses
  --concurrency  JOB_CONCURRENCY  jobs at once (default 1)
  --dir          WORKER_DIR    input cache and scratch (default the OS cache folder)
  WORKER_CACHE_MAX_BYTES       input cache size (default 20 GiB)
`;

const GiB = 1024 ** 3;

/** The OS's per-user cache folder for the worker. */
function defaultDir(env: NodeJS.ProcessEnv): string {
  const home = os.homedir();
  if (process.platform === 'darwin') return path.join(home, 'Library', 'Caches', 'board-media-worker');
  if (process.platform === 'win32')
    return path.join(env.LOCALAPPDATA ?? path.join(home, 'AppData', 'Local'), 'board-media-worker');
  return path.join(env.XDG_CACHE_HOME ?? path.join(home, '.cache'), 'board-media-worker');
}

/** What the service tells a worker at start (GET /api/workers/hello). */
interface Hello {
  queue: string;
  kinds: string[];
  /** Kinds that need a program a machine may lack; older services do not send it. */
  tools?: Record<string, string[]>;
}

/**
 * Waits for the service (a worker may start first) and checks the token: a refused token ends the worker before it
 * takes any job.
 */
async function helloService(service: ServiceClient, log: pino.Logger, signal: AbortSignal): Promise<Hello> {
  for (let waited = false; ; waited = true) {
    try {
      const hello = await service.json<Hello>('GET', '/api/workers/hello', undefined, signal);
      if (waited) log.info('the service is up');
      return hello;
    } catch (err) {
      if (!(err instanceof ServiceUnreachable)) throw err;
      if (!waited) log.info(`waiting for the service at ${service.base}`);
      await new Promise((r) => setTimeout(r, 1000));
      if (signal.aborted) throw signal.reason;
    }
  }
}

export async function runWorker(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { flags, rest } = parseFlags(args, ['service', 'token', 'queue', 'concurrency', 'dir']);
  if (flags.has('help')) {
    process.stdout.write(HELP);
    return;
  }
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"\n${HELP}`);
  const serviceUrl = flags.get('service') ?? env.SERVICE_URL;
  const token = flags.get('token') ?? env.API_TOKEN;
  const queue = flags.get('queue') ?? env.JOB_QUEUE;
  if (!serviceUrl || !token || !queue) throw new UsageError(`--service, --token and --queue are all needed\n${HELP}`);
  if (!/^https?:\/\//.test(serviceUrl)) throw new UsageError(`--service "${serviceUrl}" is not an http(s) URL`);
  if (!/^rediss?:\/\//.test(queue)) throw new UsageError(`--queue "${queue}" is not a redis:// URL`);
  const concurrency = positiveInt(flags, 'concurrency', Number(env.JOB_CONCURRENCY) || 1);
  const dir = path.resolve(flags.get('dir') ?? env.WORKER_DIR ?? defaultDir(env));
  const maxBytes = Number(env.WORKER_CACHE_MAX_BYTES) > 0 ? Number(env.WORKER_CACHE_MAX_BYTES) : 20 * GiB;
  const log = pino({ level: env.LOG_LEVEL ?? 'info', base: { worker: os.hostname() } }, pino.destination(2));

  const stopping = new AbortController();
  const stop = () => stopping.abort(new Error('stopped'));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  const service = new ServiceClient(serviceUrl, token);
  let hello: Hello;
  try {
    hello = await helloService(service, log, stopping.signal);
  } catch (err) {
    if (stopping.signal.aborted) return;
    if (err instanceof DomainError) throw new UsageError(`The service refused this worker: ${err.message}`);
    throw err;
  }
  const unknown = hello.kinds.filter((k) => !PORTABLE_HANDLERS[k]);
  if (unknown.length) log.warn(`this worker cannot run ${unknown.join(', ')} jobs: update it to the service's version`);

  const tools = new Tools(env);
  const declines = lacksTools(tools, hello.tools ?? {});
  const missing = [];
  for (const kind of hello.kinds) if (await declines(kind)) missing.push(kind);
  if (missing.length)
    log.warn(`this worker leaves ${missing.join(', ')} jobs to other workers: a program they need is not found here`);
  // Its own Chromium pool, from the same locator as the service's; closed when the worker stops.
  const browsers = new BrowserPool(tools, log, browserPoolOptions(loadHtmlConfig(env)));
  const rt = {
    service,
    cache: new InputCache(path.join(dir, 'inputs'), service, maxBytes, log),
    env: { tools, probes: new ProbeCache(tools), log, browsers },
    dir,
    log,
  };
  // The same lock and stall settings as the service (JOB_QUEUE_LOCK_MS, JOB_QUEUE_STALLED_MS).
  // The queue's name comes from the service, so the two always agree.
  const settings = loadJobsConfig({ ...env, JOB_QUEUE: queue, JOB_QUEUE_NAME: hello.queue }, token).jobQueue!;
  const worker = startQueueWorker(
    settings,
    concurrency,
    async (job, signal) => {
      log.info({ job: job.id, kind: job.kind }, 'job taken');
      await runQueuedJob(rt, job, signal);
      log.info({ job: job.id, kind: job.kind }, 'job done');
    },
    log,
    declines,
  );
  log.info({ service: serviceUrl, concurrency, dir }, 'render worker started');
  await new Promise((resolve) => stopping.signal.addEventListener('abort', resolve, { once: true }));
  log.info('stopping: running jobs go back to the queue');
  await worker.close();
  await browsers.close();
  // Whatever a job started and its cancel did not reach (a tree left by a program that exited) ends with the worker.
  await endAllProcesses();
}

export const workerCommand = command((args) => runWorker(args));
