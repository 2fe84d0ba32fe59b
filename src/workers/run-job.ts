import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { PendingOutput } from '../boards/outputs.js';
import { Cancelled, DomainError, ShuttingDown, type ErrorKind } from '../errors.js';
import { sanitizeFilename } from '../files/names.js';
import { finalFailure } from '../jobs/queue.js';
import type { JobContext, JobEnv, JobOutcome } from '../jobs/runner.js';
import type { CachedInput, InputCache } from './input-cache.js';
import type { ServiceClient } from './service-client.js';
import { PORTABLE_HANDLERS } from './handlers.js';

/** What the service tells a worker about a job (GET /api/workers/jobs/{id}). */
interface WorkerJob {
  id: string;
  kind: string;
  board_id: string | null;
  status: string;
  cancelled: boolean;
  params: unknown;
  inputs: { url: string; sha256?: string; size?: number; error?: { kind: string; code: string; message: string } }[];
}

export interface WorkerRuntime {
  service: ServiceClient;
  cache: InputCache;
  /** What every job gets; its `media` is made per job (see `mediaOfJob`). */
  env: Omit<JobEnv, 'media'>;
  /** The worker's own folder: job scratch folders live under it. */
  dir: string;
  log: FastifyBaseLogger;
}

/** Failures a bad project makes: trying again gives the same answer. */
const FINAL_KINDS: ErrorKind[] = [
  'invalid_input',
  'not_found',
  'conflict',
  'too_large',
  'unsupported',
  'unprocessable',
  'timed_out',
  'cancelled',
];

const PROGRESS_INTERVAL_MS = 250;

/**
 * Runs one job taken from the queue on this machine: asks the service for its params and inputs, fetches the inputs
 * (cached by content hash), runs the kind's handler, uploads the output and completes the job, which the service
 * commits once. A job already finished (done by a worker that died after handing it back) is left as it is.
 */
export async function runQueuedJob(
  rt: WorkerRuntime,
  ref: { id: string; lastAttempt: boolean; progress(f: number): Promise<void> },
  signal: AbortSignal,
): Promise<void> {
  const info = await rt.service.json<WorkerJob>('GET', `/api/workers/jobs/${encodeURIComponent(ref.id)}`);
  if (info.status !== 'queued' && info.status !== 'running') return;
  const report = (err: DomainError) =>
    rt.service.json('POST', `/api/workers/jobs/${encodeURIComponent(ref.id)}/fail`, {
      kind: err.kind,
      code: err.code,
      message: err.message,
      ...(err.details !== undefined ? { details: err.details } : {}),
    });
  if (info.cancelled) {
    await report(new Cancelled());
    return;
  }
  const scratchDir = path.join(rt.dir, 'jobs', ref.id);
  const held: string[] = [];
  try {
    const handler = PORTABLE_HANDLERS[info.kind];
    if (!handler)
      // Another worker (an updated one) may run it: tried again, not failed for good.
      throw new DomainError('unavailable', 'unknown_kind', `This worker cannot run ${info.kind} jobs (update it)`);
    await fsp.rm(scratchDir, { recursive: true, force: true });
    await fsp.mkdir(scratchDir, { recursive: true });
    const inputs = new Map<string, string | DomainError>();
    for (const input of info.inputs) {
      if (input.error || !input.sha256 || input.size === undefined) {
        const e = input.error ?? { kind: 'internal', code: 'internal', message: 'no hash' };
        inputs.set(input.url, new DomainError(e.kind as ErrorKind, e.code, e.message));
        continue;
      }
      const file = await rt.cache.acquire({ url: input.url, sha256: input.sha256, size: input.size }, signal);
      held.push(file);
      inputs.set(input.url, file);
    }
    const env = { ...rt.env, media: mediaOfJob(rt, ref.id, held, signal) };
    const outcome = await runHandler(env, handler, info, scratchDir, inputs, ref, signal);
    if (signal.aborted) throw signal.reason;
    await handBack(rt, ref.id, outcome, signal);
  } catch (caught) {
    const err: unknown = signal.aborted ? stopReason(signal) : caught;
    if (err instanceof ShuttingDown) throw err; // another worker takes it
    const domain = err instanceof DomainError ? err : undefined;
    if (domain && (FINAL_KINDS.includes(domain.kind) || ref.lastAttempt)) {
      await report(domain);
      throw finalFailure(domain.message);
    }
    if (ref.lastAttempt) {
      const message = err instanceof Error ? err.message : String(err);
      rt.log.error({ err, job: ref.id }, 'job failed');
      await report(new DomainError('internal', 'worker_failed', message));
      throw finalFailure(message);
    }
    throw err;
  } finally {
    for (const file of held) rt.cache.release(file);
    await fsp.rm(scratchDir, { recursive: true, force: true });
  }
}

/** The queue aborts with the reason it was given: a user's cancel, or this worker stopping. */
const stopReason = (signal: AbortSignal) =>
  signal.reason === 'shutdown' ? new ShuttingDown('The worker is stopping') : new Cancelled();

/**
 * The job's `media`: a /media URL its page reads is resolved by the service (all containment is its own: this only
 * asks), fetched into the input cache by content hash and held until the job ends. Each URL once per job.
 */
function mediaOfJob(rt: WorkerRuntime, id: string, held: string[], signal: AbortSignal): JobEnv['media'] {
  const known = new Map<string, Promise<string>>();
  const fetchOne = async (url: string) => {
    const query = new URLSearchParams({ url });
    const input = await rt.service.json<CachedInput>(
      'GET',
      `/api/workers/jobs/${encodeURIComponent(id)}/media?${query}`,
      undefined,
      signal,
    );
    const file = await rt.cache.acquire(input, signal);
    held.push(file);
    return file;
  };
  // The job's own signal bounds every fetch, so none ends after the job released what it held.
  return (url) => {
    let file = known.get(url);
    if (!file) {
      file = fetchOne(url);
      // A failed look-up (a cancel, the service away) is asked again next time.
      file.catch(() => known.delete(url));
      known.set(url, file);
    }
    return file;
  };
}

async function runHandler(
  env: JobEnv,
  handler: (job: JobContext<never>) => Promise<JobOutcome>,
  info: WorkerJob,
  scratchDir: string,
  inputs: Map<string, string | DomainError>,
  ref: { progress(f: number): Promise<void> },
  signal: AbortSignal,
): Promise<JobOutcome> {
  let last = 0;
  let outputs = 0;
  const work = path.join(scratchDir, 'work');
  const job: JobContext<unknown> = {
    id: info.id,
    params: info.params,
    signal,
    env,
    progress(fraction) {
      const now = Date.now();
      if (!Number.isFinite(fraction) || now - last < PROGRESS_INTERVAL_MS) return;
      last = now;
      ref.progress(Math.max(0, Math.min(0.999, fraction))).catch(() => undefined);
    },
    input(url) {
      const found = inputs.get(url);
      if (found === undefined) throw new Error(`job ${info.id} did not declare the input ${url}`);
      if (found instanceof Error) throw found;
      return found;
    },
    async output(boardId, filename): Promise<PendingOutput> {
      const name = sanitizeFilename(filename, 'media');
      return { boardId, name, temp: path.join(scratchDir, `output-${++outputs}-${name}`) };
    },
    async scratch() {
      await fsp.mkdir(work, { recursive: true });
      return work;
    },
  };
  return handler(job as JobContext<never>);
}

/** Uploads the output (if any) with its side files and completes the job; the service commits it into the board once. */
async function handBack(rt: WorkerRuntime, id: string, outcome: JobOutcome, signal: AbortSignal): Promise<void> {
  const base = `/api/workers/jobs/${encodeURIComponent(id)}`;
  if (!outcome.output) {
    await rt.service.json('POST', `${base}/complete`, { output_url: outcome.output_url, result: outcome.result });
    return;
  }
  const upload = async (file: PendingOutput) => {
    const query = new URLSearchParams({ board_id: file.boardId, name: file.name });
    const res = await rt.service.request('PUT', `${base}/output?${query}`, {
      body: fs.createReadStream(file.temp),
      signal,
    });
    return ((await res.json()) as { upload_id: string }).upload_id;
  };
  const { file, element, data, sides = {} } = outcome.output;
  const upload_id = await upload(file);
  const sideIds: Record<string, string> = {};
  for (const [name, side] of Object.entries(sides)) sideIds[name] = await upload(side);
  await rt.service.json('POST', `${base}/complete`, {
    upload_id,
    ...(element !== undefined ? { element } : {}),
    ...(data ? { data } : {}),
    ...(Object.keys(sideIds).length ? { sides: sideIds } : {}),
  });
}
