import os from 'node:os';
import path from 'node:path';
import { isLoopbackHost } from './http/loopback.js';

/** Everything the service reads from its environment, validated once at start. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  apiToken: string | undefined;
  allowedOrigins: string[];
  maxUploadBytes: number;
  jobConcurrency: number;
  logLevel: string;
  /** Largest file POST /api/download fetches (DOWNLOAD_MAX_BYTES, default MAX_UPLOAD_BYTES). */
  downloadMaxBytes: number;
  /** Time limit of one download (DOWNLOAD_TIMEOUT_MS, default 10 minutes). */
  downloadTimeoutMs: number;
  /** Time limit of one HTML render (HTML_RENDER_TIMEOUT_SECONDS, default 600 s). */
  htmlRenderTimeoutMs: number;
  /** A sound player still running after this is killed (SOUND_PLAYER_TIMEOUT_MS, default 10 s). */
  soundPlayerTimeoutMs: number;
  /** A motion-editor render that prints nothing for this long is killed (MOTION_RENDER_STALL_SECONDS, default 60). */
  motionRenderStallSeconds: number;
  /** Generation providers and limits (docs/generation.md). */
  ai: AiConfig;
  /** Agent sessions (docs/agents.md). */
  agents: AgentsConfig;
  /** Sharing: the user's share worker (SHARE_WORKER_URL, SHARE_WORKER_TOKEN; both or neither) and the multipart part size. */
  shareWorkerUrl: string | undefined;
  shareWorkerToken: string | undefined;
  /** Uploads larger than this use R2 multipart upload in parts of this size (SHARE_UPLOAD_PART_BYTES, 5 MiB..95 MB, default 64 MiB). */
  shareUploadPartBytes: number;
  /** Raw environment, for the tools locator (FFMPEG_PATH, ...) and feature-specific keys. */
  env: NodeJS.ProcessEnv;
}

export class ConfigError extends Error {}

const GiB = 1024 ** 3;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** The OS's per-user data folder for the app (XDG on Linux, Application Support on macOS, AppData on Windows). */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  const home = os.homedir();
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'board-media');
  if (platform === 'win32') return path.join(env.APPDATA ?? path.join(home, 'AppData', 'Roaming'), 'board-media');
  return path.join(env.XDG_DATA_HOME ?? path.join(home, '.local', 'share'), 'board-media');
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** Reads and validates the configuration; throws ConfigError with a readable message. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const host = (env.HOST ?? '127.0.0.1').trim();
  const apiToken = env.API_TOKEN && env.API_TOKEN.length > 0 ? env.API_TOKEN : undefined;
  if (apiToken !== undefined && apiToken.length < 16) {
    throw new ConfigError('API_TOKEN must be at least 16 characters long');
  }
  if (!isLoopbackHost(host) && apiToken === undefined) {
    throw new ConfigError(
      `HOST=${host} is not a loopback address; binding to the network needs API_TOKEN to be set, ` +
        'otherwise any machine on the network could drive the service',
    );
  }
  const dataDir = path.resolve(env.DATA_DIR && env.DATA_DIR.length > 0 ? env.DATA_DIR : defaultDataDir(env));
  const allowedOrigins = (env.ALLOWED_ORIGINS ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o.length > 0);
  for (const origin of allowedOrigins) {
    if (origin !== 'null' && !/^[a-z][a-z0-9+.-]*:\/\/[^/\s]+$/i.test(origin)) {
      throw new ConfigError(`ALLOWED_ORIGINS entry "${origin}" is not an origin like https://app.example or null`);
    }
  }
  const logLevel = (env.LOG_LEVEL ?? 'info').trim() || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  const maxUploadBytes = integer(env, 'MAX_UPLOAD_BYTES', 4 * GiB, 1, Number.MAX_SAFE_INTEGER);
  const shareWorkerUrl = env.SHARE_WORKER_URL?.trim() || undefined;
  const shareWorkerToken = env.SHARE_WORKER_TOKEN || undefined;
  if (shareWorkerUrl !== undefined && !/^https?:\/\/[^/\s]+(\/[^\s]*)?$/i.test(shareWorkerUrl)) throw new ConfigError(`SHARE_WORKER_URL must be an http(s) URL, got "${shareWorkerUrl}"`);
  if ((shareWorkerUrl === undefined) !== (shareWorkerToken === undefined)) throw new ConfigError('SHARE_WORKER_URL and SHARE_WORKER_TOKEN are set together');
  if (shareWorkerToken !== undefined && shareWorkerToken.length < 16) throw new ConfigError('SHARE_WORKER_TOKEN must be at least 16 characters long');
  return {
    port: integer(env, 'PORT', 4100, 0, 65535),
    host,
    dataDir,
    apiToken,
    allowedOrigins,
    maxUploadBytes,
    jobConcurrency: integer(env, 'JOB_CONCURRENCY', 1, 1, 16),
    logLevel,
    downloadMaxBytes: integer(env, 'DOWNLOAD_MAX_BYTES', maxUploadBytes, 1, Number.MAX_SAFE_INTEGER),
    downloadTimeoutMs: integer(env, 'DOWNLOAD_TIMEOUT_MS', 10 * 60_000, 100, 24 * 3600_000),
    htmlRenderTimeoutMs: integer(env, 'HTML_RENDER_TIMEOUT_SECONDS', 600, 1, 24 * 3600) * 1000,
    soundPlayerTimeoutMs: integer(env, 'SOUND_PLAYER_TIMEOUT_MS', 10_000, 100, 600_000),
    motionRenderStallSeconds: integer(env, 'MOTION_RENDER_STALL_SECONDS', 60, 1, 24 * 3600),
    ai: loadAiConfig(env),
    agents: loadAgentsConfig(env),
    shareWorkerUrl,
    shareWorkerToken,
    shareUploadPartBytes: integer(env, 'SHARE_UPLOAD_PART_BYTES', 64 * 1024 * 1024, 5 * 1024 * 1024, 95_000_000),
    env,
  };
}

// --- generation (docs/generation.md) ---

/** Keys and base URLs of the generation providers as the environment sets them (runtime keys are added later). */
export interface AiProviderEnv {
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

function baseUrl(env: NodeJS.ProcessEnv, name: string, fallback: string): string;
function baseUrl(env: NodeJS.ProcessEnv, name: string, fallback: undefined): string | undefined;
function baseUrl(env: NodeJS.ProcessEnv, name: string, fallback: string | undefined): string | undefined {
  const raw = (env[name] ?? '').trim();
  if (!raw) return fallback;
  if (!/^https?:\/\/[^\s/]+/i.test(raw)) throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

const key = (env: NodeJS.ProcessEnv, name: string) => (env[name] ?? '').trim() || undefined;

function loadAiConfig(env: NodeJS.ProcessEnv): AiConfig {
  return {
    openai: { apiKey: key(env, 'OPENAI_API_KEY'), baseUrl: baseUrl(env, 'OPENAI_BASE_URL', 'https://api.openai.com/v1') },
    anthropic: { apiKey: key(env, 'ANTHROPIC_API_KEY'), baseUrl: baseUrl(env, 'ANTHROPIC_BASE_URL', 'https://api.anthropic.com/v1') },
    google: { apiKey: key(env, 'GOOGLE_GENERATIVE_AI_API_KEY'), baseUrl: baseUrl(env, 'GOOGLE_BASE_URL', 'https://generativelanguage.googleapis.com/v1beta') },
    replicate: { apiKey: key(env, 'REPLICATE_API_TOKEN'), baseUrl: baseUrl(env, 'REPLICATE_BASE_URL', 'https://api.replicate.com/v1') },
    fal: { apiKey: key(env, 'FAL_KEY'), baseUrl: baseUrl(env, 'FAL_QUEUE_URL', 'https://queue.fal.run') },
    openaiCompatible: { apiKey: key(env, 'OPENAI_COMPATIBLE_API_KEY'), baseUrl: baseUrl(env, 'OPENAI_COMPATIBLE_BASE_URL', undefined) },
    requestTimeoutMs: integer(env, 'AI_REQUEST_TIMEOUT_MS', 180_000, 100, 3600_000),
    jobTimeoutMs: integer(env, 'AI_JOB_TIMEOUT_SECONDS', 1800, 1, 24 * 3600) * 1000,
    pollIntervalMs: integer(env, 'AI_POLL_INTERVAL_MS', 2000, 10, 600_000),
    maxRetries: integer(env, 'AI_MAX_RETRIES', 2, 0, 10),
    // OpenAI's limit is 25 MB; the margin leaves room for the multipart envelope.
    transcribeMaxBytes: integer(env, 'AI_TRANSCRIBE_MAX_BYTES', 24 * 1024 * 1024, 4096, 1024 ** 3),
  };
}

// --- agents (docs/agents.md) ---

export interface AgentsConfig {
  /** A session without any call for this long expires and is freed (AGENT_SESSION_IDLE_SECONDS, default 3600). */
  sessionIdleMs: number;
}

function loadAgentsConfig(env: NodeJS.ProcessEnv): AgentsConfig {
  return { sessionIdleMs: integer(env, 'AGENT_SESSION_IDLE_SECONDS', 3600, 1, 7 * 24 * 3600) * 1000 };
}
