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
  /** Raw environment, for the tools locator (FFMPEG_PATH, ...) and feature-specific keys. */
  env: NodeJS.ProcessEnv;
}

export class ConfigError extends Error {}

const GiB = 1024 ** 3;

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
  return {
    port: integer(env, 'PORT', 4100, 0, 65535),
    host,
    dataDir,
    apiToken,
    allowedOrigins,
    maxUploadBytes: integer(env, 'MAX_UPLOAD_BYTES', 4 * GiB, 1, Number.MAX_SAFE_INTEGER),
    jobConcurrency: integer(env, 'JOB_CONCURRENCY', 1, 1, 16),
    logLevel: env.LOG_LEVEL ?? 'info',
    env,
  };
}
