import { EventEmitter } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import { Cancelled, DomainError, NotFound, ShuttingDown, type ErrorKind } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import type { Db } from '../db/database.js';
import type { BoardOutputs, CommittedOutput, OutputElement, PendingOutput } from '../boards/outputs.js';
import type { JobKind, JobKinds } from './kinds.js';
import { JobStore, type JobRecord } from './store.js';

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
}

export interface JobOutcome {
  output_url?: string;
  result?: unknown;
  /**
   * The file the job produced, still pending: the runner adds it to its board (unique name, element) and removes it
   * if the job failed or was cancelled. `result` then shapes the job's result from the committed file.
   */
  output?: {
    file: PendingOutput;
    element?: OutputElement;
    /** May be async: it runs here, on the service, after the commit (an HTML render files its side files then). */
    result?: (committed: CommittedOutput) => unknown;
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
}

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

/**
 * The one job runner: every long render in the service is a job. Jobs live in SQLite so clients can poll them
 * and a restart can account for them; at most `concurrency` run at once, the rest wait in FIFO order.
 * Handlers do their heavy work in child processes or worker threads and receive an AbortSignal for cancellation.
 */
export class JobRunner extends EventEmitter<{ update: [JobRecord] }> {
  private readonly store: JobStore;
  private readonly handlers = new Map<string, JobHandler<unknown>>();
  private readonly kindOptions = new Map<string, JobKindOptions<never>>();
  private readonly running = new Map<string, { controller: AbortController; kind: string }>();
  private readonly waiters = new Map<string, ((job: JobRecord) => void)[]>();
  private readonly queue: { id: string; kind: string }[] = [];
  private stopping = false;

  constructor(
    db: Db,
    private readonly concurrency: number,
    private readonly log: FastifyBaseLogger,
    private readonly files?: JobFiles,
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

  enqueue<K extends JobKind>(
    kind: K,
    params: JobKinds[K],
    opts: { boardId?: string; idPrefix?: string } = {},
  ): JobRecord<JobKinds[K]> {
    if (!this.handlers.has(kind)) throw new Error(`no handler for job kind ${kind}`);
    if (this.stopping) throw new ShuttingDown();
    const id = newId(opts.idPrefix ?? 'job_');
    this.store.insert({ id, kind, board_id: opts.boardId ?? null, params, created_at: nowIso() });
    this.queue.push({ id, kind });
    queueMicrotask(() => this.pump());
    return this.store.get(id)! as JobRecord<JobKinds[K]>;
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
    if (!job || (kinds && !kinds.includes(job.kind))) throw new NotFound(`Job ${id} not found`);
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
      this.finish(id, { status: 'cancelled', error: 'Cancelled', error_code: 'cancelled', error_kind: 'cancelled' });
    } else if (job.status === 'running') {
      this.running.get(id)?.controller.abort(new Cancelled());
    }
    return this.store.get(id)!;
  }

  /** Resolves once the job has finished (complete, error or cancelled); with `kind`, like `require`. */
  wait(id: string): Promise<JobRecord>;
  wait<K extends JobKind>(id: string, kind: K): Promise<JobRecord<JobKinds[K]>>;
  wait(id: string, kind?: JobKind): Promise<JobRecord> {
    const job = kind === undefined ? this.require(id) : this.require(id, kind);
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
    }
    for (const job of this.store.byStatus('queued')) {
      if (this.handlers.has(job.kind)) this.queue.push({ id: job.id, kind: job.kind });
      else
        this.store.update(job.id, {
          status: 'error',
          error: `No handler for job kind ${job.kind}`,
          error_code: 'unknown_kind',
          error_kind: 'internal',
          finished_at: nowIso(),
        });
    }
    this.pump();
  }

  /** Stops taking jobs, aborts the running ones and waits for them to settle. */
  async shutdown(): Promise<void> {
    this.stopping = true;
    this.queue.length = 0;
    const ids = [...this.running.keys()];
    for (const r of this.running.values()) r.controller.abort(new ShuttingDown('Interrupted by service shutdown'));
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
      const eta = p > 0.01 ? Math.round(((elapsed * (1 - p)) / p) * 10) / 10 : null;
      this.store.update(id, { progress: p, eta_seconds: eta });
      this.emitUpdate(id);
    };
    const outputs: PendingOutput[] = [];
    // Whatever output was not committed is a leftover (failure, cancel, or a file the handler did not hand back); it
    // goes before the job is reported finished, so whoever waits finds the folder as it will stay.
    const discardLeftovers = () => Promise.all(outputs.map((out) => this.files?.outputs.discard(out)));
    try {
      const inputs = await this.resolveInputs(job);
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
      const outcome = await handler({ id, params: job.params, signal: controller.signal, progress, input, output });
      if (controller.signal.aborted) throw controller.signal.reason;
      let { output_url: outputUrl, result } = outcome;
      if (outcome.output) {
        const committed = await this.requireFiles().outputs.commit(outcome.output.file, outcome.output.element);
        outputUrl ??= committed.url;
        result = outcome.output.result
          ? await outcome.output.result(committed)
          : (result ?? { element_id: committed.element.id, filename: committed.filename });
      }
      await discardLeftovers();
      this.finish(id, {
        status: 'complete',
        progress: 1,
        eta_seconds: 0,
        output_url: outputUrl ?? null,
        result: result ?? null,
      });
    } catch (err) {
      const reason: unknown = controller.signal.aborted ? controller.signal.reason : err;
      await discardLeftovers();
      if (reason instanceof ShuttingDown && this.kindOptions.get(job.kind)?.resumable) {
        // Runs again at the next start (recover); whoever waits for the shutdown is told it has stopped.
        this.store.update(id, { status: 'queued', eta_seconds: null });
        this.settle(id);
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
      this.running.delete(id);
      this.pump();
    }
  }

  /** Resolves the media URLs the kind declares; a URL that fails keeps its error, for the handler to name. */
  private async resolveInputs(job: JobRecord): Promise<Map<string, string | Error>> {
    const declare = this.kindOptions.get(job.kind)?.inputs as
      | ((params: unknown) => string[] | Promise<string[]>)
      | undefined;
    const inputs = new Map<string, string | Error>();
    if (!declare) return inputs;
    const files = this.requireFiles();
    for (const url of await declare(job.params)) {
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
