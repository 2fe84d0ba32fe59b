import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { PORTABLE_HANDLERS } from '../../src/workers/handlers.js';
import { makeVideo, tempDir } from '../helpers/fixtures.js';
import { eventually, startService, waitForJob, type TestService } from '../helpers/service.js';
import { FAST_QUEUE as FAST, queueHarness, WORKER_TOKEN as TOKEN } from '../helpers/queue-harness.js';
import {
  findRedisServer,
  freePort,
  REDIS_MISSING,
  spawnWorker,
  startRedis,
  type RedisServer,
  workerStarted,
} from '../helpers/redis.js';

test('JOB_QUEUE without API_TOKEN refuses to start and names both', () => {
  assert.throws(
    () => loadConfig({ JOB_QUEUE: 'redis://127.0.0.1:6379' }),
    (e: unknown) => e instanceof ConfigError && /JOB_QUEUE/.test(e.message) && /API_TOKEN/.test(e.message),
  );
  assert.throws(() => loadConfig({ JOB_QUEUE: 'http://x', API_TOKEN: TOKEN }), /redis:\/\//);
  assert.throws(() => loadConfig({ JOB_QUEUE: 'redis://h:1', API_TOKEN: TOKEN, LOCAL_WORKER: 'no' }), /LOCAL_WORKER/);
  assert.equal(loadConfig({ JOB_QUEUE: 'redis://h:1', API_TOKEN: TOKEN }).jobQueue?.localWorker, true);
});

test('without JOB_QUEUE the worker endpoints answer 409 no_queue', async () => {
  const s = await startService();
  try {
    const hello = await s.api('GET', '/api/workers/hello');
    assert.equal(hello.status, 409);
    assert.equal(hello.body.error.code, 'no_queue');
  } finally {
    await s.close();
  }
});

test('every portable kind the service defines has a worker handler, and no other', async () => {
  const s = await startService();
  try {
    assert.deepEqual(s.service.ctx.jobs.portableKinds().sort(), Object.keys(PORTABLE_HANDLERS).sort());
  } finally {
    await s.close();
  }
});

const redisBin = findRedisServer();
if (!redisBin) console.log(`# ${REDIS_MISSING}`);

describe(
  'the shared queue (BullMQ on a real Redis)',
  { skip: redisBin ? false : REDIS_MISSING, concurrency: false },
  () => {
    let redis: RedisServer;
    let clips: string;
    let short: string;
    let long: string;

    before(async () => {
      redis = await startRedis(redisBin!);
      clips = await tempDir();
      short = await makeVideo(path.join(clips, 'short.mp4'), { duration: 1, width: 160, height: 120, tone: 440 });
      // Long enough to still be rendering when a worker is killed or a job cancelled.
      long = await makeVideo(path.join(clips, 'long.mp4'), { duration: 15, width: 320, height: 180, fps: 30 });
    });
    after(async () => {
      await redis?.stop();
      if (clips) await fsp.rm(clips, { recursive: true, force: true });
    });

    async function videoOn(s: TestService, board: string, file: string): Promise<string> {
      const up = await s.upload(board, file, { addToBoard: true });
      assert.equal(up.status, 200, up.text);
      return up.body.element.id as string;
    }

    const convert = (s: TestService, board: string, element: string, codec = 'h264') =>
      s.api('POST', '/api/convert-video', {
        board_id: board,
        element_id: element,
        format: codec === 'vp9' ? 'webm' : 'mp4',
        codec,
        async: true,
      });

    async function boardFiles(s: TestService, board: string): Promise<string[]> {
      return fsp.readdir(await s.service.ctx.media.boardDir(board));
    }

    const { workers, worker, stopWorkers, withQueued } = queueHarness(() => redis, 'queue-test');
    after(stopWorkers);

    /** A VP9 render of the long clip, once a worker is into it (running with some progress). */
    async function longRenderRunning(s: TestService) {
      const board = await s.createBoard();
      const el = await videoOn(s, board, long);
      const r = await convert(s, board, el, 'vp9');
      await waitForJob(s, r.body.job_id, { until: (j) => j.status === 'running' && j.progress > 0, timeoutMs: 60_000 });
      return { board, r };
    }

    test('with the service as its own worker, queued operations and renders answer as in-process', async () => {
      await withQueued({}, async (s) => {
        const board = await s.createBoard();
        const a = await videoOn(s, board, short);
        const b = await videoOn(s, board, short);
        const conv = await convert(s, board, a);
        assert.equal(conv.status, 202, conv.text);
        const cat = await s.api('POST', '/api/concat-videos', { board_id: board, element_ids: [a, b], async: true });
        assert.equal(cat.status, 202, cat.text);
        for (const id of [conv.body.job_id, cat.body.job_id]) {
          const done = await waitForJob(s, id);
          assert.equal(done.status, 'complete', JSON.stringify(done));
          assert.match(done.result.url, /^\/media\//);
          assert.equal(done.output_url, done.result.url);
        }
        const els = (await s.api('GET', `/api/moodboards/${board}`)).body.elements;
        assert.equal(els.length, 4);
        // A bad request is still an immediate 4xx, nothing queued.
        const bad = await s.api('POST', '/api/convert-video', {
          board_id: board,
          element_id: 'nope',
          format: 'mp4',
          codec: 'h264',
          async: true,
        });
        assert.equal(bad.status, 404);
      });
    });

    test('two workers share ten renders; each job makes one element', async () => {
      await withQueued({ LOCAL_WORKER: '0' }, async (s) => {
        // Started side by side: each is a process of its own, seconds to start.
        const [w1, w2] = await Promise.all([worker(s), worker(s)]);
        const board = await s.createBoard();
        const el = await videoOn(s, board, short);
        const ids: string[] = [];
        for (let i = 0; i < 10; i++) {
          const r = await convert(s, board, el);
          assert.equal(r.status, 202, r.text);
          ids.push(r.body.job_id);
        }
        for (const id of ids) assert.equal((await waitForJob(s, id, { timeoutMs: 180_000 })).status, 'complete');
        // A worker logs "job done" just after the service has the job complete.
        const done = await eventually(() => {
          const all = [...w1.done(), ...w2.done()];
          return all.length === ids.length ? all : undefined;
        });
        assert.deepEqual([...done].sort(), [...ids].sort(), 'each job done once, by one of the workers');
        assert.ok(
          w1.done().length > 0 && w2.done().length > 0,
          `both workers took jobs: ${w1.done().length} / ${w2.done().length}`,
        );
        const els = (await s.api('GET', `/api/moodboards/${board}`)).body.elements;
        assert.equal(els.length, 11);
        assert.ok(
          (await boardFiles(s, board)).every((f) => !f.startsWith('.')),
          'no temp files left',
        );
        // The second job of the same clip came from the workers' caches: one fetch per worker at most.
        const fetches = [w1, w2].map((w) => (w.output().match(/"fetched"/g) ?? []).length);
        assert.ok(
          fetches.every((n) => n <= 1),
          `inputs fetched once per worker: ${fetches}`,
        );
      });
    });

    test('a worker killed mid-render: another takes the job over, one element, no stray files', async () => {
      await withQueued({ LOCAL_WORKER: '0' }, async (s) => {
        const pair = await Promise.all([worker(s), worker(s)]);
        const { board, r } = await longRenderRunning(s);
        const holder = pair.findIndex((w) => w.output().includes(`"job":"${r.body.job_id}"`));
        assert.ok(holder >= 0, 'one worker holds the job');
        const [dead, w2] = [pair[holder], pair[1 - holder]];
        dead.child.kill('SIGKILL');
        await dead.exited;
        const done = await waitForJob(s, r.body.job_id, { timeoutMs: 240_000 });
        assert.equal(done.status, 'complete', JSON.stringify(done));
        await eventually(() => (w2.done().includes(r.body.job_id) ? true : undefined), 10_000, 'the other worker');
        assert.deepEqual(w2.done(), [r.body.job_id]);
        const els = (await s.api('GET', `/api/moodboards/${board}`)).body.elements;
        assert.equal(els.length, 2);
        assert.deepEqual((await boardFiles(s, board)).sort(), ['long (vp9).webm', 'long.mp4']);
      });
    });

    test('cancel reaches a running job on a worker: cancelled, no element, the worker goes on', async () => {
      await withQueued({ LOCAL_WORKER: '0' }, async (s) => {
        const w = await worker(s);
        const { board, r } = await longRenderRunning(s);
        const c = await s.api('POST', `/api/jobs/${r.body.job_id}/cancel`);
        assert.equal(c.status, 200);
        const done = await waitForJob(s, r.body.job_id, { timeoutMs: 30_000 });
        assert.equal(done.status, 'cancelled');
        assert.equal(done.error_code, 'cancelled');
        assert.equal((await s.api('GET', `/api/moodboards/${board}`)).body.elements.length, 1);
        const small = await videoOn(s, board, short);
        const next = await convert(s, board, small);
        assert.equal((await waitForJob(s, next.body.job_id, { timeoutMs: 60_000 })).status, 'complete');
        await eventually(() => (w.done().includes(next.body.job_id) ? true : undefined), 10_000, 'the worker');
      });
    });

    test('a Redis restart mid-run is survived by the service and the workers', async () => {
      await withQueued({ LOCAL_WORKER: '0' }, async (s) => {
        const w = await worker(s);
        const board = await s.createBoard();
        const el = await videoOn(s, board, short);
        const first = await convert(s, board, el);
        await redis.restart(1000);
        const second = await convert(s, board, el);
        assert.equal(second.status, 202);
        for (const id of [first.body.job_id, second.body.job_id])
          assert.equal((await waitForJob(s, id, { timeoutMs: 120_000 })).status, 'complete');
        assert.equal((await s.api('GET', `/api/moodboards/${board}`)).body.elements.length, 3);
        await eventually(() => (w.done().includes(second.body.job_id) ? true : undefined), 10_000, 'the worker');
      });
    });

    test('a worker started before the service waits for it; a wrong token is refused and takes no job', async () => {
      const port = await freePort();
      const early = spawnWorker({
        service: `http://127.0.0.1:${port}`,
        token: TOKEN,
        queue: redis.url,
        dir: await tempDir('bms-worker-'),
        env: FAST,
      });
      workers.push(early);
      await eventually(
        () => (early.output().includes('waiting for the service') ? true : undefined),
        120_000,
        'the worker to wait',
      );
      await withQueued({ LOCAL_WORKER: '0', PORT: String(port) }, async (s) => {
        await workerStarted(early);
        const board = await s.createBoard();
        const el = await videoOn(s, board, short);
        early.child.kill('SIGTERM');
        assert.equal(await early.exited, 0);
        const wrong = spawnWorker({
          service: s.baseUrl,
          token: 'not-the-token-at-all',
          queue: redis.url,
          dir: await tempDir('bms-worker-'),
          env: FAST,
        });
        workers.push(wrong);
        assert.equal(await wrong.exited, 2);
        assert.match(wrong.output(), /refused/);
        const r = await convert(s, board, el);
        await new Promise((res) => setTimeout(res, 1000));
        assert.equal((await s.api('GET', `/api/jobs/${r.body.job_id}`)).body.status, 'queued', 'no worker took it');
        await worker(s);
        assert.equal((await waitForJob(s, r.body.job_id, { timeoutMs: 60_000 })).status, 'complete');
      });
    });
  },
);
