import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SERVICE_VERSION } from '../../src/version.js';
import { eventually, startService, type TestService } from '../helpers/service.js';
import { makeAudio, makeImage, makeVideo, probeFile, tempDir } from '../helpers/fixtures.js';

const base = '/api/integrations/motion-editor';

describe('motion editor panel endpoints', () => {
  let t: TestService;
  let board: string;
  let fx: string;
  let server: http.Server;
  let origin: string;
  let png: Buffer;

  before(async () => {
    t = await startService();
    board = await t.createBoard('Panel');
    fx = await tempDir();
    png = await fsp.readFile(await makeImage(path.join(fx, 'remote.png'), { width: 40, height: 20 }));
    server = http.createServer((req, res) => {
      if (req.url === '/remote.png')
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.close();
    await t.close();
    await fsp.rm(fx, { recursive: true, force: true });
  });

  it('status answers the version, the port it listens on and the number of boards', async () => {
    await t.createBoard('Second');
    const res = await t.api('GET', `${base}/status`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { version: SERVICE_VERSION, backend_port: t.port, boards_count: 2 });
  });

  it('resolve-media downloads through the download pipeline and adds the elements to the board', async () => {
    const res = await t.api('POST', `${base}/resolve-media`, { board_id: board, url: `${origin}/remote.png` });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.elements.length, 1);
    const [el] = res.body.elements;
    assert.equal(el.type, 'image');
    assert.match(el.url, new RegExp(`^/media/${board}/remote\\.png$`));
    const onBoard = (await t.api('GET', `/api/moodboards/${board}`)).body.elements.map((e: any) => e.id);
    assert.ok(onBoard.includes(el.id));
    const missing = await t.api('POST', `${base}/resolve-media`, { board_id: board, url: `${origin}/nothing.png` });
    assert.ok(missing.status >= 400 && missing.status < 600 && missing.status !== 500, missing.text);
    const bad = await t.api('POST', `${base}/resolve-media`, { board_id: board, url: 'file:///etc/passwd' });
    assert.equal(bad.status, 400);
  });

  it('lists images, videos and html cards (as a cached video) and adds nothing to the board; downloads with name and ranges', async () => {
    const video = await t.upload(
      board,
      await makeVideo(path.join(fx, 'clip.mp4'), { width: 64, height: 36, fps: 10, duration: 1 }),
      { addToBoard: true },
    );
    const audio = await t.upload(board, await makeAudio(path.join(fx, 'tone.mp3'), { duration: 0.5 }), {
      addToBoard: true,
    });
    await t.api('POST', `/api/moodboards/${board}/elements`, { type: 'text', name: 'note', data: { text: 'hi' } });
    const card = await t.api('POST', `/api/moodboards/${board}/elements`, {
      type: 'html',
      name: 'Red card',
      width: 160,
      height: 90,
      data: { duration: 0.2 },
    });
    assert.equal(card.status, 201, card.text);
    const cardId = card.body.id as string;
    assert.equal(
      (
        await t.api('PUT', `/api/moodboards/${board}/elements/${cardId}/html`, {
          html: '<!doctype html><body style="margin:0;background:#f00"></body>',
        })
      ).status,
      200,
    );
    await eventually(
      async () => {
        const els = (await t.api('GET', `/api/moodboards/${board}`)).body.elements;
        return els.every((e: any) => !['image', 'video', 'audio'].includes(e.type) || e.data.probe_status === 'done')
          ? true
          : undefined;
      },
      30_000,
      'probes',
    );
    const countBefore = (await t.api('GET', `/api/moodboards/${board}`)).body.elements.length;

    const res = await t.api('GET', `${base}/elements?board_id=${board}`);
    assert.equal(res.status, 200, res.text);
    const byName = Object.fromEntries(res.body.map((e: any) => [e.name, e]));
    assert.deepEqual(res.body.map((e: any) => e.type).sort(), ['html', 'image', 'video']);
    assert.equal(byName['remote.png'].width, 40);
    assert.equal(byName['remote.png'].duration, null);
    const v = byName['clip.mp4'];
    assert.deepEqual([v.id, v.url, v.width, v.height], [video.body.element.id, video.body.url, 64, 36]);
    assert.ok(Math.abs(v.duration - 1) < 0.1);
    assert.match(v.thumbnail_url, /^\/media\//);
    assert.equal(v.download_url, `${base}/elements/${v.id}/download?board_id=${board}`);
    const c = byName['Red card'];
    assert.deepEqual([c.id, c.type, c.width, c.height, c.duration], [cardId, 'html', 160, 90, 0.2]);
    assert.match(c.url, /^\/media\/html-renders\/.*-v2-160x90-.*\.mp4$/);
    const cardFile = await probeFile(path.join(t.dataDir, 'media', ...decodeURIComponent(c.url).split('/').slice(2)));
    assert.equal(cardFile.video?.codec, 'h264');
    assert.equal((await t.api('GET', c.thumbnail_url)).status, 200);
    assert.ok(!res.body.some((e: any) => e.id === audio.body.element.id), 'audio is not in the list');
    assert.equal(
      (await t.api('GET', `/api/moodboards/${board}`)).body.elements.length,
      countBefore,
      'nothing added to the board',
    );
    // a new version of the card gets a new video
    await t.api('PUT', `/api/moodboards/${board}/elements/${cardId}/html`, {
      html: '<!doctype html><body style="margin:0;background:#00f"></body>',
    });
    const again = (await t.api('GET', `${base}/elements?board_id=${board}`)).body.find((e: any) => e.id === cardId);
    assert.match(again.url, /-v3-160x90-/);

    // downloads
    const whole = await fetch(t.baseUrl + v.download_url);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-disposition'), 'attachment; filename=clip.mp4');
    const bytes = Buffer.from(await whole.arrayBuffer());
    assert.deepEqual(bytes, await fsp.readFile(path.join(t.dataDir, 'media', 'admin', board, 'clip.mp4')));
    const part = await fetch(t.baseUrl + v.download_url, { headers: { range: 'bytes=4-11' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 4-11/${bytes.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), bytes.subarray(4, 12));
    const cardDownload = await fetch(t.baseUrl + c.download_url);
    assert.equal(cardDownload.status, 200);
    assert.equal(cardDownload.headers.get('content-disposition'), 'attachment; filename="Red card.mp4"');
    assert.equal(cardDownload.headers.get('content-type'), 'video/mp4');
    const unsatisfiable = await fetch(t.baseUrl + v.download_url, {
      headers: { range: `bytes=${bytes.length + 10}-` },
    });
    assert.equal(unsatisfiable.status, 416);
    assert.equal((await t.api('GET', `${base}/elements/el_nothere/download?board_id=${board}`)).status, 404);
    assert.equal(
      (await t.api('GET', `${base}/elements/${audio.body.element.id}/download?board_id=${board}`)).status,
      400,
    );
    assert.equal((await t.api('GET', `${base}/elements?board_id=bd_nothere`)).status, 404);
  });

  it('leaves out a card whose video cannot be rendered, and still lists the rest', async () => {
    const noBrowser = await startService({ CHROMIUM_PATH: path.join(fx, 'no-chromium') });
    try {
      const b = await noBrowser.createBoard('No browser');
      const img = await noBrowser.upload(b, await makeImage(path.join(fx, 'still.png'), { width: 30, height: 30 }), {
        addToBoard: true,
      });
      const cardRes = await noBrowser.api('POST', `/api/moodboards/${b}/elements`, {
        type: 'html',
        name: 'card',
        width: 100,
        height: 100,
      });
      assert.equal(cardRes.status, 201, cardRes.text);
      const res = await noBrowser.api('GET', `${base}/elements?board_id=${b}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        res.body.map((e: any) => e.id),
        [img.body.element.id],
      );
      const download = await noBrowser.api('GET', `${base}/elements/${cardRes.body.id}/download?board_id=${b}`);
      assert.equal(download.status, 503, 'the download names the missing browser');
    } finally {
      await noBrowser.close();
    }
  });
});
