import { setTimeout as sleep } from 'node:timers/promises';
import { Cancelled, DomainError, Internal, TimedOut, Unprocessable, UpstreamFailed } from '../errors.js';
import { BoardOutputs } from '../boards/outputs.js';
import { filenameFromTitle } from '../files/names.js';
import type { JobContext, JobOutcome } from '../jobs/runner.js';
import { isJobOf } from '../jobs/kinds.js';
import type { JobRecord } from '../jobs/store.js';
import { newMediaResult } from '../media/new-element.js';
import { findEntry, type CatalogueEntry } from './catalogue.js';
import type { GenerationContext } from './context.js';
import { mapProviderError } from './errors.js';
import { fetchToTemp } from './fetch-file.js';
import { generationData, POLL_JOB, stemFromPrompt, type PollParams } from './generate.js';
import { queueClient } from './queue-clients/index.js';
import type { QueueState } from './queue-clients/types.js';
import type { ProviderSettings } from './providers.js';

/** Poll jobs mostly wait on the network: they run in their own lane, this many at once, beside renders. */
const POLL_CONCURRENCY = 64;
/** The wait between polls grows by this factor up to MAX_BACKOFF times the configured interval. */
const BACKOFF = 1.5;
const MAX_BACKOFF = 10;
/** Consecutive failed polls (5xx, network) tolerated before the generation fails. */
const MAX_POLL_FAILURES = 8;
/** A provider's cancel call gets this long; the job is cancelled on our side either way. */
const CANCEL_TIMEOUT_MS = 10_000;

/** Without the provider's own progress: queued 5 %, then a curve that nears 90 % after a few minutes. */
function estimate(state: QueueState, startedMs: number): number {
  if (state.progress !== undefined) return 0.05 + state.progress * 0.85;
  if (state.status === 'queued') return 0.05;
  return 0.1 + 0.8 * (1 - Math.exp(-(Date.now() - startedMs) / 90_000));
}

function entryOf(model: string): CatalogueEntry {
  const entry = findEntry(model);
  if (!entry) throw new Internal('unknown_model', `Model ${model} is no longer in the catalogue`);
  return entry;
}

/**
 * The `generation.poll` job: polls the provider's job on our schedule (backing off, waiting out rate limits, within
 * AI_JOB_TIMEOUT_SECONDS of the request), then downloads the result into the board and adds the element.
 * Resumable: after a restart the same params poll the same provider id again.
 */
async function pollGeneration(g: GenerationContext, job: JobContext<PollParams>): Promise<JobOutcome> {
  const p = job.params;
  const history = g.history.get(p.history_id);
  if (!history) throw new Internal('history_missing', `History entry ${p.history_id} is gone`);
  const entry = entryOf(p.model);
  const client = queueClient(entry.api);
  const deadline = Date.parse(history.created_at) + g.config.ai.jobTimeoutMs;
  const started = Date.now();
  const interval = g.config.ai.pollIntervalMs;
  let wait = interval;
  let failures = 0;
  g.history.update(history.id, { status: 'running' });
  try {
    for (;;) {
      await sleep(Math.max(0, Math.min(wait, deadline - Date.now())), undefined, { signal: job.signal });
      if (Date.now() >= deadline) {
        await cancelAtProvider(g, p).catch(() => undefined);
        throw new TimedOut(
          `The ${entry.provider} job did not finish within ${g.config.ai.jobTimeoutMs / 1000} s`,
          'provider_timeout',
          { provider: entry.provider },
        );
      }
      const settings = g.providers.require(entry.provider, `Generation ${history.id}`);
      let state: QueueState;
      const timeout = AbortSignal.timeout(g.config.ai.requestTimeoutMs);
      try {
        state = await client.poll(settings, entry, p.provider_job_id, AbortSignal.any([job.signal, timeout]));
        failures = 0;
      } catch (err) {
        if (job.signal.aborted) throw job.signal.reason;
        const e = mapProviderError(err, entry.provider, timeout);
        const limited = e.kind === 'rate_limited';
        const transient =
          limited || ((e.kind === 'upstream' || e.kind === 'timed_out') && e.code !== 'provider_auth_failed');
        if (!transient || ++failures > MAX_POLL_FAILURES) throw e;
        const retryAfter = (e.details as { retry_after?: number } | undefined)?.retry_after;
        wait =
          limited && retryAfter !== undefined
            ? Math.max(retryAfter * 1000, interval)
            : Math.min(wait * 2, interval * MAX_BACKOFF);
        g.log.warn(
          { job: job.id, provider: entry.provider, code: e.code, wait_ms: wait },
          'polling the provider failed, trying again',
        );
        continue;
      }
      if (state.status === 'succeeded') return await deliver(g, job, entry, settings, state);
      if (state.status === 'canceled') throw new Cancelled(`The ${entry.provider} job was cancelled`);
      if (state.status === 'failed') {
        if (state.refused)
          throw new Unprocessable(
            'content_refused',
            `The ${entry.provider} provider refused the content: ${state.refused}`,
            { provider: entry.provider, reason: state.refused },
          );
        throw new UpstreamFailed(
          'provider_failed',
          `The ${entry.provider} job failed: ${state.error ?? 'no reason given'}`,
          { provider: entry.provider },
        );
      }
      job.progress(estimate(state, started));
      wait = Math.min(wait * BACKOFF, interval * MAX_BACKOFF);
    }
  } catch (err) {
    const reason = job.signal.aborted ? job.signal.reason : err;
    // Shutdown: the job is queued again and resumes polling at the next start; nothing to record.
    if (reason instanceof DomainError && reason.code === 'shutting_down') throw reason;
    const e = reason instanceof DomainError ? reason : mapProviderError(reason, entry.provider);
    g.history.finish(history.id, {
      status: e.code === 'cancelled' ? 'cancelled' : 'error',
      error: e.message,
      error_code: e.code,
    });
    throw e;
  }
}

/** Downloads the provider's file into the board (temp file, then a unique name) and adds the element. */
async function deliver(
  g: GenerationContext,
  job: JobContext<PollParams>,
  entry: CatalogueEntry,
  settings: ProviderSettings,
  state: QueueState,
): Promise<JobOutcome> {
  job.progress(0.95);
  const history = g.history.get(job.params.history_id)!;
  const dir = await g.media.boardDir(job.params.board_id);
  const client = queueClient(entry.api);
  const fetched = await fetchToTemp(
    g.outbound,
    state.outputUrl!,
    dir,
    { maxBytes: g.config.downloadMaxBytes, timeoutMs: g.config.downloadTimeoutMs },
    { signal: job.signal, auth: client.downloadAuth?.(settings) },
  );
  const name = filenameFromTitle(stemFromPrompt(history.prompt), 'generated', fetched.type.ext);
  const outputs = new BoardOutputs(g.media, g.boards);
  const made = newMediaResult(
    await outputs.commit(await outputs.adopt(job.params.board_id, fetched.temp, name), {
      data: generationData(history, { seed: state.seed }),
    }),
  );
  g.history.finish(history.id, { status: 'complete', element_id: made.element.id });
  const element = { id: made.element.id, type: made.element.type, url: made.url };
  return { output_url: made.url, result: { element, history_entry_id: history.id } };
}

/** Asks the provider to stop its job (best effort, bounded); true when it accepted. */
async function cancelAtProvider(g: GenerationContext, p: PollParams): Promise<boolean> {
  const entry = entryOf(p.model);
  const settings = g.providers.settings(entry.provider);
  if (!settings) return false;
  try {
    await queueClient(entry.api).cancel(settings, entry, p.provider_job_id, AbortSignal.timeout(CANCEL_TIMEOUT_MS));
    return true;
  } catch (err) {
    g.log.warn(
      { provider: entry.provider, code: mapProviderError(err, entry.provider).code },
      'the provider did not accept the cancel',
    );
    return false;
  }
}

/**
 * Defines the poll job and makes every cancel of one (ours or the generic POST /api/jobs/{id}/cancel, queued or
 * running) reach the provider. Returns the pending provider cancels by job id, for the cancel route to await.
 */
export function definePollJob(g: GenerationContext): Map<string, Promise<boolean>> {
  const cancels = new Map<string, Promise<boolean>>();
  g.jobs.define(POLL_JOB, (job) => pollGeneration(g, job), { concurrency: POLL_CONCURRENCY, resumable: true });
  g.jobs.on('update', (job: JobRecord) => {
    if (!isJobOf(job, POLL_JOB) || job.status !== 'cancelled' || cancels.has(job.id)) return;
    const params = job.params;
    g.history.finish(params.history_id, { status: 'cancelled', error: 'Cancelled', error_code: 'cancelled' });
    const pending = cancelAtProvider(g, params);
    cancels.set(job.id, pending);
    void pending.finally(() => setTimeout(() => cancels.delete(job.id), 60_000).unref());
  });
  return cancels;
}
