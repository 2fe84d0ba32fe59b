import { EventEmitter } from 'node:events';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { Cancelled, DomainError, NotFound, ShuttingDown, type ErrorKind } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import type { Db } from '../db/database.js';
import type { BoardOutputs, CommittedOutput, OutputElement, PendingOutput } from '../boards/outputs.js';
import type { BrowserPool } from '../tools/browser.js';
import type { JobKind, JobKinds, JobResult } from './kinds.js';
import { JobStore, type JobRecord, type JobSummary } from './store.js';
import type { ToolName, Tools } from '../tools/locate.js';
import type { ProbeCache } from '../tools/probe-cache.js';
import { KeyedQueue } from './keyed-queue.js';

/**
 * What a job handler may use besides its job: the same on the service and on a render worker on another machine, so
 * a handler that needs nothing else (a `portable` kind) runs on either without knowing which.
 */
export interface JobEnv {
  tools: Tools;
  /** ffprobe results of this process (the service's, shared with its requests, or a worker's own). */
  probes: ProbeCache;
  log: FastifyBaseLogger;
  /** Headless Chromium: the service's pool, or a worker's own (closed when the worker stops). */
  browsers: BrowserPool;
  /**
   * The local path of a `/media/...` URL the job reads beyond its declared inputs (what a card page asks for), or a
   * throw when there is none or it may not be read. The service answers through its media root (every containment
   * check); a worker asks the service and answers its cached copy.
   */
  media(url: string, signal?: AbortSignal): Promise<string>;
}

export interface JobContext<P> {
  id: string;
  params: P;
  /** Aborted when the job is cancelled or the service shuts down; pass it to ffmpeg and friends. */
  signal: AbortSignal;
  /** Reports progress as a fraction 0..1; the runner derives eta_seconds from the measured rate. */
  progress(fraction: number): void;
  /**
   * The local path of a media URL the kind declared in `inputs`, resolved by the runner before the handler started;
   * throws the error resolving it gave (a missing file, a link leading out) for the handler to name.
   */
  input(url: string): string;
  /** A place to write the job's output file for `board`; hand it back as `JobOutcome.output`, never commit it. */
  output(boardId: string, filename: string): Promise<PendingOutput>;
  /** A folder of the job's own for work files, made on first call and removed when the job ends however it ends. */
  scratch(): Promise<string>;
  env: JobEnv;
}

export interface JobOutcome {
  output_url?: string;
  result?: unknown;
  /**
   * The file the job produced, still pending: the runner adds it to its board (unique name, element) and removes it
   * if the job failed or was cancelled. The job's result is then the kind's `result` of the committed file and `data`
   * (plain data: on a render worker it travels to the service with the file), by default `{element_id, filename,
   * ...data}`.
   */
  output?: {
    file: PendingOutput;
    /**
     * The element added for the file; `false`: the file only gets its unique name in the board folder (a frame that
     * samples a preview) and the job's result is `{filename, url, ...data}`.
     */
    element?: OutputElement | false;
    data?: Record<string, unknown>;
    /**
     * Files that go with the output, by name (a proxy, a thumbnail), from `job.output` too: on a render worker they
     * travel with the file. The kind's `result` files them on the service; whatever it leaves is removed.
     */
    sides?: Record<string, PendingOutput>;
  };
}

export type JobHandler<P> = (job: JobContext<P>) => Promise<JobOutcome>;

/**
 * Where the runner gets a job's files: inputs resolved from media URLs, outputs produced into boards. This is the
 * seam a worker on another machine plugs into: it would receive the inputs' bytes and send back the output file,
 * while the committing stays here.
 */
export interface JobFiles {
  resolve(url: string): Promise<string>;
  outputs: BoardOutputs;
}

export interface JobKindOptions<P = unknown> {
  /** The media URLs a job reads, resolved to local paths by the runner before its handler runs (`job.input(url)`). */
  inputs?: (params: P) => string[] | Promise<string[]>;
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
  /**
   * The handler needs nothing but its job (params, declared inputs, output, scratch, `env`): with JOB_QUEUE set, jobs
   * of this kind go to the shared queue, where render workers on other machines take them (docs/workers.md).
   */
  portable?: boolean;
  /**
   * Programs the handler needs that a machine may lack (After Effects' `aerender`): a queue worker without one of
   * them leaves jobs of this kind on the queue for a worker that has it (docs/workers.md).
   */
  tools?: ToolName[];
  /**
   * The job's result from its committed output file, the `data` the handler handed back with it and its side files
   * (pending on the service, wherever the job ran); runs on the service after the commit and may file the side files.
   */
  result?: (
    committed: CommittedOutput,
    data: Record<string, unknown>,
    params: P,
    sides: Record<string, PendingOutput>,
  ) => unknown;
}

/** What the job runner needs of a shared queue (src/jobs/queue.ts): where `portable` jobs go when JOB_QUEUE is set. */
export interface RemoteQueue {
  add(id: string, kind: string): Promise<void>;
  /** Takes a waiting job off the queue and tells whichever worker holds a running one to stop it. */
  cancel(id: string): Promise<void>;
  /** The queue's state of a job (`missing` when it has none), and why it failed. */
  state(id: string): Promise<{ state: string; failedReason?: string }>;
}

/** How a render worker's failure reaches the runner (the error as the worker's handler threw it). */
export interface RemoteFailure {
  kind: ErrorKind;
  code: string;
  message: string;
  details?: unknown;
}

/** The default result of a job that produced a file: its element and name, and what the handler added. */
export const defaultOutputResult = (c: CommittedOutput, data: Record<string, unknown>) => ({
  element_id: c.element.id,
  filename: c.filename,
  ...data,
});

const PROGRESS_WRITE_INTERVAL_MS = 200;

/** The error a finished job failed with, as it was thrown (kind, code, message, details), for whoever waited on it. */
export function failureOf(job: JobRecord): DomainError {
  return new DomainError(
    (job.error_kind as ErrorKind | null) ?? 'internal',
    job.error_code ?? 'internal',
    job.error ?? 'The job failed',
    job.error_details ?? undefined,
  );
}

/** What an `update` knows beyond the record: the element a completed job's output was committed as. */
export interface JobUpdate {
  outputElementId?: string;
}

/**
 * `update`: the job as stored after each change of it (queued, started, progress, requeued, finished), emitted once
 * the write is done, whether the job runs here or on a render worker (whose reports come through the runner too).
 * The hook features listen on (the live event stream); the runner knows none of them.
 */
export class JobRunner extends EventEmitter<{ update: [JobRecord, JobUpdate] }> {
  private readonly store: JobStore;
  private readonly handlers = new Map<string, JobHandler<unknown>>();
  private readonly kindOptions = new Map<string, JobKindOptions<never>>();
  private readonly running = new Map<string, { controller: AbortController; kind: string }>();
  private readonly waiters = new Map<string, ((job: JobRecord) => void)[]>();
  private readonly queue: { id: string; kind: string }[] = [];
  /** Running jobs on the shared queue whose cancel was asked: a worker that asks is told to stop. */
  private readonly cancelAsked = new Set<string>();
  /** One commit of a worker's output at a time per job, so a duplicated upload finds the first one done. */
  private readonly commits = new KeyedQueue();
  private remote: RemoteQueue | undefined;
  private stopping = false;

  constructor(
    db: Db,
    private readonly concurrency: number,
    private readonly log: FastifyBaseLogger,
    private readonly files?: JobFiles,
    private readonly env?: JobEnv & { scratchRoot: string },
  ) {
    super();
    this.store = new JobStore(db);
  }

  /** Registers the handler for a kind of job. Features call this once from their register(). */
  define<K extends JobKind>(kind: K, handler: JobHandler<JobKinds[K]>, opts: JobKindOptions<JobKinds[K]> = {}): void {
    if (this.handlers.has(kind)) throw new Error(`job kind ${kind} defined twice`);
    this.handlers.set(kind, handler as JobHandler<unknown>);
    this.kindOptions.set(kind, opts as JobKindOptions<never>);
  }

  /** Kinds whose jobs go to the shared queue when there is one. */
  portableKinds(): string[] {
    return [...this.kindOptions].filter(([, o]) => o.portable).map(([k]) => k);
  }

  /** The programs portable kinds need beyond the common ones, by kind (JobKindOptions.tools). */
  toolsNeeded(): Record<string, ToolName[]> {
    return Object.fromEntries(
      [...this.kindOptions].filter(([, o]) => o.portable && o.tools?.length).map(([k, o]) => [k, o.tools!]),
    );
  }

  /** From now on portable jobs go to `remote` (JOB_QUEUE); called once, before `recover`. */
  useRemote(remote: RemoteQueue): void {
    this.remote = remote;
  }

  private isRemote(kind: string): boolean {
    return this.remote !== undefined && !!this.kindOptions.get(kind)?.portable;
  }

  enqueue<K extends JobKind>(
    kind: K,
    params: JobKinds[K],
    opts: { boardId?: string; idPrefix?: string } = {},
  ): JobRecord<JobKinds[K]> {
    if (!this.handlers.has(kind)) throw new Error(`no handler for job kind ${kind}`);
    if (this.stopping) throw new ShuttingDown();
    const id = newId(opts.idPrefix ?? 'job_');
    this.store.insert({ id, kind, board_id: opts.boardId ?? null, params, created_at: nowIso() });
    this.emitUpdate(id);
    if (this.isRemote(kind)) this.dispatch(id, kind);
    else {
      this.queue.push({ id, kind });
      queueMicrotask(() => this.pump());
    }
    return this.store.get(id)! as JobRecord<JobKinds[K]>;
  }

  /**
   * Puts a job on the shared queue. The record is already stored, so a queue that is down now only delays it: the
   * client connection retries, and `recover` adds again whatever a restart finds queued (the job id makes it once).
   */
  private dispatch(id: string, kind: string): void {
    this.remote!.add(id, kind).catch((err: unknown) => this.log.error({ err, job: id }, 'could not queue the job'));
  }

  get(id: string): JobRecord | undefined {
    return this.store.get(id);
  }

  /**
   * The job, or NotFound; with `kind`, a job of another kind is also not found (ids of one feature are not valid in
   * another), and its params are typed by the kind.
   */
  require(id: string): JobRecord;
  require<K extends JobKind>(id: string, kind: K | readonly K[]): JobRecord<JobKinds[K]>;
  require(id: string, kind?: string | readonly string[]): JobRecord {
    const job = this.store.get(id);
    const kinds = kind === undefined ? undefined : typeof kind === 'string' ? [kind] : kind;
    if (!job)
      throw new NotFound(`Job ${id} not found`, 'not_found', [{ field: 'params.job_id', message: 'no such job' }]);
    // A kind's own poll asked about another kind's job: the job exists, so say where it is polled.
    if (kinds && !kinds.includes(job.kind))
      throw new NotFound(`Job ${id} is a ${job.kind} job; poll it at GET /api/jobs/${id}`, 'wrong_job_kind', [
        { field: 'params.job_id', message: `is a ${job.kind} job, not ${kinds.join(' or ')}` },
      ]);
    return job;
  }

  list(filter: { kind?: string; board_id?: string; limit?: number } = {}): JobSummary[] {
    return this.store.list({ ...filter, limit: filter.limit ?? 100 });
  }

  /**
   * Cancels a queued or running job; finished jobs are left as they are. A job on the shared queue is taken off it,
   * or its worker is told to stop; the record says cancelled once the worker has stopped (a queued one at once).
   */
  cancel(id: string): JobRecord {
    const job = this.require(id);
    if (job.status !== 'queued' && job.status !== 'running') return job;
    if (this.isRemote(job.kind) && !this.running.has(id)) {
      if (job.status === 'queued') this.finish(id, CANCELLED);
      else this.cancelAsked.add(id);
      this.remote!.cancel(id).catch((err: unknown) => this.log.error({ err, job: id }, 'could not cancel the job'));
    } else if (job.status === 'queued') {
      const i = this.queue.findIndex((q) => q.id === id);
      if (i >= 0) this.queue.splice(i, 1);
      this.finish(id, CANCELLED);
    } else {
      this.running.get(id)?.controller.abort(new Cancelled());
    }
    return this.store.get(id)!;
  }

  /** Resolves once the job has finished (complete, error or cancelled); with `kind`, like `require`. */
  wait(id: string): Promise<JobRecord>;
  wait<K extends JobKind>(id: string, kind: K): Promise<JobRecord<JobKinds[K]>>;
  wait(id: string, kind?: JobKind): Promise<JobRecord> {
    const job = kind === undefined ? this.require(id) : this.require(id, kind);
    if (isFinished(job)) return Promise.resolve(job);
    return new Promise((resolve) => {
      const list = this.waiters.get(id) ?? [];
      list.push(resolve);
      this.waiters.set(id, list);
    });
  }

  /**
   * Called once at start, after every feature defined its handlers: a job that was running when the service
   * stopped cannot be resumed (its child process is gone), so it becomes an error, unless its kind is resumable;
   * queued jobs run again. Jobs on the shared queue stay there (a worker may hold them; BullMQ hands a dead one's
   * jobs on); the queued ones are added again in case the queue lost them.
   */
  recover(): void {
    for (const job of this.store.byStatus('running')) {
      if (this.isRemote(job.kind)) {
        void this.reconcile(job.id);
        continue;
      }
      if (this.kindOptions.get(job.kind)?.resumable) this.store.update(job.id, { status: 'queued', eta_seconds: null });
      else {
        this.store.update(job.id, {
          status: 'error',
          error: 'Interrupted by a service restart',
          error_code: 'interrupted',
          error_kind: 'unavailable',
          finished_at: nowIso(),
          eta_seconds: null,
        });
      }
      this.emitUpdate(job.id);
    }
    for (const job of this.store.byStatus('queued')) {
      if (!this.handlers.has(job.kind)) {
        this.store.update(job.id, {
          status: 'error',
          error: `No handler for job kind ${job.kind}`,
          error_code: 'unknown_kind',
          error_kind: 'internal',
          finished_at: nowIso(),
        });
        this.emitUpdate(job.id);
      } else if (this.isRemote(job.kind)) this.dispatch(job.id, job.kind);
      else this.queue.push({ id: job.id, kind: job.kind });
    }
    this.pump();
  }

  /**
   * A job the records say a worker is running, checked against the queue after a restart: one the queue lost is
   * queued again, one it gave up on while the service was away fails as it did.
   */
  private async reconcile(id: string): Promise<void> {
    try {
      const { state, failedReason } = await this.remote!.state(id);
      if (state === 'missing') {
        this.store.update(id, { status: 'queued', eta_seconds: null });
        this.emitUpdate(id);
        this.dispatch(id, this.store.get(id)!.kind);
      } else if (state === 'failed' || state === 'completed') {
        const message = failedReason ?? 'The worker finished without handing back its output';
        this.remoteFailed(id, { kind: 'unavailable', code: 'worker_failed', message });
      }
    } catch (err) {
      this.log.error({ err, job: id }, 'could not check the job on the queue');
    }
  }

  /** Stops taking jobs, aborts the running ones and waits for them to settle. */
  async shutdown(): Promise<void> {
    this.stopping = true;
    this.queue.length = 0;
    const ids = [...this.running.keys()];
    for (const r of this.running.values()) r.controller.abort(new ShuttingDown('Interrupted by service shutdown'));
    await Promise.all(ids.map((id) => this.wait(id)));
  }

  /**
   * Runs a job the shared queue handed to this process (the service's own worker, unless LOCAL_WORKER=0): the same
   * way as a local job, its inputs and output straight on disk. `signal` is the queue's cancel.
   */
  async runFromQueue(id: string, signal: AbortSignal): Promise<void> {
    if (this.stopping) throw new ShuttingDown();
    await this.execute(id, signal);
  }

  /** What a render worker is told about a job it took from the queue. */
  forWorker(id: string): { job: JobRecord; cancelled: boolean; inputs: Promise<string[]> } {
    const job = this.require(id);
    if (!this.isRemote(job.kind)) throw new NotFound(`Job ${id} is not on the shared queue`);
    const declare = this.kindOptions.get(job.kind)?.inputs as
      | ((p: unknown) => string[] | Promise<string[]>)
      | undefined;
    const cancelled = job.status === 'cancelled' || this.cancelAsked.has(id);
    return { job, cancelled, inputs: Promise.resolve(declare ? declare(job.params) : []) };
  }

  /** A worker started the job (from the queue's events). */
  remoteStarted(id: string): void {
    const job = this.store.get(id);
    if (!job || job.status !== 'queued') return;
    this.store.update(id, { status: 'running', started_at: job.started_at ?? nowIso(), progress: 0 });
    this.emitUpdate(id);
  }

  /** The queue holds the job back again (a worker left it to others, or a retry waits): it is queued, not running. */
  remoteRequeued(id: string): void {
    const job = this.store.get(id);
    if (!job || job.status !== 'running' || this.running.has(id)) return;
    if (this.cancelAsked.has(id)) {
      // Its cancel came while a worker held it, and no worker ran it: it ends now, and leaves the queue.
      this.cancelAsked.delete(id);
      this.finish(id, CANCELLED);
      this.remote?.cancel(id).catch((err: unknown) => this.log.error({ err, job: id }, 'could not cancel the job'));
      return;
    }
    this.store.update(id, { status: 'queued', started_at: null, progress: 0, eta_seconds: null });
    this.emitUpdate(id);
  }

  /** A worker's progress report (from the queue's events). */
  remoteProgress(id: string, fraction: number): void {
    const job = this.store.get(id);
    if (!job || job.status !== 'running' || !Number.isFinite(fraction)) return;
    const p = Math.max(0, Math.min(0.999, fraction));
    const elapsed = (Date.now() - Date.parse(job.started_at ?? nowIso())) / 1000;
    this.store.update(id, { progress: p, eta_seconds: etaOf(elapsed, p) });
    this.emitUpdate(id);
  }

  /** A worker's handler failed for good (or the queue gave up on the job): the record says how, once. */
  remoteFailed(id: string, failure: RemoteFailure): void {
    const job = this.store.get(id);
    if (!job || isFinished(job)) return;
    this.cancelAsked.delete(id);
    const cancelled = failure.kind === 'cancelled';
    this.finish(id, {
      status: cancelled ? 'cancelled' : 'error',
      error: failure.message,
      error_code: failure.code,
      error_kind: failure.kind,
      error_details: failure.details ?? null,
      eta_seconds: null,
    });
  }

  /**
   * A worker's output, its files already written as pending outputs in the board folder: committed into the board and
   * the job completed, exactly once per job. A retried or duplicated upload, or one for a job that was cancelled
   * meanwhile, is discarded and answers the job as it stands.
   */
  commitFromWorker(id: string, output: NonNullable<JobOutcome['output']>): Promise<JobRecord> {
    return this.commits.run(id, async () => {
      const job = this.require(id);
      const discard = () =>
        Promise.all(
          [output.file, ...Object.values(output.sides ?? {})].map((f) => this.requireFiles().outputs.discard(f)),
        );
      if (job.status !== 'running' && job.status !== 'queued') {
        await discard();
        return job;
      }
      if (this.cancelAsked.has(id)) {
        await discard();
        this.remoteFailed(id, { kind: 'cancelled', code: 'cancelled', message: 'Cancelled' });
        return this.store.get(id)!;
      }
      const { url, result, elementId } = await this.commitOutput(job.kind, job.params, output);
      this.finish(
        id,
        { status: 'complete', progress: 1, eta_seconds: 0, output_url: url, result },
        { outputElementId: elementId },
      );
      return this.store.get(id)!;
    });
  }

  /** The job once the commit of a worker's output under way (if any) has ended: what a duplicated complete answers. */
  afterCommit(id: string): Promise<JobRecord> {
    return this.commits.run(id, async () => this.require(id));
  }

  /**
   * Adds a job's output to its board (or only names it, `element: false`) and shapes the job's result; the side files
   * the kind's `result` did not file are removed, whatever happens.
   */
  private async commitOutput(
    kind: string,
    params: unknown,
    output: NonNullable<JobOutcome['output']>,
  ): Promise<{ url: string; result: unknown; elementId?: string }> {
    const outputs = this.requireFiles().outputs;
    const sides = output.sides ?? {};
    try {
      if (output.element === false) {
        const filed = await outputs.file(output.file);
        return { url: filed.url, result: { ...filed, ...output.data } };
      }
      const committed = await outputs.commit(output.file, output.element);
      const shape = this.kindOptions.get(kind)?.result ?? defaultOutputResult;
      const result = await shape(committed, output.data ?? {}, params as never, sides);
      return { url: committed.url, result, elementId: committed.element.id };
    } finally {
      await Promise.all(Object.values(sides).map((side) => outputs.discard(side)));
    }
  }

  /** A worker finished a job that produced no file. */
  completeFromWorker(id: string, outcome: { output_url?: string; result?: unknown }): JobRecord {
    const job = this.require(id);
    if (isFinished(job)) return job;
    this.finish(id, {
      status: 'complete',
      progress: 1,
      eta_seconds: 0,
      output_url: outcome.output_url ?? null,
      result: outcome.result ?? null,
    });
    return this.store.get(id)!;
  }

  /** Starts queued jobs, in order, in whichever lane has room: the shared one, or their kind's own. */
  private pump(): void {
    if (this.stopping) return;
    const busy = new Map<string | undefined, number>();
    for (const r of this.running.values()) {
      if (this.isRemote(r.kind)) continue;
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

  private async execute(id: string, external?: AbortSignal): Promise<void> {
    const job = this.store.get(id);
    // From the queue, a job may already say running: its `active` event came first, or its last worker died.
    if (!job || (job.status !== 'queued' && !(external && job.status === 'running'))) return;
    const controller = new AbortController();
    // The queue's abort: a user's cancel, or the queue worker stopping (the job then goes back to the queue).
    const onExternal = () =>
      controller.abort(
        external?.reason === 'shutdown' ? new ShuttingDown('Interrupted by service shutdown') : new Cancelled(),
      );
    external?.addEventListener('abort', onExternal, { once: true });
    if (this.cancelAsked.has(id)) controller.abort(new Cancelled());
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
      this.store.update(id, { progress: p, eta_seconds: etaOf((now - started) / 1000, p) });
      this.emitUpdate(id);
    };
    try {
      const done = await this.run(job.kind, id, job.params, controller.signal, progress);
      this.finish(
        id,
        { status: 'complete', progress: 1, eta_seconds: 0, output_url: done.url ?? null, result: done.result ?? null },
        { outputElementId: done.elementId },
      );
    } catch (err) {
      const reason: unknown = controller.signal.aborted ? controller.signal.reason : err;
      const requeue = this.kindOptions.get(job.kind)?.resumable || this.isRemote(job.kind);
      if (reason instanceof ShuttingDown && requeue) {
        // Runs again at the next start (recover), or on another worker of the shared queue; whoever waits for the
        // shutdown is told it has stopped.
        this.store.update(id, { status: 'queued', eta_seconds: null });
        this.settle(id);
        if (external) throw reason;
        return;
      }
      const known = reason instanceof DomainError;
      const cancelled = known && reason.kind === 'cancelled';
      if (!known) this.log.error({ err: reason, job: id }, 'job failed');
      this.finish(id, {
        status: cancelled ? 'cancelled' : 'error',
        error: reason instanceof Error ? reason.message : String(reason),
        error_code: known ? reason.code : 'internal',
        error_kind: known ? reason.kind : 'internal',
        error_details: known ? (reason.details ?? null) : null,
        eta_seconds: null,
      });
    } finally {
      external?.removeEventListener('abort', onExternal);
      this.cancelAsked.delete(id);
      this.running.delete(id);
      this.pump();
    }
  }

  /**
   * Runs a job's handler now, in the caller (a request that answers with the result), with the context a queued job
   * gets: its declared inputs resolved, outputs reserved in the board folder and committed after it (or removed), a
   * scratch folder, the leftovers removed however it ends. No record is kept; `signal` is its cancel (the client going
   * away). Answers what the job's `result` would hold.
   */
  async runNow<K extends JobKind>(kind: K, params: JobKinds[K], signal: AbortSignal): Promise<JobResult<K>> {
    if (!this.handlers.has(kind)) throw new Error(`no handler for job kind ${kind}`);
    if (this.stopping) throw new ShuttingDown();
    return (await this.run(kind, newId('now_'), params, signal, () => undefined)).result as JobResult<K>;
  }

  /**
   * The one way a handler runs, as a job (`execute`) or now (`runNow`): the job context, the handler, the commit of
   * its output, and the removal of whatever output was not committed and of the scratch folder, whatever happens,
   * before it answers (whoever waits then finds the folder as it will stay).
   */
  private async run(
    kind: string,
    id: string,
    params: unknown,
    signal: AbortSignal,
    progress: (fraction: number) => void,
  ): Promise<{ url?: string; result?: unknown; elementId?: string }> {
    const handler = this.handlers.get(kind)!;
    const outputs: PendingOutput[] = [];
    let scratchDir: string | undefined;
    try {
      const inputs = await this.resolveInputs(kind, params);
      const input = (url: string) => {
        const found = inputs.get(url);
        if (found === undefined) throw new Error(`job ${id} did not declare the input ${url}`);
        if (found instanceof Error) throw found;
        return found;
      };
      const output = async (boardId: string, filename: string) => {
        const out = await this.requireFiles().outputs.reserve(boardId, filename);
        outputs.push(out);
        return out;
      };
      const scratch = async () => {
        scratchDir ??= path.join(this.requireEnv().scratchRoot, `job-${id}`);
        await fsp.mkdir(scratchDir, { recursive: true });
        return scratchDir;
      };
      const requireEnv = () => this.requireEnv();
      const outcome = await handler({
        id,
        params,
        signal,
        progress,
        input,
        output,
        scratch,
        get env() {
          return requireEnv();
        },
      });
      if (signal.aborted) throw signal.reason;
      if (!outcome.output) return { url: outcome.output_url, result: outcome.result };
      const committed = await this.commitOutput(kind, params, outcome.output);
      return { url: outcome.output_url ?? committed.url, result: committed.result, elementId: committed.elementId };
    } finally {
      // Whatever output was not committed is a leftover (failure, cancel, or a file the handler did not hand back).
      await Promise.all(outputs.map((out) => this.files?.outputs.discard(out)));
      if (scratchDir) await fsp.rm(scratchDir, { recursive: true, force: true });
    }
  }

  /** Resolves the media URLs the kind declares; a URL that fails keeps its error, for the handler to name. */
  private async resolveInputs(kind: string, params: unknown): Promise<Map<string, string | Error>> {
    const declare = this.kindOptions.get(kind)?.inputs as
      | ((params: unknown) => string[] | Promise<string[]>)
      | undefined;
    const inputs = new Map<string, string | Error>();
    if (!declare) return inputs;
    const files = this.requireFiles();
    for (const url of await declare(params)) {
      if (!inputs.has(url))
        inputs.set(
          url,
          await files.resolve(url).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err)))),
        );
    }
    return inputs;
  }

  private requireFiles(): JobFiles {
    if (!this.files)
      throw new Error('this job runner was built without files: it cannot resolve inputs or produce outputs');
    return this.files;
  }

  private requireEnv(): JobEnv & { scratchRoot: string } {
    if (!this.env) throw new Error('this job runner was built without a job environment');
    return this.env;
  }

  private finish(id: string, fields: Parameters<JobStore['update']>[1], update: JobUpdate = {}): void {
    this.store.update(id, { ...fields, finished_at: nowIso() });
    this.settle(id, update);
  }

  private settle(id: string, update: JobUpdate = {}): void {
    const job = this.emitUpdate(id, update);
    const list = this.waiters.get(id);
    this.waiters.delete(id);
    if (job) list?.forEach((resolve) => resolve(job));
  }

  private emitUpdate(id: string, update: JobUpdate = {}): JobRecord | undefined {
    const job = this.store.get(id);
    if (job) this.emit('update', job, update);
    return job;
  }
}

const CANCELLED = {
  status: 'cancelled',
  error: 'Cancelled',
  error_code: 'cancelled',
  error_kind: 'cancelled',
} as const;

const isFinished = (job: JobRecord) => ['complete', 'error', 'cancelled'].includes(job.status);

/** Seconds left at `fraction` done after `elapsed` seconds, once there is enough progress to tell. */
const etaOf = (elapsed: number, fraction: number) =>
  fraction > 0.01 ? Math.round(((elapsed * (1 - fraction)) / fraction) * 10) / 10 : null;
