import os from 'node:os';
import path from 'node:path';
import { loadAgentsConfig, type AgentsConfig } from './agents/config.js';
import { ConfigError, integer } from './config-values.js';
import { loadEventsConfig, type EventsConfig } from './events/config.js';
import { loadAiConfig, type AiConfig } from './generation/config.js';
import { loadHtmlConfig, type HtmlConfig } from './html/config.js';
import { isLoopbackHost } from './http/loopback.js';
import { loadJobsConfig, type JobsConfig } from './jobs/config.js';
import { loadMediaConfig, type MediaConfig } from './media/config.js';
import { loadMotionConfig, type MotionConfig } from './motion/config.js';
import { loadSharingConfig, type SharingConfig } from './sharing/config.js';
import { loadSoundsConfig, type SoundsConfig } from './sounds/config.js';

export { ConfigError };

/** Everything the service reads from its environment, validated once at start; each feature owns its part. */
export interface Config extends JobsConfig, MediaConfig, HtmlConfig, SoundsConfig, MotionConfig, SharingConfig {
  port: number;
  host: string;
  dataDir: string;
  apiToken: string | undefined;
  allowedOrigins: string[];
  maxUploadBytes: number;
  logLevel: string;
  /** Generation providers and limits (docs/generation.md). */
  ai: AiConfig;
  /** Agent sessions (docs/agents.md). */
  agents: AgentsConfig;
  /** The live event stream (docs/events.md). */
  events: EventsConfig;
  /** Raw environment, for the tools locator (FFMPEG_PATH, ...) and feature-specific keys. */
  env: NodeJS.ProcessEnv;
}

const GiB = 1024 ** 3;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** The OS's per-user data folder for the app (XDG on Linux, Application Support on macOS, AppData on Windows). */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  const home = os.homedir();
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'board-media');
  if (platform === 'win32') return path.join(env.APPDATA ?? path.join(home, 'AppData', 'Roaming'), 'board-media');
  return path.join(env.XDG_DATA_HOME ?? path.join(home, '.local', 'share'), 'board-media');
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
  if (!LOG_LEVELS.includes(logLevel))
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  const maxUploadBytes = integer(env, 'MAX_UPLOAD_BYTES', 4 * GiB, 1, Number.MAX_SAFE_INTEGER);
  return {
    port: integer(env, 'PORT', 4100, 0, 65535),
    host,
    dataDir,
    apiToken,
    allowedOrigins,
    maxUploadBytes,
    ...loadJobsConfig(env, apiToken),
    logLevel,
    ...loadMediaConfig(env, maxUploadBytes),
    ...loadHtmlConfig(env),
    ...loadSoundsConfig(env),
    ...loadMotionConfig(env),
    ai: loadAiConfig(env),
    agents: loadAgentsConfig(env),
    events: loadEventsConfig(env),
    ...loadSharingConfig(env),
    env,
  };
}
