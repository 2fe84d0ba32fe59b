import { ConfigError, integer } from '../config-values.js';
import type { QueueSettings } from './queue.js';

export interface JobsConfig {
  jobConcurrency: number;
  /** JOB_QUEUE: portable jobs go to this shared BullMQ queue, where render workers take them (docs/workers.md). */
  jobQueue: (QueueSettings & { localWorker: boolean }) | undefined;
}

/** A redis:// or rediss:// URL (Redis or Valkey), with host and optional port, password and database. */
const REDIS_URL = /^rediss?:\/\/[^\s/]+(\/\d+)?$/i;

export function loadJobsConfig(env: NodeJS.ProcessEnv, apiToken: string | undefined): JobsConfig {
  const jobConcurrency = integer(env, 'JOB_CONCURRENCY', 1, 1, 16);
  const url = (env.JOB_QUEUE ?? '').trim();
  if (!url) return { jobConcurrency, jobQueue: undefined };
  if (!REDIS_URL.test(url)) throw new ConfigError(`JOB_QUEUE must be a redis:// or rediss:// URL, got "${url}"`);
  if (!apiToken) {
    throw new ConfigError(
      'JOB_QUEUE is set but API_TOKEN is not: render workers on other machines fetch media and send results with ' +
        'API_TOKEN, so a shared queue needs one (at least 16 characters)',
    );
  }
  const name = (env.JOB_QUEUE_NAME ?? '').trim() || 'board-media-jobs';
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name))
    throw new ConfigError(`JOB_QUEUE_NAME may only hold letters, digits, _ . - (at most 64), got "${name}"`);
  const localWorker = (env.LOCAL_WORKER ?? '1').trim();
  if (localWorker !== '0' && localWorker !== '1')
    throw new ConfigError(`LOCAL_WORKER must be 0 or 1, got "${localWorker}"`);
  return {
    jobConcurrency,
    jobQueue: {
      url,
      name,
      localWorker: localWorker === '1',
      // BullMQ's defaults; tests shorten them to see a takeover in seconds.
      lockMs: integer(env, 'JOB_QUEUE_LOCK_MS', 30_000, 1_000, 600_000),
      stalledMs: integer(env, 'JOB_QUEUE_STALLED_MS', 30_000, 1_000, 600_000),
    },
  };
}
