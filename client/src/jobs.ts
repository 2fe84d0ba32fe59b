import { BoardMediaError } from './errors.js';
import type { Connection } from './connection.js';
import { subscribeEvents } from './events.js';
import type { Job, LiveEvent } from './types.js';

export interface WaitOptions {
  /** The job as it progresses (status `queued` or `running`, `progress` 0..1, `eta_seconds`). */
  onProgress?: (job: Job) => void;
  /** Polling interval while the event stream is not open (an older service, a network failure). Default 2 s. */
  pollIntervalMs?: number;
  signal?: AbortSignal;
}

const FINAL = new Set(['complete', 'error', 'cancelled']);

const isJobEvent = (e: LiveEvent): e is Extract<LiveEvent, { data: { job: Job } }> => e.type.startsWith('job.');

/**
 * Waits for a job of any feature (the `job_id` of a 202 answer) to finish: resolves with its final view when it
 * completed, rejects with a BoardMediaError (the job's `error_code`, the job in `details.job`) when it failed or was
 * cancelled. Follows it on the event stream, reading GET /api/jobs/{id} once each time the stream opens (what
 * happened before it) and on `resync`; polls that endpoint while the stream is down or unavailable.
 */
export function waitForJob(conn: Connection, jobId: string, opts: WaitOptions = {}): Promise<Job> {
  const pollIntervalMs = opts.pollIntervalMs ?? 2000;
  return new Promise<Job>((resolve, reject) => {
    let settled = false;
    let open = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let polling = false;
    const stream = subscribeEvents(conn, {
      types: ['job.progress', 'job.completed', 'job.failed', 'job.cancelled'],
      onEvent: (e) => {
        if (isJobEvent(e) && e.data.job.id === jobId) seen(e.data.job);
      },
      onResync: () => void check(),
      onState: (state) => {
        open = state === 'open';
        clearTimeout(timer);
        if (open) void check();
        else if (state !== 'connecting') poll();
      },
    });
    const abort = () => finish(undefined, opts.signal?.reason);
    function finish(job: Job | undefined, error?: unknown) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stream.close();
      opts.signal?.removeEventListener('abort', abort);
      if (error !== undefined) reject(error);
      else if (job?.status === 'complete') resolve(job);
      else if (job)
        reject(
          new BoardMediaError(
            0,
            job.error_code ?? (job.status === 'cancelled' ? 'cancelled' : 'job_failed'),
            job.error ?? `The job ended with status ${job.status}`,
            { job },
          ),
        );
    }
    function seen(job: Job) {
      if (settled) return;
      if (FINAL.has(job.status)) finish(job);
      else opts.onProgress?.(job);
    }
    async function check() {
      try {
        const res = await conn.fetch(conn.url(`/api/jobs/${encodeURIComponent(jobId)}`), {
          headers: conn.headers(),
          signal: opts.signal ?? null,
        });
        if (res.ok) seen((await res.json()) as Job);
        // An unknown job (404) or a refused request will not change by asking again; a 5xx may.
        else if (res.status < 500) finish(undefined, await BoardMediaError.fromResponse(res));
      } catch {
        // The network: the stream reconnects, or the next poll asks again.
      }
    }
    function poll() {
      if (settled || open || polling) return;
      polling = true;
      void check().finally(() => {
        polling = false;
        if (!settled && !open) timer = setTimeout(poll, pollIntervalMs);
      });
    }
    if (opts.signal?.aborted) return abort();
    opts.signal?.addEventListener('abort', abort, { once: true });
  });
}
