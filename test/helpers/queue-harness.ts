import { tempDir } from './fixtures.js';
import { spawnWorker, workerStarted, type RedisServer, type WorkerProcess } from './redis.js';
import { eventually, startService, type TestService } from './service.js';

export const WORKER_TOKEN = 'worker-test-token-0123456789';
// Short lock and stall check so a dead worker's job is taken over in seconds here (BullMQ's defaults are 30 s).
export const FAST_QUEUE = { JOB_QUEUE_LOCK_MS: '4000', JOB_QUEUE_STALLED_MS: '2000' };

/** Waits until worker `w` says it has done job `id` (it logs "job done" just after the service has the job complete). */
export const doneBy = (w: WorkerProcess, id: string) =>
  eventually(() => (w.done().includes(id) ? true : undefined), 10_000, `job ${id} done by the worker`);

export interface QueueHarness {
  /** Worker processes started so far (a test may add its own); `stopWorkers` kills them. */
  workers: WorkerProcess[];
  /** A worker process for `s`, once it says it has started; `dir` is its cache and scratch folder. */
  worker(s: TestService, env?: Record<string, string>): Promise<WorkerProcess & { dir: string }>;
  /** Workers of one test must not take the next test's jobs (they share the Redis). */
  stopWorkers(): Promise<void>;
  /** A service on a queue of its own (the caller stops its workers and closes it). */
  queued(extra: Record<string, string>): Promise<TestService>;
  /** A service on a queue of its own; its workers are stopped and it is closed whatever `fn` does. */
  withQueued(extra: Record<string, string>, fn: (s: TestService) => Promise<void>): Promise<void>;
}

/** Services on the shared queue of `redis()` (a real Redis) and render workers as their own processes. */
export function queueHarness(redis: () => RedisServer, prefix: string): QueueHarness {
  const workers: WorkerProcess[] = [];
  let queues = 0;
  const stopWorkers = async () => {
    for (const w of workers.splice(0)) {
      w.child.kill('SIGKILL');
      await w.exited;
    }
  };
  const queued = (extra: Record<string, string>) =>
    startService({
      JOB_QUEUE: redis().url,
      JOB_QUEUE_NAME: `${prefix}-${++queues}`,
      API_TOKEN: WORKER_TOKEN,
      JOB_CONCURRENCY: '1',
      ...FAST_QUEUE,
      ...extra,
    });
  return {
    workers,
    stopWorkers,
    async worker(s, env = {}) {
      const dir = await tempDir('bms-worker-');
      const w = spawnWorker({
        service: s.baseUrl,
        token: WORKER_TOKEN,
        queue: redis().url,
        dir,
        env: { ...FAST_QUEUE, ...env },
      });
      workers.push(w);
      await workerStarted(w);
      return { ...w, dir };
    },
    queued,
    async withQueued(extra, fn) {
      const s = await queued(extra);
      try {
        await fn(s);
      } finally {
        await stopWorkers();
        await s.close();
      }
    },
  };
}
