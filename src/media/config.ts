import { integer } from '../config-values.js';

export interface MediaConfig {
  /** Largest file POST /api/download fetches (DOWNLOAD_MAX_BYTES, default MAX_UPLOAD_BYTES). */
  downloadMaxBytes: number;
  /** Time limit of one download (DOWNLOAD_TIMEOUT_MS, default 10 minutes). */
  downloadTimeoutMs: number;
}

/** Media settings from the environment, validated with the rest of the config by loadConfig. */
export function loadMediaConfig(env: NodeJS.ProcessEnv, maxUploadBytes: number): MediaConfig {
  return {
    downloadMaxBytes: integer(env, 'DOWNLOAD_MAX_BYTES', maxUploadBytes, 1, Number.MAX_SAFE_INTEGER),
    downloadTimeoutMs: integer(env, 'DOWNLOAD_TIMEOUT_MS', 10 * 60_000, 100, 24 * 3600_000),
  };
}
