import type { App, AppContext } from '../context.js';
import type { JobRecord } from '../jobs/store.js';
import { asPlainJson, errorResponses } from '../http/schemas.js';
import { jobViewAs } from '../jobs/routes.js';
import type { ErrorCode } from '../http/error-codes.js';
import { abortOnDisconnect } from '../http/client-abort.js';
import { createGenerationContext, type GenerationContext } from './context.js';
import { enhancePrompt } from './enhance.js';
import { generate, POLL_JOB, type GeneratedElement, type PollParams } from './generate.js';
import { listModels } from './models.js';
import { definePollJob } from './poll-job.js';
import { transcribe } from './transcribe.js';
import {
  AiJob,
  EnhanceAnswer,
  EnhanceBody,
  GenerateAnswer,
  GenerateBody,
  HistoryList,
  HistoryQuery,
  JobParam,
  ModelList,
  ProviderList,
  ProviderParam,
  ProviderPut,
  ProviderView,
  providerErrors,
  TranscribeAnswer,
  TranscribeBody,
} from './schemas.js';

/** GET /api/ai/jobs/{job_id}: the job's status with the element once it is on the board. */
function aiJobView(g: GenerationContext, job: JobRecord<PollParams>) {
  const historyId = job.params.history_id;
  const history = g.history.get(historyId);
  const result = job.result as { element?: GeneratedElement } | null;
  return {
    ...jobViewAs(AiJob, job),
    job_id: job.id,
    ...(result?.element ? { element: result.element } : {}),
    // The provider's code, kept in the history entry, says more than the job's own (`provider_failed`).
    error_code: ((job.status !== 'complete' ? history?.error_code : undefined) ?? job.error_code) as ErrorCode | null,
    history_entry_id: historyId,
  };
}

/** Generation: providers and their keys, the model catalogue, image/video generation, enhancement, transcription. */
export const registerGeneration = (app: App, ctx: AppContext): GenerationContext => {
  const g = createGenerationContext(ctx);
  const tags = ['generation'];
  g.history.closeInterrupted();
  const providerCancels = definePollJob(g);
  // The AI SDK prints its warnings with console.warn, outside the service's JSON log; callers log them instead.
  (globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS ??= false;

  app.get(
    '/api/ai/providers',
    {
      schema: {
        tags,
        summary: "Each provider: configured or not, where its key comes from, the key's last 4 characters, base URL",
        response: { 200: ProviderList },
      },
    },
    async () => ({ providers: g.providers.list() }),
  );
  app.put(
    '/api/ai/providers/:provider',
    {
      schema: {
        tags,
        summary: "Set a provider's key and/or base URL at run time (stored in DATA_DIR, readable by the user only)",
        params: ProviderParam,
        body: ProviderPut,
        response: { 200: ProviderView, ...errorResponses },
      },
    },
    async (req) => g.providers.set(req.params.provider, req.body),
  );
  app.delete(
    '/api/ai/providers/:provider',
    {
      schema: {
        tags,
        summary: "Forget the run-time key and base URL; the environment's apply again",
        params: ProviderParam,
        response: { 200: ProviderView, ...errorResponses },
      },
    },
    async (req) => g.providers.remove(req.params.provider),
  );
  app.get(
    '/api/ai/models',
    { schema: { tags, summary: 'Models of the configured providers, by kind', response: { 200: ModelList } } },
    async () => listModels(g),
  );

  app.post(
    '/api/ai/generate',
    {
      schema: {
        tags,
        summary:
          'Generate an image or video onto a board: at once (`status: complete`, the element) or queued (`status: queued`, a job to poll)',
        body: GenerateBody,
        response: { 200: GenerateAnswer, ...providerErrors },
      },
    },
    async (req, reply) => generate(g, req.body, abortOnDisconnect(reply)),
  );

  app.get(
    '/api/ai/jobs/:job_id',
    {
      schema: {
        tags,
        summary: 'Poll a queued generation',
        params: JobParam,
        response: { 200: AiJob, ...errorResponses },
      },
      ...asPlainJson,
    },
    async (req) => aiJobView(g, ctx.jobs.require(req.params.job_id, POLL_JOB)),
  );

  app.post(
    '/api/ai/jobs/:job_id/cancel',
    {
      schema: {
        tags,
        summary:
          'Cancel a queued generation here and at the provider (the generic POST /api/jobs/{job_id}/cancel does the same)',
        params: JobParam,
        response: { 200: AiJob, ...errorResponses },
      },
      ...asPlainJson,
    },
    async (req) => {
      ctx.jobs.cancel(ctx.jobs.require(req.params.job_id, POLL_JOB).id);
      // A running poll stops at once (its waits and calls take the abort signal); then the provider is told.
      const job = await ctx.jobs.wait(req.params.job_id, POLL_JOB);
      const pending = providerCancels.get(job.id);
      return { ...aiJobView(g, job), ...(pending ? { provider_cancelled: await pending } : {}) };
    },
  );

  app.get(
    '/api/ai/history',
    {
      schema: {
        tags,
        summary: 'Generation requests, newest first (`board_id` filters)',
        querystring: HistoryQuery,
        response: { 200: HistoryList },
      },
    },
    async (req) => ({ entries: g.history.list({ board_id: req.query.board_id, limit: req.query.limit ?? 100 }) }),
  );

  app.post(
    '/api/ai/prompt-enhancer/analyze',
    {
      schema: {
        tags,
        summary: 'Rewrite a prompt with a chat model, looking at a reference image (a board file or an http(s) URL)',
        body: EnhanceBody,
        response: { 200: EnhanceAnswer, ...providerErrors },
      },
    },
    async (req, reply) => enhancePrompt(g, req.body, abortOnDisconnect(reply)),
  );

  app.post(
    '/api/ai/transcribe',
    {
      schema: {
        tags,
        summary: 'Transcribe an audio or video element (kept as its data.transcript); long audio is cut on silences',
        body: TranscribeBody,
        response: { 200: TranscribeAnswer, ...providerErrors },
      },
    },
    async (req, reply) => transcribe(g, req.body, abortOnDisconnect(reply)),
  );
  return g;
};
