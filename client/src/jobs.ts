import { BoardMediaError } from './errors.js';
import type { Connection } from './connection.js';
import { subscribeEvents, type EventStream } from './events.js';
import type { CompletedJob, Job, JobKind, JobOf, LiveEvent, Queued } from './types.js';

export interface WaitOptions<K extends JobKind = JobKind> {
  /** The job as it progresses (status `queued` or `running`, `progress` 0..1, `eta_seconds`). */
  onProgress?: ((job: JobOf<K>) => void) | undefined;
  /** Polling interval while the event stream is not open (an older service, a network failure). Default 2 s. */
  pollIntervalMs?: number | undefined;
  signal?: AbortSignal | undefined;
  /**
   * An event stream of the app's (from `events()`) to follow the job on; it must carry the job events (no `types`
   * filter, or one with `job.progress`, `job.completed`, `job.failed` and `job.cancelled`). Without it, every wait of
   * the client shares one stream of its own, open while any wait is.
   */
  events?: EventStream | undefined;
}

/** A job to wait for: a 202 answer (its `kind` then types the result), or a job id. */
export type JobRef<K extends JobKind = JobKind> = Queued<K> | { job_id: string; kind: K } | string;

const FINAL = new Set(['complete', 'error', 'cancelled']);
const JOB_EVENTS = ['job.progress', 'job.completed', 'job.failed', 'job.cancelled'] as const;

const isJobEvent = (e: LiveEvent): e is Extract<LiveEvent, { data: { job: unknown } }> => e.type.startsWith('job.');

/**
 * The client's waits for jobs: one event stream for all of them (opened by the first wait, closed after the last),
 * and one GET /api/jobs/{id} at a time, so N waits take two connections, not N + 1 or 2N.
 */
export class JobWaits {
  private shared: EventStream | undefined;
  private users = 0;
  private reads: Promise<unknown> = Promise.resolve();

  constructor(private readonly conn: Connection) {}

  /**
   * Waits for a job of any feature (a 202 answer, or its `job_id`) to finish: resolves with its final view when it
   * completed, rejects with a BoardMediaError (the job's `error_code`, the job in `details`) when it failed or was
   * cancelled. Follows it on the event stream, reading GET /api/jobs/{id} each time the stream opens (what happened
   * before it) and on `resync`; polls that endpoint while the stream is down or unavailable.
   */
  wait<K extends JobKind = JobKind>(ref: JobRef<K>, opts: WaitOptions<K> = {}): Promise<CompletedJob<K>> {
    const jobId = typeof ref === 'string' ? ref : ref.job_id;
    const pollIntervalMs = opts.pollIntervalMs ?? 2000;
    const stream = opts.events ?? this.acquire();
    const release = opts.events ? () => undefined : () => this.release();
    return new Promise<CompletedJob<K>>((resolve, reject) => {
      let settled = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let polling = false;
      const unsubscribe = stream.subscribe({
        onEvent: (e) => {
          if (isJobEvent(e) && (e.data.job as Job).id === jobId) seen(e.data.job as Job);
        },
        onResync: () => void check(),
        onState: (state) => follow(state),
      });
      const abort = () => finish(undefined, opts.signal?.reason);
      function finish(job: Job | undefined, error?: unknown) {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        unsubscribe();
        release();
        opts.signal?.removeEventListener('abort', abort);
        if (error !== undefined) reject(error);
        else if (job?.status === 'complete') resolve(job as CompletedJob<K>);
        else if (job)
          reject(
            new BoardMediaError(
              0,
              job.error_code ?? (job.status === 'cancelled' ? 'cancelled' : 'job_failed'),
              job.error ?? `The job ended with status ${job.status}`,
              [{ field: 'job', message: `${job.kind} ${job.id} ended with status ${job.status}` }],
              job,
            ),
          );
      }
      function seen(job: Job) {
        if (settled) return;
        if (FINAL.has(job.status)) finish(job);
        else opts.onProgress?.(job as JobOf<K>);
      }
      const check = () => this.read(jobId, opts.signal, seen, (err) => finish(undefined, err));
      function follow(state: string) {
        clearTimeout(timer);
        if (state === 'open') void check();
        else if (state !== 'connecting') poll();
      }
      function poll() {
        if (settled || stream.state === 'open' || polling) return;
        polling = true;
        void check().finally(() => {
          polling = false;
          if (!settled && stream.state !== 'open') timer = setTimeout(poll, pollIntervalMs);
        });
      }
      if (opts.signal?.aborted) return abort();
      opts.signal?.addEventListener('abort', abort, { once: true });
      follow(stream.state);
    });
  }

  /** GET /api/jobs/{id}, one at a time for all waits (a stream opening checks every wait at once). */
  private read(
    jobId: string,
    signal: AbortSignal | undefined,
    seen: (job: Job) => void,
    fail: (err: BoardMediaError) => void,
  ): Promise<void> {
    const next = this.reads.then(async () => {
      try {
        const res = await this.conn.fetch(this.conn.url(`/api/jobs/${encodeURIComponent(jobId)}`), {
          headers: this.conn.headers(),
          signal: signal ?? null,
        });
        if (res.ok) seen((await res.json()) as Job);
        // An unknown job (404) or a refused request will not change by asking again; a 5xx may.
        else if (res.status < 500) fail(await BoardMediaError.fromResponse(res));
        else await res.body?.cancel();
      } catch {
        // The network: the stream reconnects, or the next poll asks again.
      }
    });
    this.reads = next;
    return next;
  }

  private acquire(): EventStream {
    this.users++;
    this.shared ??= subscribeEvents(this.conn, { types: [...JOB_EVENTS] });
    return this.shared;
  }

  private release() {
    if (--this.users > 0) return;
    this.shared?.close();
    this.shared = undefined;
  }
}
