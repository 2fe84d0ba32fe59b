import { ConfigError, integer } from '../config-values.js';

/** Sharing: the user's share worker (SHARE_WORKER_URL, SHARE_WORKER_TOKEN; both or neither) and the multipart part size. */
export interface SharingConfig {
  shareWorkerUrl: string | undefined;
  shareWorkerToken: string | undefined;
  /** Uploads larger than this use R2 multipart upload in parts of this size (SHARE_UPLOAD_PART_BYTES, 5 MiB..95 MB, default 64 MiB). */
  shareUploadPartBytes: number;
}

/** Sharing settings from the environment, validated with the rest of the config by loadConfig. */
export function loadSharingConfig(env: NodeJS.ProcessEnv): SharingConfig {
  const shareWorkerUrl = env.SHARE_WORKER_URL?.trim() || undefined;
  const shareWorkerToken = env.SHARE_WORKER_TOKEN || undefined;
  if (shareWorkerUrl !== undefined && !/^https?:\/\/[^/\s]+(\/[^\s]*)?$/i.test(shareWorkerUrl))
    throw new ConfigError(`SHARE_WORKER_URL must be an http(s) URL, got "${shareWorkerUrl}"`);
  if ((shareWorkerUrl === undefined) !== (shareWorkerToken === undefined))
    throw new ConfigError('SHARE_WORKER_URL and SHARE_WORKER_TOKEN are set together');
  if (shareWorkerToken !== undefined && shareWorkerToken.length < 16)
    throw new ConfigError('SHARE_WORKER_TOKEN must be at least 16 characters long');
  return {
    shareWorkerUrl,
    shareWorkerToken,
    shareUploadPartBytes: integer(env, 'SHARE_UPLOAD_PART_BYTES', 64 * 1024 * 1024, 5 * 1024 * 1024, 95_000_000),
  };
}
