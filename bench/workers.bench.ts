// Render workers benchmark (docs/workers.md): the shared queue's own overhead per job (a job that does nothing,
// in-process runner vs BullMQ on a real Redis), renders per minute with one and with two `board-media worker`
// processes on this machine (2 cores: the figure shows the overhead, not the scale), and the cost of a worker's input
// fetch for a 100 MB clip the first time and from its cache.
// Usage: npx tsx bench/workers.bench.ts [--jobs 200] [--renders 8]
import { randomBytes } from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sha256File } from '../src/files/content-hash.js';
import { InputCache } from '../src/workers/input-cache.js';
import { ServiceClient } from '../src/workers/service-client.js';
import { createTestContext } from '../test/helpers/context.js';
import { makeVideo, tempDir } from '../test/helpers/fixtures.js';
import { findRedisServer, REDIS_MISSING, spawnWorker, startRedis, type RedisServer } from '../test/helpers/redis.js';
import { eventually, startService, waitForJob } from '../test/helpers/service.js';

declare module '../src/jobs/kinds.js' {
  interface JobKinds {
    'bench.noop': Record<string, never>;
  }
}

const { values: opt } = parseArgs({
  options: { jobs: { type: 'string', default: '200' }, renders: { type: 'string', default: '8' } },
});
const JOBS = Number(opt.jobs);
const RENDERS = Number(opt.renders);
const TOKEN = 'bench-worker-token-0123456789';

async function noopOverhead(queue: string | undefined): Promise<number> {
  const t = await createTestContext(
    queue ? { JOB_QUEUE: queue, API_TOKEN: TOKEN, JOB_CONCURRENCY: '4' } : { JOB_CONCURRENCY: '4' },
  );
  try {
    t.ctx.jobs.define('bench.noop', async () => ({ result: null }), { portable: true });
    t.start();
    const started = performance.now();
    const ids = Array.from({ length: JOBS }, () => t.ctx.jobs.enqueue('bench.noop', {}).id);
    for (const id of ids) await t.ctx.jobs.wait(id);
    return (performance.now() - started) / JOBS;
  } finally {
    await t.close();
  }
}

async function rendersPerMinute(redis: RedisServer, workers: number, clip: string): Promise<number> {
  const s = await startService({ JOB_QUEUE: redis.url, API_TOKEN: TOKEN, LOCAL_WORKER: '0' });
  const procs = [];
  try {
    for (let i = 0; i < workers; i++) {
      const w = spawnWorker({
        service: s.baseUrl,
        token: TOKEN,
        queue: redis.url,
        dir: await tempDir('bms-bench-worker-'),
      });
      procs.push(w);
      await eventually(() => (w.output().includes('render worker started') ? true : undefined), 180_000, 'a worker');
    }
    const board = await s.createBoard();
    const up = await s.upload(board, clip, { addToBoard: true });
    const started = performance.now();
    const ids = [];
    for (let i = 0; i < RENDERS; i++) {
      const r = await s.api('POST', '/api/convert-video', {
        board_id: board,
        element_id: up.body.element.id,
        format: 'mp4',
        codec: 'h264',
        async: true,
      });
      ids.push(r.body.job_id as string);
    }
    for (const id of ids) {
      const done = await waitForJob(s, id, { timeoutMs: 600_000 });
      if (done.status !== 'complete') throw new Error(`render failed: ${JSON.stringify(done)}`);
    }
    return RENDERS / ((performance.now() - started) / 60_000);
  } finally {
    procs.forEach((w) => w.child.kill('SIGTERM'));
    await Promise.all(procs.map((w) => w.exited));
    await s.close();
  }
}

async function fetchCost(): Promise<{ first: number; cached: number; mbps: number }> {
  const s = await startService({ API_TOKEN: TOKEN });
  const dir = await tempDir('bms-bench-cache-');
  try {
    const board = await s.createBoard();
    const file = path.join(await s.service.ctx.media.boardDir(board), 'big.mp4');
    await fsp.writeFile(file, randomBytes(100 * 1024 * 1024));
    const input = {
      url: s.service.ctx.media.urlFor(board, 'big.mp4'),
      sha256: await sha256File(file),
      size: 100 * 1024 * 1024,
    };
    const cache = new InputCache(dir, new ServiceClient(s.baseUrl, TOKEN), 10 * 1024 ** 3);
    let t0 = performance.now();
    cache.release(await cache.acquire(input));
    const first = performance.now() - t0;
    t0 = performance.now();
    cache.release(await cache.acquire(input));
    const cached = performance.now() - t0;
    return { first, cached, mbps: 100 / (first / 1000) };
  } finally {
    await s.close();
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const bin = findRedisServer();
  const fetch = await fetchCost();
  console.log(
    `input fetch, 100 MB clip: first ${fetch.first.toFixed(0)} ms (${fetch.mbps.toFixed(0)} MB/s, hashed on the way), from cache ${fetch.cached.toFixed(2)} ms`,
  );
  if (!bin) {
    console.log(REDIS_MISSING);
    return;
  }
  const redis = await startRedis(bin);
  const clips = await tempDir('bms-bench-clips-');
  try {
    const local = await noopOverhead(undefined);
    const queued = await noopOverhead(redis.url);
    console.log(
      `no-op job, ${JOBS} jobs, 4 at once: in-process ${local.toFixed(2)} ms/job, BullMQ ${queued.toFixed(2)} ms/job (+${(queued - local).toFixed(2)} ms)`,
    );
    const clip = await makeVideo(path.join(clips, 'clip.mp4'), { duration: 4, width: 640, height: 360, tone: 440 });
    for (const n of [1, 2])
      console.log(
        `${n} worker${n > 1 ? 's' : ''}: ${(await rendersPerMinute(redis, n, clip)).toFixed(1)} renders/min (${RENDERS} convert-video renders of a 4 s 640x360 clip)`,
      );
  } finally {
    await redis.stop();
    await fsp.rm(clips, { recursive: true, force: true });
  }
}

await main();
