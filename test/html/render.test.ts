import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeImage, probeFile, tempDir, whereVideosDiffer } from '../helpers/fixtures.js';
import { startService, waitForJob, type TestService } from '../helpers/service.js';
import { animationCardOn, CARD_SIZE, pngPixels, videoFramePixels, wrongCells } from './cards.js';

/** Two frame indices at 10 fps where every mechanism of the test card shows a different, known colour. */
const CHECKED_FRAMES = [2, 7];
const FPS = 10;

describe('HTML rendering on virtual time', () => {
  let s: TestService;
  let board: string;
  let card: string;
  let fixtures: string;

  const fileOf = async (url: string) => (await s.service.ctx.media.resolveUrl(url)).path;
  const bytesOf = async (url: string) => fsp.readFile(await fileOf(url));

  before(async () => {
    s = await startService();
    board = await s.createBoard('Render board');
    fixtures = await tempDir();
    card = await animationCardOn(s, board, fixtures);
  });

  after(async () => {
    await s.close();
    await fsp.rm(fixtures, { recursive: true, force: true });
  });

  it('renders every kind of animation at its virtual time into PNG frames', async () => {
    for (const frame of CHECKED_FRAMES) {
      const res = await s.api('POST', '/api/html/render-frame', {
        html: card,
        ...CARD_SIZE,
        fps: FPS,
        frame,
        title: `frame ${frame}`,
        board_id: board,
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.type, 'image');
      assert.equal(res.body.filename, `frame ${frame}.png`);
      assert.deepEqual(res.body.blocked_requests, []);
      const png = await bytesOf(res.body.url);
      assert.deepEqual([...png.subarray(1, 4)].map((c) => String.fromCharCode(c)).join(''), 'PNG');
      assert.deepEqual(wrongCells(await pngPixels(png), frame / FPS, 4), []);
    }
  });

  it('renders an mp4 whose frames show every kind of animation at its virtual time, adds it to the board with a thumbnail', async () => {
    const res = await s.api('POST', '/api/html/render', {
      html: card,
      ...CARD_SIZE,
      fps: FPS,
      duration: 1,
      format: 'mp4',
      title: 'All animations',
      board_id: board,
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.type, 'video');
    assert.equal(res.body.filename, 'All animations.mp4');
    assert.equal(res.body.url, `/media/${board}/All%20animations.mp4`);
    assert.equal(res.body.frames, 10);
    assert.equal(res.body.proxy_url, undefined, 'no proxy for a video that is already small');
    const file = await fileOf(res.body.url);
    for (const frame of CHECKED_FRAMES) {
      assert.deepEqual(
        wrongCells(await videoFramePixels(file, frame, CARD_SIZE.width, CARD_SIZE.height), frame / FPS, 16),
        [],
      );
    }
    const probe = await probeFile(file);
    assert.equal(probe.video?.codec, 'h264');
    assert.equal(probe.video?.pixFmt, 'yuv420p');
    assert.equal(probe.video?.width, CARD_SIZE.width);
    assert.equal(probe.video?.fps, FPS);
    assert.ok(Math.abs((probe.duration ?? 0) - 1) < 0.05, `duration ${probe.duration}`);
    const bytes = await fsp.readFile(file);
    assert.ok(bytes.indexOf('moov') < bytes.indexOf('mdat'), 'faststart puts the index first');

    const thumb = await s.api('GET', res.body.thumbnail_url);
    assert.equal(thumb.status, 200);
    assert.equal(thumb.headers.get('content-type'), 'image/jpeg');

    assert.equal(res.body.element.type, 'video');
    assert.equal(res.body.element.url, res.body.url);
    const listed = await s.api('GET', `/api/moodboards/${board}/elements`);
    assert.ok(listed.body.some((e: { id: string }) => e.id === res.body.element.id));
  });

  it('gives byte-identical PNGs, mp4 and webm files (with proxy and thumbnail) run after run', async () => {
    const pngs = [];
    for (let i = 0; i < 2; i++) {
      const res = await s.api('POST', '/api/html/render-frame', {
        html: card,
        ...CARD_SIZE,
        fps: FPS,
        frame: 9,
        board_id: board,
      });
      assert.equal(res.status, 200, res.text);
      pngs.push(await bytesOf(res.body.url));
    }
    assert.ok(pngs[0].equals(pngs[1]), 'two PNG renders differ');

    // 500 px high: taller than the proxy height, so each render also makes a 480p proxy.
    for (const format of ['mp4', 'webm'] as const) {
      const runs = [];
      for (let i = 0; i < 2; i++) {
        const res = await s.api('POST', '/api/html/render', {
          html: card,
          width: 200,
          height: 500,
          fps: FPS,
          duration: 1,
          format,
          title: 'Same',
          board_id: board,
        });
        assert.equal(res.status, 200, res.text);
        runs.push(res.body);
      }
      assert.notEqual(runs[0].filename, runs[1].filename, 'a second render never overwrites the first');
      for (const key of ['url', 'proxy_url'] as const) {
        const a: string = await fileOf(runs[0][key]);
        const b: string = await fileOf(runs[1][key]);
        if (!(await fsp.readFile(a)).equals(await fsp.readFile(b)))
          assert.fail(`two ${format} renders differ (${key}): ${await whereVideosDiffer(a, b)}`);
      }
      assert.ok(
        (await bytesOf(runs[0].thumbnail_url)).equals(await bytesOf(runs[1].thumbnail_url)),
        `two ${format} thumbnails differ`,
      );
      const main = await probeFile(await fileOf(runs[0].url));
      assert.equal(main.video?.codec, format === 'mp4' ? 'h264' : 'vp9');
      assert.equal(main.video?.height, 500);
      const proxy = await probeFile(await fileOf(runs[0].proxy_url));
      assert.equal(proxy.video?.codec, 'h264');
      assert.equal(proxy.video?.height, 480);
    }
  });

  it('keeps the card in its sandbox: outside URLs, file:// and other local ports get nothing, /media works', async () => {
    let hits = 0;
    const outside = http.createServer((_req, res) => {
      hits++;
      res.end('leaked');
    });
    outside.on('upgrade', (_req, socket) => {
      hits++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => outside.listen(0, '127.0.0.1', resolve));
    const other = `127.0.0.1:${(outside.address() as AddressInfo).port}`;
    try {
      const image = await s.upload(board, await makeImage(path.join(fixtures, 'ok.png'), { width: 16, height: 16 }));
      // Cell 1 turns red if anything outside got through; cell 2 blue once every attempt has settled; cell 3 green
      // when a /media file loaded.
      const html = `<!doctype html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="http://${other}/style.css">
<style>body{margin:0;background:#000} div{width:40px;height:40px;float:left;background:#777}</style></head><body>
<div id="leak"></div><div id="settled"></div><div id="media"></div>
<img src="file:///etc/hostname"><img src="http://${other}/img.png"><iframe src="http://${other}/frame"></iframe>
<script>
  const leak = (what) => { document.getElementById('leak').style.background = 'rgb(255,0,0)'; };
  const attempt = (url) => fetch(url).then((r) => r.text()).then((t) => { if (t) leak(url); }, () => undefined);
  const socket = new Promise((resolve) => {
    const ws = new WebSocket('ws://${other}/');
    ws.onopen = () => { leak('ws'); resolve(); };
    ws.onerror = ws.onclose = () => resolve();
  });
  navigator.sendBeacon('http://${other}/beacon', 'x');
  window.open('http://${other}/popup');
  const a = document.createElement('a');
  a.href = 'data:text/plain,downloaded'; a.download = 'x.txt'; document.body.append(a); a.click();
  // The fetches run on real time: the clock is handed them, so the frame waits for them to settle (under load a
  // /media read could otherwise still be on its way at frame 9).
  window.__bmsClock.waitFor(Promise.all([
    attempt('http://example.com/'), attempt('http://${other}/fetch'), attempt('file:///etc/passwd'),
    attempt('${s.baseUrl}/api/moodboards'), socket,
  ]).then(() => { document.getElementById('settled').style.background = 'rgb(0,0,255)'; }));
  window.__bmsClock.waitFor(fetch('${image.body.url}').then((r) => r.ok && r.blob()).then((b) => b && b.size > 0 && (document.getElementById('media').style.background = 'rgb(0,255,0)')));
  setTimeout(() => { location.href = 'http://${other}/navigate'; }, 100);
</script></body></html>`;
      const res = await s.api('POST', '/api/html/render-frame', {
        html,
        width: 160,
        height: 40,
        fps: FPS,
        frame: 9,
        board_id: board,
      });
      assert.equal(res.status, 200, res.text);
      const blocked: string[] = res.body.blocked_requests;
      for (const expected of [
        'http://example.com/',
        `http://${other}/fetch`,
        `http://${other}/img.png`,
        `${s.baseUrl}/api/moodboards`,
        `http://${other}/navigate`,
      ]) {
        assert.ok(blocked.includes(expected), `${expected} was not blocked: ${blocked.join(', ')}`);
      }
      const px = await pngPixels(await bytesOf(res.body.url));
      assert.deepEqual(px(20, 20), [119, 119, 119], 'nothing leaked, and the card was not navigated away');
      assert.deepEqual(px(60, 20), [0, 0, 255], 'every attempt settled before the frame');
      assert.deepEqual(px(100, 20), [0, 255, 0], 'a /media file of this service loads');
      assert.equal(hits, 0, 'the outside server was never reached');
      const files = await fsp.readdir(await s.service.ctx.media.boardDir(board));
      assert.ok(!files.includes('x.txt'), 'no download');
    } finally {
      await new Promise((resolve) => outside.close(resolve));
    }
  });

  it('renders a card that calls alert(), confirm() and prompt(): the dialogs are dismissed', async () => {
    // A dialog stopped the page's scripts until answered: the render waited for its time limit (bench/probe).
    const html = `<!doctype html><html><body style="margin:0;background:rgb(255,0,0)"><script>
  alert('hi');
  const dismissed = confirm('sure?') === false && prompt('name?') === null;
  document.body.style.background = dismissed ? 'rgb(0,0,255)' : 'rgb(0,255,0)';
</script></body></html>`;
    const res = await s.api('POST', '/api/html/render-frame', {
      html,
      width: 20,
      height: 20,
      frame: 1,
      board_id: board,
    });
    assert.equal(res.status, 200, res.text);
    const px = await pngPixels(await bytesOf(res.body.url));
    assert.deepEqual(px(10, 10), [0, 0, 255]);
  });

  it('answers invalid render parameters with 400 and an unknown board with 404', async () => {
    const base = { html: '<p>x</p>', width: 160, height: 120, fps: 10, duration: 1, board_id: board };
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ width: 161 }, /width must be multiple of 2/],
      [{ height: 4000 }, /height must be <= 2160/],
      [{ width: 8 }, /width must be >= 16/],
      [{ fps: 0 }, /fps must be >= 1/],
      [{ fps: 240 }, /fps must be <= 120/],
      [{ duration: 0 }, /duration must be > 0/],
      [{ duration: 600 }, /duration must be <= 120/],
      [{ format: 'gif' }, /format/],
      [{ html: '' }, /html must NOT have fewer than 1 characters/],
      [{ colour: 'red' }, /unknown field "colour"/],
    ];
    for (const [patch, message] of cases) {
      const res = await s.api('POST', '/api/html/render', { ...base, ...patch });
      assert.equal(res.status, 400, `${JSON.stringify(patch)} -> ${res.status}`);
      assert.match(res.body.error.message, message);
    }
    const frame = await s.api('POST', '/api/html/render-frame', { ...base, frame: 10 });
    assert.equal(frame.status, 400);
    assert.match(frame.body.error.message, /frame 10 is past the last frame \(9\)/);
    const negative = await s.api('POST', '/api/html/render-frame', { ...base, frame: -1 });
    assert.equal(negative.status, 400);
    const missing = await s.api('POST', '/api/html/render', { ...base, board_id: 'bd_nope' });
    assert.equal(missing.status, 404);
    const missingFrame = await s.api('POST', '/api/html/render-frame', { ...base, board_id: 'bd_nope' });
    assert.equal(missingFrame.status, 404);
  });
});

describe('HTML render time limit', () => {
  it('stops a card that never yields with 504 (as a job: render_timeout), and the next render still works', async () => {
    const s = await startService({ HTML_RENDER_TIMEOUT_SECONDS: '3' });
    try {
      const board = await s.createBoard();
      const stuck = '<!doctype html><body><script>setTimeout(() => { for (;;) {} }, 100);</script></body>';
      const res = await s.api('POST', '/api/html/render', {
        html: stuck,
        width: 64,
        height: 64,
        fps: 10,
        duration: 1,
        title: 'stuck',
        board_id: board,
      });
      assert.equal(res.status, 504, res.text);
      assert.equal(res.body.error.code, 'render_timeout');
      const files = await fsp.readdir(await s.service.ctx.media.boardDir(board));
      assert.deepEqual(files, [], 'no partial output is left behind');
      // The same render as a job fails with the same code, and leaves nothing either.
      const queued = await s.api('POST', '/api/html/render', {
        html: stuck,
        width: 64,
        height: 64,
        fps: 10,
        duration: 1,
        board_id: board,
        async: true,
      });
      assert.equal(queued.status, 202, queued.text);
      const job = await waitForJob(s, queued.body.job_id);
      assert.equal(job.status, 'error', JSON.stringify(job));
      assert.equal(job.error_code, 'render_timeout');
      assert.deepEqual(await fsp.readdir(await s.service.ctx.media.boardDir(board)), []);
      const ok = await s.api('POST', '/api/html/render-frame', {
        html: '<body style="margin:0;background:rgb(0,0,255)">',
        width: 64,
        height: 64,
        fps: 10,
        board_id: board,
      });
      assert.equal(ok.status, 200, ok.text);
      const px = await pngPixels(await fsp.readFile((await s.service.ctx.media.resolveUrl(ok.body.url)).path));
      assert.deepEqual(px(32, 32), [0, 0, 255]);
    } finally {
      await s.close();
    }
  });
});
