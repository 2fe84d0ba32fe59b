import { baseUrl, integer, key } from '../config-values.js';

/** Keys and base URLs of the generation providers as the environment sets them (runtime keys are added later). */
interface AiProviderEnv {
  apiKey: string | undefined;
  baseUrl: string;
}

export interface AiConfig {
  openai: AiProviderEnv;
  anthropic: AiProviderEnv;
  google: AiProviderEnv;
  replicate: AiProviderEnv;
  fal: AiProviderEnv;
  /** Set only by OPENAI_COMPATIBLE_BASE_URL: a local server (Ollama, LM Studio) that may need no key. */
  openaiCompatible: { apiKey: string | undefined; baseUrl: string | undefined };
  /** Time limit of one call to a provider that answers at once (AI_REQUEST_TIMEOUT_MS, default 180 s). */
  requestTimeoutMs: number;
  /** Overall time limit of a queued generation, polling included (AI_JOB_TIMEOUT_SECONDS, default 30 min). */
  jobTimeoutMs: number;
  /** First wait between two polls of a queued generation; it backs off to 10x (AI_POLL_INTERVAL_MS, default 2 s). */
  pollIntervalMs: number;
  /** Retries of a failed provider call (429, 5xx, network), honouring retry-after (AI_MAX_RETRIES, default 2). */
  maxRetries: number;
  /** Largest audio upload to the speech provider; longer audio is cut on silences (AI_TRANSCRIBE_MAX_BYTES, 24 MiB). */
  transcribeMaxBytes: number;
}

/** Generation settings from the environment, validated with the rest of the config by loadConfig. */
export function loadAiConfig(env: NodeJS.ProcessEnv): AiConfig {
  return {
    openai: {
      apiKey: key(env, 'OPENAI_API_KEY'),
      baseUrl: baseUrl(env, 'OPENAI_BASE_URL', 'https://api.openai.com/v1'),
    },
    anthropic: {
      apiKey: key(env, 'ANTHROPIC_API_KEY'),
      baseUrl: baseUrl(env, 'ANTHROPIC_BASE_URL', 'https://api.anthropic.com/v1'),
    },
    google: {
      apiKey: key(env, 'GOOGLE_GENERATIVE_AI_API_KEY'),
      baseUrl: baseUrl(env, 'GOOGLE_BASE_URL', 'https://generativelanguage.googleapis.com/v1beta'),
    },
    replicate: {
      apiKey: key(env, 'REPLICATE_API_TOKEN'),
      baseUrl: baseUrl(env, 'REPLICATE_BASE_URL', 'https://api.replicate.com/v1'),
    },
    fal: { apiKey: key(env, 'FAL_KEY'), baseUrl: baseUrl(env, 'FAL_QUEUE_URL', 'https://queue.fal.run') },
    openaiCompatible: {
      apiKey: key(env, 'OPENAI_COMPATIBLE_API_KEY'),
      baseUrl: baseUrl(env, 'OPENAI_COMPATIBLE_BASE_URL', undefined),
    },
    requestTimeoutMs: integer(env, 'AI_REQUEST_TIMEOUT_MS', 180_000, 100, 3600_000),
    jobTimeoutMs: integer(env, 'AI_JOB_TIMEOUT_SECONDS', 1800, 1, 24 * 3600) * 1000,
    pollIntervalMs: integer(env, 'AI_POLL_INTERVAL_MS', 2000, 10, 600_000),
    maxRetries: integer(env, 'AI_MAX_RETRIES', 2, 0, 10),
    // OpenAI's limit is 25 MB; the margin leaves room for the multipart envelope.
    transcribeMaxBytes: integer(env, 'AI_TRANSCRIBE_MAX_BYTES', 24 * 1024 * 1024, 4096, 1024 ** 3),
  };
}
