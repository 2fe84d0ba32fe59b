import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { startService, waitForJob, type TestService } from '../helpers/service.js';
import { writeFakeTool } from '../helpers/fake-tool.js';
import { makeVideo, probeFile, tempDir } from '../helpers/fixtures.js';

const LIMIT = 512 * 1024;

let t: TestService;
let board: string;
let fx: string;
let server: http.Server;
let origin: string;
let png: Buffer;
let mp4: Buffer;

/** The local web server the downloads run against. */
function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url!, origin);
  const hops = /^\/r\/(\d+)$/.exec(url.pathname);
  if (hops) {
    const n = Number(hops[1]);
    res.writeHead(302, { location: n > 1 ? `/r/${n - 1}` : '/image.png' }).end();
    return;
  }
  switch (url.pathname) {
    case '/image.png':
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
      return;
    case '/files/clip':
      res
        .writeHead(200, {
          'content-type': 'application/octet-stream',
          'content-disposition': 'attachment; filename="holiday clip.bin"',
        })
        .end(mp4);
      return;
    case '/lies.png':
      res.writeHead(200, { 'content-type': 'image/png' }).end('just some text, not a picture');
      return;
    case '/notes.txt':
      res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
      return;
    case '/page':
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>post</title>');
      return;
    case '/sniffed-page':
      res
        .writeHead(200, { 'content-type': 'application/octet-stream' })
        .end('<!DOCTYPE html><html><body>hi</body></html>');
      return;
    case '/big':
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': LIMIT * 2 });
      res.end(Buffer.concat([png, Buffer.alloc(LIMIT * 2 - png.length)]));
      return;
    case '/big-chunked': {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      let sent = 0;
      const push = () => {
        if (sent > LIMIT * 4 || res.destroyed) return res.end();
        sent += 8192;
        res.write(Buffer.alloc(8192, 1), () => setImmediate(push));
      };
      push();
      return;
    }
    case '/slow': {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.write(png.subarray(0, 16));
      const timer = setInterval(() => res.write(Buffer.alloc(1)), 200);
      res.on('close', () => clearInterval(timer));
      return;
    }
    case '/to-ftp':
      res.writeHead(301, { location: 'ftp://example.invalid/file.png' }).end();
      return;
    default:
      res.writeHead(404).end('not here');
  }
}

async function download(body: Record<string, unknown>, svc = t) {
  return svc.api('POST', '/api/download', { board_id: board, ...body });
}

before(async () => {
  fx = await tempDir();
  png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#229944' } })
    .png()
    .toBuffer();
  mp4 = await fsp.readFile(await makeVideo(path.join(fx, 'clip.mp4'), { duration: 1, tone: 440 }));
  server = http.createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t = await startService({
    DOWNLOAD_MAX_BYTES: String(LIMIT),
    DOWNLOAD_TIMEOUT_MS: '1500',
    YTDLP_PATH: path.join(fx, 'missing-yt-dlp'),
  });
  board = await t.createBoard('downloads');
});

after(async () => {
  await t?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  if (fx) await fsp.rm(fx, { recursive: true, force: true });
});

describe('download', () => {
  it('stores a direct image as a new element', async () => {
    const res = await download({ url: `${origin}/image.png` });
    assert.equal(res.status, 200, res.text);
    const [el] = res.body.elements;
    assert.equal(el.type, 'image');
    assert.equal(el.url, `/media/${board}/image.png`);
    const served = Buffer.from(await (await fetch(t.baseUrl + el.url)).arrayBuffer());
    assert.deepEqual(served, png);
  });

  it('types a file by its bytes and names it from Content-Disposition', async () => {
    const res = await download({ url: `${origin}/files/clip` });
    assert.equal(res.status, 200, res.text);
    const [el] = res.body.elements;
    assert.equal(el.type, 'video');
    assert.equal(el.name, 'holiday clip.mp4');
    const info = await probeFile(path.join(t.dataDir, 'media', 'admin', board, 'holiday clip.mp4'));
    assert.equal(info.video?.codec, 'h264');
  });

  it('follows up to 5 redirects and refuses a sixth', async () => {
    const ok = await download({ url: `${origin}/r/5` });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.elements[0].type, 'image');
    const tooMany = await download({ url: `${origin}/r/6` });
    assert.equal(tooMany.status, 502);
    assert.equal(tooMany.body.error.code, 'too_many_redirects');
    const ftp = await download({ url: `${origin}/to-ftp` });
    assert.equal(ftp.status, 502);
    assert.match(ftp.body.error.message, /ftp:/);
  });

  it('refuses what is not media with 415', async () => {
    for (const p of ['/lies.png', '/notes.txt', '/page', '/sniffed-page']) {
      const res = await download({ url: origin + p });
      assert.equal(res.status, 415, `${p}: ${res.text}`);
      assert.equal(res.body.error.code, 'not_media');
    }
  });

  it('is 413 over the size limit, with and without Content-Length', async () => {
    for (const p of ['/big', '/big-chunked']) {
      const res = await download({ url: origin + p });
      assert.equal(res.status, 413, `${p}: ${res.text}`);
    }
  });

  it('is 504 when the transfer outlasts the time limit', async () => {
    const started = Date.now();
    const res = await download({ url: `${origin}/slow` });
    assert.equal(res.status, 504, res.text);
    assert.ok(Date.now() - started < 30_000, 'the 1.5 s limit fired, not the slow server ending on its own');
  });

  it('is 400 for other schemes and 502 for unreachable or failing servers', async () => {
    for (const url of ['ftp://example.com/a.png', 'file:///etc/passwd', 'not a url']) {
      assert.equal((await download({ url })).status, 400, url);
    }
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const refused = await download({ url: `http://127.0.0.1:${port}/x.png` });
    assert.equal(refused.status, 502);
    assert.equal(refused.body.error.code, 'unreachable');
    const missing = await download({ url: `${origin}/nothing.png` });
    assert.equal(missing.status, 502);
    assert.match(missing.body.error.message, /404/);
  });

  it('leaves no partial files behind', async () => {
    const names = await fsp.readdir(path.join(t.dataDir, 'media', 'admin', board));
    assert.deepEqual(
      names.filter((n) => n.startsWith('.tmp-')),
      [],
    );
  });

  it('runs as a job with async: true', async () => {
    const res = await download({ url: `${origin}/image.png`, async: true });
    assert.equal(res.status, 202, res.text);
    const job = await waitForJob(t, res.body.job_id, { timeoutMs: 20_000, what: 'download job' });
    assert.equal(job.status, 'complete', job.error);
    assert.equal(job.result.elements[0].type, 'image');
    assert.equal(job.output_url, job.result.elements[0].url);
    const failed = await download({ url: `${origin}/notes.txt`, async: true });
    const failedJob = await waitForJob(t, failed.body.job_id, { timeoutMs: 20_000, what: 'failing download job' });
    assert.equal(failedJob.status, 'error');
    assert.match(failedJob.error, /not an image, video or audio/);
  });

  it('hands web pages to yt-dlp when it is installed, one element per media file', async () => {
    await fsp.writeFile(path.join(fx, 'one.png'), png);
    // Stands in for yt-dlp: writes two media files and an info file into the -P folder.
    const fake = await writeFakeTool(
      fx,
      'yt-dlp',
      `import fs from 'node:fs';
import path from 'node:path';
const args = process.argv.slice(2);
if (args[0] === '--version') {
  console.log('2099.01.01');
  process.exit(0);
}
const out = args[args.indexOf('-P') + 1];
if (args.at(-1) !== ${JSON.stringify(`${origin}/page`)}) process.exit(3);
fs.copyFileSync(${JSON.stringify(path.join(fx, 'one.png'))}, path.join(out, '001-Post_image.png'));
fs.copyFileSync(${JSON.stringify(path.join(fx, 'clip.mp4'))}, path.join(out, '002-Post_video.mp4'));
fs.writeFileSync(path.join(out, '002-Post_video.info.json'), '{}');
`,
    );
    const svc = await startService({ YTDLP_PATH: fake });
    try {
      const b = await svc.createBoard('social');
      const res = await svc.api('POST', '/api/download', { board_id: b, url: `${origin}/page` });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        res.body.elements.map((e: { type: string }) => e.type),
        ['image', 'video'],
      );
      assert.deepEqual(
        res.body.elements.map((e: { name: string }) => e.name),
        ['Post_image.png', 'Post_video.mp4'],
      );
    } finally {
      await svc.close();
    }
  });
});
