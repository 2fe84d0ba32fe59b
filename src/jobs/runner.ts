import { EventEmitter } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import { ApiError, notFound } from '../http/errors.js';
import { newId, nowIso } from '../ids.js';
import type { Db } from '../db/database.js';
import { JobStore, type JobRecord } from './store.js';

export interface JobContext<P> {
  id: string;
  params: P;
  /** Aborted when the job is cancelled or the service shuts down; pass it to ffmpeg and friends. */
  signal: AbortSignal;
  /** Reports progress as a fraction 0..1; the runner derives eta_seconds from the measured rate. */
  progress(fraction: number): void;
}

export interface JobOutcome {
  output_url?: string;
  result?: unknown;
}

export type JobHandler<P> = (job: JobContext<P>) => Promise<JobOutcome>;

export interface JobKindOptions {
  /**
   * Jobs of this kind run in their own lane, up to this many at once, beside the shared JOB_CONCURRENCY lane: for
   * jobs that mostly wait on a remote service (polling a provider), which would otherwise hold up every render.
   */
  concurrency?: number;
  /**
   * A job of this kind interrupted by a shutdown or a crash is queued again at the next start instead of failing:
   * its handler can pick up where it was (it keeps what it needs in its params or its feature's tables).
   */
  resumable?: boolean;
}

const PROGRESS_WRITE_INTERVAL_MS = 200;

/**
 * The one job runner: every long render in the service is a job. Jobs live in SQLite so clients can poll them
 * and a restart can account for them; at most `concurrency` run at once, the rest wait in FIFO order.
 * Handlers do their heavy work in child processes or worker threads and receive an AbortSignal for cancellation.
 */
export class JobRunner extends EventEmitter<{ update: [JobRecord] }> {
  private readonly store: JobStore;
  private readonly handlers = new Map<string, JobHandler<unknown>>();
  private readonly kindOptions = new Map<string, JobKindOptions>();
  private readonly running = new Map<string, { controller: AbortController; kind: string }>();
  private readonly waiters = new Map<string, ((job: JobRecord) => void)[]>();
  private readonly queue: { id: string; kind: string }[] = [];
  private stopping = false;

  constructor(
    db: Db,
    private readonly concurrency: number,
    private readonly log: FastifyBaseLogger,
  ) {
    super();
    this.store = new JobStore(db);
  }

  /** Registers the handler for a kind of job. Features call this once from their register(). */
  define<P>(kind: string, handler: JobHandler<P>, opts: JobKindOptions = {}): void {
    if (this.handlers.has(kind)) throw new Error(`job kind ${kind} defined twice`);
    this.handlers.set(kind, handler as JobHandler<unknown>);
    this.kindOptions.set(kind, opts);
  }

  enqueue<P>(kind: string, params: P, opts: { boardId?: string; idPrefix?: string } = {}): JobRecord {
    if (!this.handlers.has(kind)) throw new Error(`no handler for job kind ${kind}`);
    if (this.stopping) throw new ApiError(503, 'shutting_down', 'The service is shutting down');
    const id = newId(opts.idPrefix ?? 'job_');
    this.store.insert({ id, kind, board_id: opts.boardId ?? null, params, created_at: nowIso() });
    this.queue.push({ id, kind });
    queueMicrotask(() => this.pump());
    return this.store.get(id)!;
  }

  get(id: string): JobRecord | undefined {
    return this.store.get(id);
  }

  /** The job, or 404; with `kind`, a job of another kind is also 404 (ids of one feature are not valid in another). */
  require(id: string, kind?: string | string[]): JobRecord {
    const job = this.store.get(id);
    const kinds = kind === undefined ? undefined : Array.isArray(kind) ? kind : [kind];
    if (!job || (kinds && !kinds.includes(job.kind))) throw notFound(`Job ${id} not found`);
    return job;
  }

  list(filter: { kind?: string; board_id?: string; limit?: number } = {}): JobRecord[] {
    return this.store.list({ ...filter, limit: filter.limit ?? 100 });
  }

  /** Cancels a queued or running job; finished jobs are left as they are. */
  cancel(id: string): JobRecord {
    const job = this.require(id);
    if (job.status === 'queued') {
      const i = this.queue.findIndex((q) => q.id === id);
      if (i >= 0) this.queue.splice(i, 1);
      this.finish(id, { status: 'cancelled', error: 'Cancelled' });
    } else if (job.status === 'running') {
      this.running.get(id)?.controller.abort(new ApiError(499, 'cancelled', 'Cancelled'));
    }
    return this.store.get(id)!;
  }

  /** Resolves once the job has finished (complete, error or cancelled). */
  wait(id: string): Promise<JobRecord> {
    const job = this.require(id);
    if (['complete', 'error', 'cancelled'].includes(job.status)) return Promise.resolve(job);
    return new Promise((resolve) => {
      const list = this.waiters.get(id) ?? [];
      list.push(resolve);
      this.waiters.set(id, list);
    });
  }

  /**
   * Called once at start, after every feature defined its handlers: a job that was running when the service
   * stopped cannot be resumed (its child process is gone), so it becomes an error, unless its kind is resumable;
   * queued jobs run again.
   */
  recover(): void {
    for (const job of this.store.byStatus('running')) {
      if (this.kindOptions.get(job.kind)?.resumable) this.store.update(job.id, { status: 'queued', eta_seconds: null });
      else this.store.update(job.id, { status: 'error', error: 'Interrupted by a service restart', finished_at: nowIso(), eta_seconds: null });
    }
    for (const job of this.store.byStatus('queued')) {
      if (this.handlers.has(job.kind)) this.queue.push({ id: job.id, kind: job.kind });
      else this.store.update(job.id, { status: 'error', error: `No handler for job kind ${job.kind}`, finished_at: nowIso() });
    }
    this.pump();
  }

  /** Stops taking jobs, aborts the running ones and waits for them to settle. */
  async shutdown(): Promise<void> {
    this.stopping = true;
    this.queue.length = 0;
    const ids = [...this.running.keys()];
    for (const r of this.running.values()) r.controller.abort(new ApiError(503, 'shutting_down', 'Interrupted by service shutdown'));
    await Promise.all(ids.map((id) => this.wait(id)));
  }

  /** Starts queued jobs, in order, in whichever lane has room: the shared one, or their kind's own. */
  private pump(): void {
    if (this.stopping) return;
    const busy = new Map<string | undefined, number>();
    for (const r of this.running.values()) {
      const lane = this.laneOf(r.kind);
      busy.set(lane, (busy.get(lane) ?? 0) + 1);
    }
    for (let i = 0; i < this.queue.length; ) {
      const { id, kind } = this.queue[i];
      const lane = this.laneOf(kind);
      const limit = lane === undefined ? this.concurrency : this.kindOptions.get(kind)!.concurrency!;
      if ((busy.get(lane) ?? 0) >= limit) {
        i++;
        continue;
      }
      busy.set(lane, (busy.get(lane) ?? 0) + 1);
      this.queue.splice(i, 1);
      void this.execute(id);
    }
  }

  /** The kind's own lane, or undefined for the shared lane. */
  private laneOf(kind: string): string | undefined {
    return this.kindOptions.get(kind)?.concurrency ? kind : undefined;
  }

  private async execute(id: string): Promise<void> {
    const job = this.store.get(id);
    if (!job || job.status !== 'queued') return;
    const handler = this.handlers.get(job.kind)!;
    const controller = new AbortController();
    this.running.set(id, { controller, kind: job.kind });
    const started = Date.now();
    this.store.update(id, { status: 'running', started_at: new Date(started).toISOString(), progress: 0 });
    this.emitUpdate(id);
    let lastWrite = 0;
    const progress = (fraction: number) => {
      if (!Number.isFinite(fraction) || controller.signal.aborted) return;
      const p = Math.max(0, Math.min(0.999, fraction));
      const now = Date.now();
      if (now - lastWrite < PROGRESS_WRITE_INTERVAL_MS) return;
      lastWrite = now;
      const elapsed = (now - started) / 1000;
      const eta = p > 0.01 ? Math.round((elapsed * (1 - p)) / p * 10) / 10 : null;
      this.store.update(id, { progress: p, eta_seconds: eta });
      this.emitUpdate(id);
    };
    try {
      const outcome = await handler({ id, params: job.params, signal: controller.signal, progress });
      if (controller.signal.aborted) throw controller.signal.reason;
      this.finish(id, { status: 'complete', progress: 1, eta_seconds: 0, output_url: outcome.output_url ?? null, result: outcome.result ?? null });
    } catch (err) {
      const reason = controller.signal.aborted ? (controller.signal.reason as ApiError) : err;
      if (reason instanceof ApiError && reason.code === 'shutting_down' && this.kindOptions.get(job.kind)?.resumable) {
        // Runs again at the next start (recover); whoever waits for the shutdown is told it has stopped.
        this.store.update(id, { status: 'queued', eta_seconds: null });
        this.settle(id);
        return;
      }
      const cancelled = reason instanceof ApiError && reason.code === 'cancelled';
      if (!(reason instanceof ApiError)) this.log.error({ err: reason, job: id }, 'job failed');
      this.finish(id, {
        status: cancelled ? 'cancelled' : 'error',
        error: reason instanceof Error ? reason.message : String(reason),
        eta_seconds: null,
      });
    } finally {
      this.running.delete(id);
      this.pump();
    }
  }

  private finish(id: string, fields: Parameters<JobStore['update']>[1]): void {
    this.store.update(id, { ...fields, finished_at: nowIso() });
    this.settle(id);
  }

  private settle(id: string): void {
    const job = this.emitUpdate(id);
    const list = this.waiters.get(id);
    this.waiters.delete(id);
    if (job) list?.forEach((resolve) => resolve(job));
  }

  private emitUpdate(id: string): JobRecord | undefined {
    const job = this.store.get(id);
    if (job) this.emit('update', job);
    return job;
  }
}
