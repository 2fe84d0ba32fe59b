// HTML card renders and mockup renders on render worker processes (the shared queue on a real Redis, the service
// taking no jobs itself): the worker reads the card's media from the service, hands back the video with its side
// files, and the service commits them once.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { makeImage, makeVideo, probeFile, tempDir } from '../helpers/fixtures.js';
import { doneBy, queueHarness, WORKER_TOKEN } from '../helpers/queue-harness.js';
import { findRedisServer, REDIS_MISSING, startRedis, type RedisServer, type WorkerProcess } from '../helpers/redis.js';
import { eventually, waitForJob, type TestService } from '../helpers/service.js';

const redisBin = findRedisServer();
if (!redisBin) console.log(`# ${REDIS_MISSING}`);

/** A card showing a board image over its whole page; `busy` keeps the renderer working on every frame. */
const imageCard = (url: string, busy = false) =>
  `<!doctype html><html><body style="margin:0;background:#000"><img src="${url}" style="width:100vw;height:100vh">` +
  (busy
    ? '<script>let n = 0; (function f() { for (let i = 0; i < 2e6; i++) n += i % 7; requestAnimationFrame(f); })();</script>'
    : '') +
  '</body></html>';

/** The processes `pid` started (ps). */
const childrenOf = (pid: number): number[] =>
  execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.trim())
    .map(Number);

/** Whether a process is still running (a zombie no one reaped yet has exited). */
function alive(pid: number): boolean {
  try {
    return !execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).startsWith('Z');
  } catch {
    return false; // ps exits 1 for a pid that is gone
  }
}

/** Whether the first pixel of an image is red. */
async function red(bytes: Buffer): Promise<boolean> {
  const { data } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return data[0] > 200 && data[1] < 60 && data[2] < 60;
}

describe(
  'renders of HTML cards and mockups on render workers',
  { skip: redisBin ? false : REDIS_MISSING, concurrency: false },
  () => {
    let redis: RedisServer;
    let fixtures: string;
    let redPng: string;

    before(async () => {
      redis = await startRedis(redisBin!);
      fixtures = await tempDir();
      redPng = await makeImage(path.join(fixtures, 'red.png'), { width: 32, height: 32, source: 'color=c=red' });
    });
    after(async () => {
      await redis?.stop();
      if (fixtures) await fsp.rm(fixtures, { recursive: true, force: true });
    });

    const { worker, stopWorkers, queued, withQueued } = queueHarness(() => redis, 'html-workers');
    after(stopWorkers);

    const auth = { authorization: `Bearer ${WORKER_TOKEN}` };
    const elementsOf = async (s: TestService, board: string) =>
      (await s.api('GET', `/api/moodboards/${board}/elements`)).body as { id: string; data: Record<string, unknown> }[];
    const boardFiles = async (s: TestService, board: string) => fsp.readdir(await s.service.ctx.media.boardDir(board));
    const sideFiles = async (s: TestService, board: string) =>
      fsp.readdir(path.join(s.dataDir, 'media', 'html-renders', board)).catch(() => [] as string[]);
    const fileOf = async (s: TestService, url: string) => (await s.service.ctx.media.resolveUrl(url)).path;
    /** A board with the red image; its URL. */
    const boardWithRed = async (s: TestService) => {
      const board = await s.createBoard();
      const up = await s.upload(board, redPng);
      assert.equal(up.status, 200, up.text);
      return { board, url: up.body.url as string };
    };

    // The renders on a worker share one service and its worker (each on a board of its own): a service and a worker
    // process each start a Chromium, seconds apiece, and what these tests check is per board and per job.
    describe('on one service and its worker', () => {
      let s: TestService;
      let w: WorkerProcess & { dir: string };
      before(async () => {
        s = await queued({ LOCAL_WORKER: '0' });
        w = await worker(s);
      });
      after(async () => {
        await stopWorkers();
        await s?.close();
      });

      test('an html render runs on a worker: one element, its proxy and thumbnail filed as in the request, a real video', async () => {
        const { board, url } = await boardWithRed(s);
        // Taller than the proxy height: a proxy is made; the card's image comes from the service through the worker.
        const body = {
          html: imageCard(url),
          width: 64,
          height: 500,
          fps: 10,
          duration: 0.5,
          format: 'mp4',
          board_id: board,
        };
        const sync = await s.api('POST', '/api/html/render', { ...body, title: 'Here' });
        assert.equal(sync.status, 200, sync.text);
        const queued = await s.api('POST', '/api/html/render', { ...body, title: 'There', async: true });
        assert.equal(queued.status, 202, queued.text);
        const done = await waitForJob(s, queued.body.job_id, { timeoutMs: 180_000 });
        assert.equal(done.status, 'complete', JSON.stringify(done));
        await doneBy(w, queued.body.job_id);

        const result = done.result;
        assert.deepEqual(Object.keys(result).sort(), Object.keys(sync.body).sort(), 'the job result is the sync body');
        assert.equal(result.filename, 'There.mp4');
        assert.equal(done.output_url, result.url);
        assert.equal(result.frames, 5);
        assert.equal(result.proxy_url, `/media/html-renders/${board}/There.proxy.mp4`);
        assert.equal(result.thumbnail_url, `/media/html-renders/${board}/There.jpg`);
        assert.equal(result.element.data.proxy_url, result.proxy_url);
        const elements = await elementsOf(s, board);
        assert.equal(elements.length, 2, 'the sync render and the job: one element each');
        assert.equal(elements.find((e) => e.id === result.element.id)?.data.proxy_url, result.proxy_url);

        const video = await probeFile(await fileOf(s, result.url));
        assert.equal(video.video?.codec, 'h264');
        assert.equal(video.video?.height, 500);
        assert.equal((await probeFile(await fileOf(s, result.proxy_url))).video?.height, 480);
        const thumb = await fetch(s.baseUrl + result.thumbnail_url, { headers: auth });
        assert.equal(thumb.status, 200);
        assert.ok(await red(Buffer.from(await thumb.arrayBuffer())), 'the board image reached the card on the worker');
        assert.deepEqual((await sideFiles(s, board)).sort(), [
          'Here.jpg',
          'Here.proxy.mp4',
          'There.jpg',
          'There.proxy.mp4',
        ]);
        assert.deepEqual(
          (await boardFiles(s, board)).filter((n) => n.startsWith('.')),
          [],
          'no temp file left',
        );
      });

      test('a render-frame runs on a worker: the same PNG as in the request, no element', async () => {
        const { board, url } = await boardWithRed(s);
        const body = {
          html: imageCard(url),
          width: 32,
          height: 32,
          fps: 10,
          frame: 3,
          title: 'Frame',
          board_id: board,
        };
        const sync = await s.api('POST', '/api/html/render-frame', body);
        assert.equal(sync.status, 200, sync.text);
        const queued = await s.api('POST', '/api/html/render-frame', { ...body, async: true });
        assert.equal(queued.status, 202, queued.text);
        const done = await waitForJob(s, queued.body.job_id, { timeoutMs: 180_000 });
        assert.equal(done.status, 'complete', JSON.stringify(done));
        await doneBy(w, queued.body.job_id);
        assert.deepEqual(Object.keys(done.result).sort(), Object.keys(sync.body).sort());
        assert.equal(done.result.type, 'image');
        assert.equal(done.result.filename, 'Frame (1).png');
        assert.equal(done.output_url, done.result.url);
        const png = await fsp.readFile(await fileOf(s, done.result.url));
        assert.ok(await red(png));
        assert.ok(png.equals(await fsp.readFile(await fileOf(s, sync.body.url))), 'the same pixels as the sync frame');
        assert.deepEqual(await elementsOf(s, board), [], 'frames are not added to the board');
      });

      test('a mockup render runs on a worker: its element is added by the service, the file is the size asked', async () => {
        const { board, url } = await boardWithRed(s);
        const created = await s.api('POST', `/api/moodboards/${board}/mockup-projects`, {
          name: 'On a worker',
          device: 'iphone',
        });
        assert.equal(created.status, 201, created.text);
        const put = await s.api('PUT', `/api/moodboards/${board}/mockup-projects/${created.body.id}`, {
          ...created.body,
          screen_source_url: url,
          duration_seconds: 1,
          background: { mode: 'solid', params: { color: '#0000ff' } },
        });
        assert.equal(put.status, 200, put.text);
        const r = await s.api('POST', '/api/mockup/render', {
          board_id: board,
          project_id: created.body.id,
          format: 'mp4',
          size_preset: 'square',
          fps: 2,
        });
        assert.equal(r.status, 202, r.text);
        const done = await waitForJob(s, `/api/mockup/render/${r.body.job_id}`, { timeoutMs: 240_000 });
        assert.equal(done.status, 'complete', JSON.stringify(done));
        await doneBy(w, r.body.job_id);
        assert.equal(done.output_url, `/media/${board}/On%20a%20worker.mp4`);
        const elements = await elementsOf(s, board);
        assert.deepEqual(
          elements.map((e) => e.id),
          [done.element_id],
          'one element, the render',
        );
        assert.equal(elements[0].data.source, 'mockup-render');
        assert.equal(elements[0].data.render_job_id, r.body.job_id);
        const video = await probeFile(await fileOf(s, done.output_url));
        assert.equal(video.video?.width, 1080);
        assert.equal(video.video?.height, 1080);
        assert.ok(!(await fsp.readdir(path.join(s.dataDir, 'media'))).includes('mockup-renders'));
      });

      test('cancel of a running html render on a worker stops it: no element, no stray file, the worker goes on', async () => {
        const { board, url } = await boardWithRed(s);
        const before = await boardFiles(s, board);
        const body = { html: imageCard(url, true), width: 64, height: 64, fps: 10, board_id: board, async: true };
        const r = await s.api('POST', '/api/html/render', { ...body, duration: 60, title: 'Long' });
        assert.equal(r.status, 202, r.text);
        const id = r.body.job_id;
        await waitForJob(s, id, { timeoutMs: 120_000, until: (j) => j.status === 'running' && j.progress > 0 });
        const scratch = path.join(w.dir, 'jobs', id);
        await eventually(
          async () => ((await fsp.readdir(scratch).catch(() => [])).length > 0 ? true : undefined),
          30_000,
          'the render to write in its scratch on the worker',
        );
        const c = await s.api('POST', `/api/jobs/${id}/cancel`);
        assert.equal(c.status, 200, c.text);
        const done = await waitForJob(s, id, { timeoutMs: 30_000 });
        assert.equal(done.status, 'cancelled', JSON.stringify(done));
        assert.equal(done.error_code, 'cancelled');
        await eventually(
          async () => ((await fsp.stat(scratch).catch(() => undefined)) ? undefined : true),
          10_000,
          'the scratch to go',
        );
        assert.deepEqual(await boardFiles(s, board), before, 'no partial file in the board folder');
        assert.deepEqual(await sideFiles(s, board), []);
        assert.deepEqual(await elementsOf(s, board), []);
        // Its pages were given back: the next render, two pages, runs on the same worker.
        const next = await s.api('POST', '/api/html/render', { ...body, duration: 0.3, title: 'Next' });
        assert.equal((await waitForJob(s, next.body.job_id, { timeoutMs: 120_000 })).status, 'complete');
        await doneBy(w, next.body.job_id);
      });
    });

    test('the worker protocol: a duplicated complete with side files makes one element; a late upload is discarded', async () => {
      // No worker at all: this test is the worker, so that it can send the same complete twice.
      await withQueued({ LOCAL_WORKER: '0' }, async (s) => {
        const { board, url } = await boardWithRed(s);
        const queued = await s.api('POST', '/api/html/render', {
          html: imageCard(url),
          width: 64,
          height: 64,
          fps: 10,
          duration: 1,
          title: 'Sent',
          board_id: board,
          async: true,
        });
        assert.equal(queued.status, 202, queued.text);
        const id = queued.body.job_id;
        const info = await s.api('GET', `/api/workers/jobs/${id}`);
        assert.equal(info.status, 200, info.text);
        assert.equal(info.body.kind, 'html.render');
        assert.deepEqual(info.body.params.serviceOrigins, [
          `http://127.0.0.1:${s.port}`,
          `http://localhost:${s.port}`,
          `http://[::1]:${s.port}`,
        ]);
        // The card's image, as the worker's page asks for it: resolved and hashed by the service.
        const media = await s.api('GET', `/api/workers/jobs/${id}/media?url=${encodeURIComponent(url)}`);
        assert.equal(media.status, 200, media.text);
        assert.equal(media.body.size, (await fsp.stat(redPng)).size);
        assert.match(media.body.sha256, /^[0-9a-f]{64}$/);
        // Containment is the service's: a path out, or a link in the board folder to a file outside, is refused.
        await fsp.symlink(redPng, path.join(await s.service.ctx.media.boardDir(board), 'link.png'));
        for (const out of [`/media/${board}/../../x.png`, `/media/${board}/link.png`]) {
          const refused = await s.api('GET', `/api/workers/jobs/${id}/media?url=${encodeURIComponent(out)}`);
          assert.ok(refused.status >= 400 && refused.status < 500, `${out}: ${refused.text}`);
        }

        const clip = await makeVideo(path.join(fixtures, 'sent.mp4'), { duration: 1, width: 64, height: 64 });
        const upload = async (file: string, name: string) => {
          const res = await fetch(
            `${s.baseUrl}/api/workers/jobs/${id}/output?board_id=${board}&name=${encodeURIComponent(name)}`,
            {
              method: 'PUT',
              headers: { ...auth, 'content-type': 'application/octet-stream' },
              body: await fsp.readFile(file),
            },
          );
          assert.equal(res.status, 200, await res.clone().text());
          return ((await res.json()) as { upload_id: string }).upload_id;
        };
        const complete = {
          upload_id: await upload(clip, 'Sent.mp4'),
          element: { type: 'video', data: { source: 'html-render' } },
          data: { frames: 10, blocked: [] },
          sides: { thumbnail: await upload(redPng, 'thumbnail.jpg') },
        };
        const reused = await s.api('POST', `/api/workers/jobs/${id}/complete`, {
          ...complete,
          sides: { thumbnail: complete.upload_id },
        });
        assert.equal(reused.status, 400, reused.text);
        const twice = await Promise.all([1, 2].map(() => s.api('POST', `/api/workers/jobs/${id}/complete`, complete)));
        for (const answer of twice) {
          assert.equal(answer.status, 200, answer.text);
          assert.equal(answer.body.status, 'complete');
        }
        const done = await waitForJob(s, id);
        assert.equal(done.result.thumbnail_url, `/media/html-renders/${board}/Sent.jpg`);
        assert.equal((await elementsOf(s, board)).length, 1, 'one element');
        // Another worker finishing the same job later: its upload is refused or discarded, never a second element.
        const late = await fetch(`${s.baseUrl}/api/workers/jobs/${id}/output?board_id=${board}&name=Sent.mp4`, {
          method: 'PUT',
          headers: { ...auth, 'content-type': 'application/octet-stream' },
          body: await fsp.readFile(clip),
        });
        assert.equal(late.status, 409);
        assert.equal((await elementsOf(s, board)).length, 1);
        assert.deepEqual((await boardFiles(s, board)).sort(), ['Sent.mp4', 'link.png', 'red.png']);
        assert.deepEqual(await sideFiles(s, board), ['Sent.jpg']);
      });
    });

    test('a worker failure or completion: bodies of the wrong type are refused; every error kind the service has is taken', async () => {
      await withQueued({ LOCAL_WORKER: '0' }, async (s) => {
        const { board, url } = await boardWithRed(s);
        const body = {
          html: imageCard(url),
          width: 64,
          height: 64,
          fps: 10,
          duration: 1,
          board_id: board,
          async: true,
        };
        const id = (await s.api('POST', '/api/html/render', { ...body, title: 'Failing' })).body.job_id;
        for (const bad of [
          { kind: 'no_such_kind', code: 'x', message: 'x' },
          { kind: 42, code: 'x', message: 'x' },
          { kind: 'internal', code: 'x', message: Infinity },
          { kind: 'internal', code: 'x', message: 'x', extra: true },
        ]) {
          const refused = await s.api('POST', `/api/workers/jobs/${id}/fail`, bad);
          assert.equal(refused.status, 400, `${JSON.stringify(bad)}: ${refused.text}`);
        }
        for (const bad of [
          { upload_id: 5 },
          { upload_id: 'u', element: 'video' },
          { upload_id: 'u', element: true },
          { upload_id: 'u', sides: { thumbnail: 7 } },
          { upload_id: 'u', sides: { '../x': 'u2' } },
          { upload_id: 'u', data: [] },
        ]) {
          const refused = await s.api('POST', `/api/workers/jobs/${id}/complete`, bad);
          assert.equal(refused.status, 400, `${JSON.stringify(bad)}: ${refused.text}`);
        }
        assert.equal((await s.api('GET', `/api/jobs/${id}`)).body.status, 'queued', 'nothing recorded');
        // A provider's 429 reached by a job (a rate_limited failure) is a kind like the others.
        const failed = await s.api('POST', `/api/workers/jobs/${id}/fail`, {
          kind: 'rate_limited',
          code: 'rate_limited',
          message: 'Too many requests',
        });
        assert.equal(failed.status, 200, failed.text);
        const job = await waitForJob(s, id);
        assert.equal(job.status, 'error');
        assert.equal(job.error_code, 'rate_limited');
      });
    });

    test('a worker killed mid html render: its Chromium goes with it, another worker renders it, one element', async () => {
      await withQueued({ LOCAL_WORKER: '0' }, async (s) => {
        // Started side by side: each is a process of its own, seconds to start.
        const pair = await Promise.all([worker(s), worker(s)]);
        const { board, url } = await boardWithRed(s);
        const r = await s.api('POST', '/api/html/render', {
          html: imageCard(url, true),
          width: 64,
          height: 64,
          fps: 10,
          // 80 busy frames: still running when it is killed (just after its first frame), and all of them drawn
          // again by the other worker.
          duration: 8,
          title: 'Handed on',
          board_id: board,
          async: true,
        });
        assert.equal(r.status, 202, r.text);
        const id = r.body.job_id;
        await waitForJob(s, id, { timeoutMs: 120_000, until: (j) => j.status === 'running' && j.progress > 0 });
        const holder = pair.findIndex((w) => w.output().includes(`"job":"${id}"`));
        assert.ok(holder >= 0, 'one worker holds the job');
        const [dead, other] = [pair[holder], pair[1 - holder]];
        const browsers = childrenOf(dead.child.pid!);
        assert.ok(browsers.length > 0, 'the worker runs its own Chromium');
        dead.child.kill('SIGKILL');
        await dead.exited;
        const done = await waitForJob(s, id, { timeoutMs: 300_000 });
        assert.equal(done.status, 'complete', JSON.stringify(done));
        await doneBy(other, id);
        await eventually(() => (browsers.some(alive) ? undefined : true), 30_000, "the dead worker's Chromium to exit");
        assert.equal((await elementsOf(s, board)).length, 1);
        assert.deepEqual((await boardFiles(s, board)).sort(), ['Handed on.mp4', 'red.png']);
        assert.deepEqual(await sideFiles(s, board), ['Handed on.jpg']);
      });
    });
  },
);
