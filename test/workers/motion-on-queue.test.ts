// After Effects renders (motion.render) on render workers: the worker fetches the project and its footage by content
// hash, renders with its own aerender (the stand-in, set through the worker's AERENDER_PATH; the service has none),
// and hands the video back; a cancel stops the worker's aerender; a worker without aerender leaves the job to others.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { makeImage, probeFile, tempDir } from '../helpers/fixtures.js';
import { doneBy, FAST_QUEUE, queueHarness, WORKER_TOKEN } from '../helpers/queue-harness.js';
import { findRedisServer, REDIS_MISSING, startRedis, type RedisServer } from '../helpers/redis.js';
import { eventually, logCapture, processGone, startService, waitForJob, type TestService } from '../helpers/service.js';
import { bundleFakeAerender, fakeAerender } from '../motion/fake-aerender-setup.js';
import { sampleProject } from '../motion/project-builder.js';

const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

const redisBin = findRedisServer();
if (!redisBin) console.log(`# ${REDIS_MISSING}`);

describe('motion renders on render workers', { skip: redisBin ? false : REDIS_MISSING, concurrency: false }, () => {
  let redis: RedisServer;
  let work: string;
  let bundle: string;
  before(async () => {
    redis = await startRedis(redisBin!);
    work = await tempDir('bms-motion-workers-');
    bundle = await bundleFakeAerender(work);
  });
  after(async () => {
    await redis?.stop();
    if (work) await fsp.rm(work, { recursive: true, force: true });
  });

  let queues = 0;
  /**
   * A service without After Effects that leaves every job to the workers, with a board holding a project whose
   * "logo.png" footage is a file of the board, and an image for a media edit.
   */
  async function motionService(extra: Record<string, string> = {}, logStream?: NodeJS.WritableStream) {
    const s = await startService(
      {
        JOB_QUEUE: redis.url,
        JOB_QUEUE_NAME: `motion-queue-${++queues}`,
        API_TOKEN: WORKER_TOKEN,
        LOCAL_WORKER: '0',
        AERENDER_PATH: path.join(work, 'no-aerender-on-the-service'),
        MOTION_RENDER_STALL_SECONDS: '60',
        ...FAST_QUEUE,
        ...extra,
      },
      logStream ? { logStream } : {},
    );
    const board = await s.createBoard('Motion on workers');
    const boardDir = await fsp.realpath(await s.service.ctx.media.boardDir(board));
    const images = await tempDir();
    const footage = await s.upload(
      board,
      await makeImage(path.join(images, 'footage.png'), { width: 64, height: 32 }),
      {
        addToBoard: true,
      },
    );
    const image = await s.upload(board, await makeImage(path.join(images, 'new-logo.png'), { width: 48, height: 48 }), {
      addToBoard: true,
    });
    await fsp.rm(images, { recursive: true, force: true });
    const logo = path.join(boardDir, decodeURIComponent(footage.body.url.split('/').pop()));
    const project = await s.upload(
      board,
      { name: 'template.aep', data: sampleProject({ logoPath: logo }) },
      { addToBoard: true },
    );
    assert.equal(project.status, 200, project.text);
    const render = () =>
      s.api('POST', '/api/motion/render-jobs', {
        board_id: board,
        element_id: project.body.element.id,
        composition: 'Main',
        textEdits: [{ layer: 'Title', text: 'On a worker' }],
        mediaEdits: [{ layer: 'Backdrop', element_id: image.body.element.id }],
      });
    return { s, board, boardDir, logo, render };
  }

  const harness = queueHarness(() => redis, 'motion-queue');
  const { stopWorkers } = harness;
  /** A worker whose aerender is `aerender` (the stand-in, or a path where there is none). */
  const worker = (s: TestService, aerender: string) => harness.worker(s, { AERENDER_PATH: aerender });

  const fetches = (output: string) => (output.match(/"msg":"fetched"/g) ?? []).length;

  test('a worker renders with its own aerender the footage it fetched by content hash; the next job reads its cache', async () => {
    const { s, board, boardDir, logo, render } = await motionService();
    const seenLog = path.join(work, 'ok.json');
    try {
      const w = await worker(s, await fakeAerender(work, bundle, 'ok', seenLog));
      const { dir } = w;
      const first = await render();
      assert.equal(first.status, 202, first.text);
      const done = await waitForJob(s, `/api/motion/render-jobs/${first.body.id}`, { timeoutMs: 120_000 });
      assert.equal(done.status, 'complete', JSON.stringify(done));
      assert.equal(done.result.element.data.render_job_id, first.body.id);
      await doneBy(w, first.body.id);

      // What the stand-in After Effects on the worker saw: the footage item relinked to the worker's copy of the
      // board file (same bytes), the media edit and the text edit applied.
      const seen = JSON.parse(await fsp.readFile(seenLog, 'utf8'));
      const item = seen.footage.find((f: { id: number }) => f.id === 20);
      assert.ok(item.file.startsWith(`${dir}${path.sep}`), `footage read from the worker's folder: ${item.file}`);
      assert.equal(path.basename(item.file), path.basename(logo), 'the copy keeps the file name');
      assert.equal(item.sha256, sha(await fsp.readFile(logo)), 'the same bytes as the board file');
      assert.equal(seen.layers[1].source, item.file, 'the layer showing the item shows the copy');
      assert.ok(seen.argv[1].startsWith(`${dir}${path.sep}`), 'aerender opened a copy in the worker folder');
      assert.match(seen.layers[2].source, /media\/001-new-logo\.png$/);
      assert.equal(seen.layers[0].text, 'On a worker');

      // One element, a real video, no stray file on either side.
      const els = (await s.api('GET', `/api/moodboards/${board}`)).body.elements;
      assert.equal(els.filter((e: { type: string }) => e.type === 'video').length, 1);
      const info = await probeFile(path.join(boardDir, decodeURIComponent(done.result.url.split('/').pop())));
      assert.deepEqual([info.video?.codec, info.video?.width, info.video?.height], ['h264', 320, 180]);
      assert.ok(Math.abs((info.duration ?? 0) - 2) < 0.15, `duration ${info.duration}`);
      assert.ok(
        (await fsp.readdir(boardDir)).every((f) => !f.startsWith('.')),
        'no temp files left in the board',
      );
      assert.deepEqual(await fsp.readdir(path.join(dir, 'jobs')), [], "the worker's job folder is removed");
      assert.equal(fetches(w.output()), 3, 'project, footage and image fetched once');

      const second = await render();
      const again = await waitForJob(s, `/api/motion/render-jobs/${second.body.id}`, { timeoutMs: 120_000 });
      assert.equal(again.status, 'complete', JSON.stringify(again));
      await doneBy(w, second.body.id);
      assert.equal(fetches(w.output()), 3, 'the second render read every input from the cache');
      const after = (await s.api('GET', `/api/moodboards/${board}`)).body.elements;
      assert.equal(after.filter((e: { type: string }) => e.type === 'video').length, 2);
    } finally {
      await stopWorkers();
      await s.close();
    }
  });

  test("cancel of a render running on a worker kills that worker's aerender; the worker goes on", async () => {
    const { s, board, render } = await motionService();
    const hangLog = path.join(work, 'hang.json');
    const helperFile = `${hangLog}.helper-pid`;
    await fsp.rm(helperFile, { force: true });
    try {
      const w = await worker(s, await fakeAerender(work, bundle, 'hang', hangLog));
      const { dir } = w;
      const r = await render();
      assert.equal(r.status, 202, r.text);
      const pid = await eventually(
        () => (fs.existsSync(helperFile) ? Number(fs.readFileSync(helperFile, 'utf8')) : undefined),
        120_000,
        'aerender to be running on the worker',
      );
      assert.equal((await s.api('POST', `/api/jobs/${r.body.id}/cancel`)).status, 200);
      const done = await waitForJob(s, `/api/motion/render-jobs/${r.body.id}`, { timeoutMs: 30_000 });
      assert.equal(done.status, 'cancelled');
      await processGone(pid, 10_000); // the worker's aerender and what it started
      const els = (await s.api('GET', `/api/moodboards/${board}`)).body.elements;
      assert.equal(els.filter((e: { type: string }) => e.type === 'video').length, 0);
      await eventually(
        async () => ((await fsp.readdir(path.join(dir, 'jobs'))).length === 0 ? true : undefined),
        10_000,
        "the worker's job folder to be removed",
      );
      assert.equal(w.child.exitCode, null, 'the worker is still running');
    } finally {
      await stopWorkers();
      await s.close();
    }
  });

  test('a worker killed mid-render: another takes the render over, one element, no stray files', async () => {
    const { s, board, boardDir, render } = await motionService();
    try {
      const slow = await fakeAerender(work, bundle, 'slow');
      // Started side by side: each is a process of its own, seconds to start.
      const pair = await Promise.all([worker(s, slow), worker(s, slow)]);
      const before = (await fsp.readdir(boardDir)).sort();
      const r = await render();
      await waitForJob(s, `/api/motion/render-jobs/${r.body.id}`, {
        until: (j) => j.status === 'running' && j.progress > 0,
        timeoutMs: 120_000,
      });
      const holder = pair.findIndex((w) => w.output().includes(`"job":"${r.body.id}"`));
      assert.ok(holder >= 0, 'one worker holds the render');
      const [dead, other] = [pair[holder], pair[1 - holder]];
      dead.child.kill('SIGKILL');
      await dead.exited;
      const done = await waitForJob(s, `/api/motion/render-jobs/${r.body.id}`, { timeoutMs: 240_000 });
      assert.equal(done.status, 'complete', JSON.stringify(done));
      await eventually(() => (other.done().includes(r.body.id) ? true : undefined), 10_000, 'the other worker');
      const els = (await s.api('GET', `/api/moodboards/${board}`)).body.elements;
      assert.equal(els.filter((e: { type: string }) => e.type === 'video').length, 1);
      assert.deepEqual(
        (await fsp.readdir(boardDir)).sort(),
        [...before, decodeURIComponent(done.result.url.split('/').pop())].sort(),
        'the render and nothing else was added to the board folder',
      );
    } finally {
      await stopWorkers();
      await s.close();
    }
  });

  test('a worker without aerender leaves jobs on the queue (cancelled there at once); a worker with it renders them', async () => {
    const { s, board, render } = await motionService();
    try {
      const without = await worker(s, path.join(work, 'no-aerender-here'));
      assert.match(without.output(), /leaves motion\.render jobs to other workers/);
      const r = await render();
      assert.equal(r.status, 202, r.text);
      await eventually(
        () => (without.output().includes('job left to another worker') ? true : undefined),
        60_000,
        'the worker to leave the job',
      );
      const waiting = await waitForJob(s, `/api/motion/render-jobs/${r.body.id}`, {
        until: (j) => j.status === 'queued',
        timeoutMs: 10_000,
      });
      assert.equal(waiting.error, null, 'not failed');
      // A job left on the queue is cancelled at once, and no worker renders it afterwards.
      const left = await render();
      await eventually(
        () => ((without.output().match(/job left to another worker/g) ?? []).length >= 2 ? true : undefined),
        60_000,
        'the worker to leave the second job',
      );
      await waitForJob(s, `/api/motion/render-jobs/${left.body.id}`, {
        until: (j) => j.status === 'queued',
        timeoutMs: 10_000,
      });
      assert.equal((await s.api('POST', `/api/jobs/${left.body.id}/cancel`)).body.status, 'cancelled');
      const able = await worker(s, await fakeAerender(work, bundle, 'ok'));
      const done = await waitForJob(s, `/api/motion/render-jobs/${r.body.id}`, { timeoutMs: 120_000 });
      assert.equal(done.status, 'complete', JSON.stringify(done));
      await eventually(() => (able.done().includes(r.body.id) ? true : undefined), 10_000, 'the worker with aerender');
      assert.ok(!without.output().includes('"msg":"job taken"'), 'the worker without aerender never ran it');
      assert.ok(!able.output().includes(left.body.id), 'the cancelled job was not taken');
      assert.equal((await s.api('GET', `/api/jobs/${left.body.id}`)).body.status, 'cancelled');
      const els = (await s.api('GET', `/api/moodboards/${board}`)).body.elements;
      assert.equal(els.filter((e: { type: string }) => e.type === 'video').length, 1);
    } finally {
      await stopWorkers();
      await s.close();
    }
  });

  test("the service's own worker without aerender leaves the render to a worker with it", async () => {
    const logs = logCapture();
    const { s, board, render } = await motionService({ LOCAL_WORKER: '1', LOG_LEVEL: 'info' }, logs.stream);
    try {
      const r = await render();
      assert.equal(r.status, 202, r.text);
      await eventually(
        () =>
          logs.lines().some((l) => l.msg === 'job left to another worker: a program it needs is missing here')
            ? true
            : undefined,
        60_000,
        "the service's worker to leave the job",
      );
      assert.equal((await s.api('GET', `/api/jobs/${r.body.id}`)).body.error, null, 'not failed');
      const able = await worker(s, await fakeAerender(work, bundle, 'ok'));
      const done = await waitForJob(s, `/api/motion/render-jobs/${r.body.id}`, { timeoutMs: 120_000 });
      assert.equal(done.status, 'complete', JSON.stringify(done));
      await eventually(() => (able.done().includes(r.body.id) ? true : undefined), 10_000, 'the worker with aerender');
      const els = (await s.api('GET', `/api/moodboards/${board}`)).body.elements;
      assert.equal(els.filter((e: { type: string }) => e.type === 'video').length, 1);
    } finally {
      await stopWorkers();
      await s.close();
    }
  });
});
