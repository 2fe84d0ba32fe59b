import {
  DelayedError,
  Queue,
  QueueEvents,
  UnrecoverableError,
  Worker,
  type Job,
  type RedisOptions as QueueRedisOptions,
} from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import type { RemoteFailure, RemoteQueue } from './runner.js';
import type { ToolName, Tools } from '../tools/locate.js';

/** Where the service publishes the ids of jobs to stop; every worker listens and aborts the one it holds. */
const cancelChannel = (queue: string) => `${queue}:cancel`;

/** JOB_QUEUE and BullMQ's timing (docs/workers.md): a dead worker's job is taken over after about lock + stalled check. */
export interface QueueSettings {
  url: string;
  /** The BullMQ queue (JOB_QUEUE_NAME): a job's name is its kind, its id the job record's id. */
  name: string;
  /** How long a worker's lock on a job lasts without renewal (renewed every half of it while the job runs). */
  lockMs: number;
  /** How often workers look for jobs whose lock expired, to hand them to another worker. */
  stalledMs: number;
}

/** What a job on the queue carries: only its id (the service holds its params; workers ask for them). */
interface QueuedJob {
  id: string;
}

/** Failures that can pass (a lost connection, a tool missing on one worker) are tried again with these. */
const ATTEMPTS = 3;
const BACKOFF_MS = 5_000;
/** A job a worker cannot run (a program it lacks) waits this long before a worker looks at it again. */
const DECLINE_DELAY_MS = 5_000;
/**
 * For this long after it was queued, workers that lack a program a job needs leave it to others; then one takes it
 * and fails it as its handler does (a failure that can pass: tried again, then the job fails naming the program), so
 * a queue without any worker that has it answers within minutes rather than never.
 */
const DECLINE_FOR_MS = 10 * 60_000;

/**
 * Connection options for BullMQ from a redis:// URL: commands wait through a Redis restart instead of failing
 * (BullMQ's workers need `maxRetriesPerRequest: null`), and ioredis reconnects on its own. Options rather than a
 * connection, so BullMQ owns its connections and closes them.
 */
function connectionOptions(url: string): RedisOptions & QueueRedisOptions {
  const u = new URL(url);
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : 6379,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.pathname.length > 1 ? { db: Number(u.pathname.slice(1)) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
  };
}

/** The service's side of the queue: adds and cancels jobs and turns the queue's events into job record updates. */
export class SharedQueue implements RemoteQueue {
  private readonly queue: Queue<QueuedJob>;
  private readonly events: QueueEvents;
  private readonly publisher: Redis;
  private readonly channel: string;

  constructor(
    settings: QueueSettings,
    to: {
      started(id: string): void;
      requeued(id: string): void;
      progress(id: string, f: number): void;
      failed(id: string, f: RemoteFailure): void;
    },
    private readonly log: FastifyBaseLogger,
  ) {
    this.channel = cancelChannel(settings.name);
    this.queue = new Queue(settings.name, { connection: connectionOptions(settings.url) });
    this.events = new QueueEvents(settings.name, { connection: connectionOptions(settings.url) });
    this.publisher = new Redis(connectionOptions(settings.url));
    const warn = (err: Error) => this.log.warn({ err }, 'job queue');
    this.queue.on('error', warn);
    this.events.on('error', warn);
    this.publisher.on('error', warn);
    this.events.on('active', ({ jobId }) => to.started(jobId));
    this.events.on('delayed', ({ jobId }) => to.requeued(jobId));
    this.events.on('progress', ({ jobId, data }) => typeof data === 'number' && to.progress(jobId, data));
    // Only a final failure: a worker reports its handler's own errors to the service before this, so this is the
    // queue giving up (attempts spent on failures that could have passed, or a job stalled too often).
    this.events.on('failed', ({ jobId, failedReason }) =>
      to.failed(jobId, { kind: 'unavailable', code: 'worker_failed', message: failedReason }),
    );
  }

  async add(id: string, kind: string): Promise<void> {
    await this.queue.add(
      kind,
      { id },
      {
        jobId: id,
        attempts: ATTEMPTS,
        backoff: { type: 'exponential', delay: BACKOFF_MS },
        removeOnComplete: { age: 24 * 3600, count: 10_000 },
        removeOnFail: { age: 7 * 24 * 3600 },
      },
    );
  }

  async cancel(id: string): Promise<void> {
    const job = await this.queue.getJob(id);
    if (job && ['waiting', 'delayed', 'prioritized'].includes(await job.getState())) {
      // A worker may take it between the two calls; the published cancel below stops it then.
      await job.remove().catch(() => undefined);
    }
    await this.publisher.publish(this.channel, id);
  }

  /** The queue's state of a job (`missing` when the queue has no such job), and why it failed. */
  async state(id: string): Promise<{ state: string; failedReason?: string }> {
    const job = await this.queue.getJob(id);
    if (!job) return { state: 'missing' };
    return { state: await job.getState(), failedReason: job.failedReason };
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.events.close(), this.queue.close(), this.publisher.quit()]);
  }
}

/** Thrown by a worker's processor for a failure that trying again cannot mend (the queue then makes no new attempt). */
export const finalFailure = (message: string) => new UnrecoverableError(message);

export interface QueueWorker {
  close(): Promise<void>;
}

/**
 * Whether this machine lacks a program jobs of `kind` need (`needs`, from the service's kind options), looked for
 * again while missing so that an installation shows up without a restart.
 */
export function lacksTools(tools: Tools, needs: Record<string, string[]>): (kind: string) => Promise<boolean> {
  return async (kind) => {
    // A name this version does not know (a newer service) is a program it cannot look for: missing.
    const found = (name: ToolName) =>
      tools.info(name).then(
        (i) => i.found,
        () => false,
      );
    for (const name of (needs[kind] ?? []) as ToolName[]) {
      if (await found(name)) continue;
      tools.refresh(name);
      if (!(await found(name))) return true;
    }
    return false;
  };
}

/**
 * Takes jobs off the queue, at most `concurrency` at once, and runs each with `run`; a cancel published for a job it
 * holds aborts that job's signal. A job `declines` says this machine cannot run goes back to the queue for another
 * worker, without using an attempt (for DECLINE_FOR_MS). Used by the service's own worker and by `board-media
 * worker` on other machines.
 */
export function startQueueWorker(
  settings: QueueSettings,
  concurrency: number,
  run: (
    job: { id: string; kind: string; lastAttempt: boolean; progress(fraction: number): Promise<void> },
    signal: AbortSignal,
  ) => Promise<void>,
  log: FastifyBaseLogger,
  declines: (kind: string) => Promise<boolean> = async () => false,
): QueueWorker {
  const worker = new Worker<QueuedJob>(
    settings.name,
    async (job: Job<QueuedJob>, token?: string, signal?: AbortSignal) => {
      if (Date.now() - job.timestamp < DECLINE_FOR_MS && (await declines(job.name))) {
        log.info(
          { job: job.data.id, kind: job.name },
          'job left to another worker: a program it needs is missing here',
        );
        await job.moveToDelayed(Date.now() + DECLINE_DELAY_MS, token);
        throw new DelayedError();
      }
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      const progress = (fraction: number) => job.updateProgress(fraction);
      await run({ id: job.data.id, kind: job.name, lastAttempt, progress }, signal ?? new AbortController().signal);
    },
    {
      connection: connectionOptions(settings.url),
      concurrency,
      lockDuration: settings.lockMs,
      stalledInterval: settings.stalledMs,
      maxStalledCount: 1,
    },
  );
  worker.on('error', (err) => log.warn({ err }, 'job queue worker'));
  const subscriber = new Redis(connectionOptions(settings.url));
  subscriber.on('error', (err) => log.warn({ err }, 'job queue worker'));
  subscriber.subscribe(cancelChannel(settings.name)).catch((err: unknown) => log.warn({ err }, 'job queue worker'));
  subscriber.on('message', (_channel, id: string) => worker.cancelJob(id, 'cancelled'));
  return {
    async close() {
      await subscriber.quit().catch(() => undefined);
      // Running jobs stop as "shutdown", not as a user's cancel: they go back to the queue for another worker.
      worker.cancelAllJobs('shutdown');
      await worker.close();
    },
  };
}
