import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startLocalWorker, type LocalWorker } from '../../worker/local.js';
import { eventually, startService, type TestService } from '../helpers/service.js';
import { sampleBoard, TOKEN, type SampleBoard } from './board.js';

const MiB = 1024 * 1024;

/**
 * A pass-through in front of the worker that can refuse uploads of chosen paths: stands in for a connection that
 * fails part-way, to show that a retried share does not upload again what arrived.
 */
async function flakyProxy(
  target: string,
): Promise<{ url: string; failPaths: Set<string>; puts: string[]; close(): Promise<void> }> {
  const failPaths = new Set<string>();
  const puts: string[] = [];
  const server = http.createServer(async (req, res) => {
    const url = req.url ?? '/';
    if (req.method === 'PUT') puts.push(url);
    if ([...failPaths].some((p) => url.includes(p))) {
      req.resume();
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end('{"error":{"code":"test","message":"refused by the test proxy"}}');
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers))
      if (typeof v === 'string' && k !== 'host' && k !== 'connection') headers[k] = v;
    const upstream = await fetch(target + url, {
      method: req.method,
      headers,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
      redirect: 'manual',
    });
    const out: Record<string, string> = {};
    upstream.headers.forEach((v, k) => (out[k] = v));
    delete out['content-encoding'];
    res.writeHead(upstream.status, out).end(Buffer.from(await upstream.arrayBuffer()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    failPaths,
    puts,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** GET with the body always read (an unread body would keep its connection busy until garbage collection). */
async function get(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  const body = Buffer.from(await res.arrayBuffer());
  return {
    status: res.status,
    headers: res.headers,
    body,
    text: () => body.toString('utf8'),
    json: () => JSON.parse(body.toString('utf8')),
  };
}

describe('live shares on the worker (workerd)', () => {
  let worker: LocalWorker;
  let proxy: Awaited<ReturnType<typeof flakyProxy>>;
  let s: TestService;
  let sample: SampleBoard;
  let shareUrl: string;
  let publicUrl: string;
  let files: number;

  before(async () => {
    worker = await startLocalWorker({ port: 0, token: TOKEN });
    proxy = await flakyProxy(worker.url);
    s = await startService({
      SHARE_WORKER_URL: proxy.url,
      SHARE_WORKER_TOKEN: TOKEN,
      SHARE_UPLOAD_PART_BYTES: String(5 * MiB),
    });
    sample = await sampleBoard(s, { blobBytes: 11 * MiB });
  });
  after(async () => {
    await s?.close();
    await proxy?.close();
    await worker?.close();
  });

  it('shares the board; a failed upload retried sends only what did not arrive; large files go up in parts', async () => {
    // The first attempt fails on board.json, after every media file arrived.
    proxy.failPaths.add('/board.json');
    const failed = await s.api('POST', `/api/moodboards/${sample.board}/share`, { kind: 'live' });
    assert.equal(failed.status, 502, failed.text);
    proxy.failPaths.clear();
    const mediaPuts = proxy.puts.filter((u) => u.includes('/media/')).length;
    assert.ok(mediaPuts > 0);

    const res = await s.api('POST', `/api/moodboards/${sample.board}/share`, { kind: 'live' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.kind, 'live');
    assert.match(res.body.share_id, /^sh_/);
    assert.equal(res.body.url, `${proxy.url}/s/${res.body.share_id}/`);
    assert.equal(res.body.download_url, null);
    assert.equal(res.body.uploaded, 2, 'only board.json and index.html were still missing');
    assert.equal(res.body.skipped, res.body.files - 2);
    files = res.body.files;
    publicUrl = res.body.url;
    shareUrl = `${worker.url}/s/${res.body.share_id}/`;
    const parts = proxy.puts.filter((u) => u.includes('/api/multipart/') && u.includes('part='));
    assert.equal(parts.length, 3, '11 MiB in parts of 5 MiB');

    const again = await s.api('POST', `/api/moodboards/${sample.board}/share`, { kind: 'live' });
    assert.equal(again.status, 409, 'a complete live share is updated with PUT');
  });

  it('serves the page, board.json and media with ranges, ETags and conditional requests', async () => {
    const page = await get(shareUrl);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.match(page.headers.get('x-robots-tag') ?? '', /noindex/);
    const html = page.text();
    assert.match(html, /<meta name="robots" content="noindex, nofollow">/);
    assert.match(
      html,
      new RegExp(
        `<meta property="og:image" content="${publicUrl.replace(/[/.]/g, '\\$&')}media/[0-9a-f]{32}-w\\d+\\.jpg">`,
      ),
    );

    const board = (await get(`${shareUrl}board.json`)).json();
    assert.equal(board.elements.length, 6);
    const blobEl = board.elements.find((e: { id: string }) => e.id === sample.ids.blob);
    const full = (await get(shareUrl + blobEl.file.path)).body;
    assert.ok(full.equals(sample.blob), 'the multipart upload holds the exact bytes');

    const ranged = await get(shareUrl + blobEl.file.path, { range: 'bytes=100-199' });
    assert.equal(ranged.status, 206);
    assert.equal(ranged.headers.get('content-range'), `bytes 100-199/${sample.blob.length}`);
    assert.ok(ranged.body.equals(sample.blob.subarray(100, 200)));
    const suffix = await get(shareUrl + blobEl.file.path, { range: 'bytes=-10' });
    assert.ok(suffix.body.equals(sample.blob.subarray(-10)));
    const beyond = await get(shareUrl + blobEl.file.path, { range: `bytes=${sample.blob.length}-` });
    assert.equal(beyond.status, 416);
    assert.equal(beyond.headers.get('content-range'), `bytes */${sample.blob.length}`);

    const etag = ranged.headers.get('etag')!;
    assert.ok(etag);
    assert.equal((await get(shareUrl + blobEl.file.path, { 'if-none-match': etag })).status, 304);
    assert.equal((await get(shareUrl + blobEl.file.path, { 'if-match': '"other"' })).status, 412);
    const stale = await get(shareUrl + blobEl.file.path, { range: 'bytes=0-9', 'if-range': '"other"' });
    assert.equal(stale.status, 200, 'If-Range with another ETag gets the whole file');

    const red = board.elements.find((e: { id: string }) => e.id === sample.ids.red);
    assert.deepEqual(
      red.thumbs.map((t: { width: number }) => t.width),
      [320, 640],
    );
    const thumb = await get(shareUrl + red.thumbs[0].path);
    assert.equal(thumb.headers.get('content-type'), 'image/jpeg');
    const card = board.elements.find((e: { id: string }) => e.id === sample.ids.card);
    const cardDoc = await get(shareUrl + card.html.path);
    assert.match(cardDoc.headers.get('content-security-policy') ?? '', /sandbox/);
    assert.match(cardDoc.text(), /rgb\(0,200,0\)/);

    const unauth = await fetch(`${worker.url}/api/objects/sh_x/index.html`, {
      method: 'PUT',
      body: 'x',
      headers: { authorization: 'Bearer wrong-token-wrong-token' },
    });
    assert.equal(unauth.status, 401);
    assert.equal((await unauth.json()).error.code, 'unauthorized');
  });

  it('PUT uploads only what changed: nothing, then board.json alone after one element moved', async () => {
    const same = await s.api('PUT', `/api/moodboards/${sample.board}/share`);
    assert.equal(same.status, 200, same.text);
    assert.equal(same.body.uploaded, 0);
    assert.equal(same.body.skipped, files);
    assert.equal(same.body.url, `${proxy.url}/s/${same.body.share_id}/`);

    const moved = await s.api('PATCH', `/api/moodboards/${sample.board}/elements/${sample.ids.note}`, { x: 900 });
    assert.equal(moved.status, 200, moved.text);
    const before = proxy.puts.length;
    const changed = await s.api('PUT', `/api/moodboards/${sample.board}/share`, {});
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.uploaded, 1);
    assert.equal(changed.body.skipped, files - 1);
    assert.deepEqual(
      proxy.puts.slice(before).map((u) => u.split('/').pop()),
      ['board.json'],
    );
    const board = (await get(`${shareUrl}board.json`)).json();
    assert.equal(board.elements.find((e: { id: string }) => e.id === sample.ids.note).x, 900);
  });

  it('imports from the live URL in each mode', async () => {
    const target = await s.createBoard('Target');
    const keep = await s.api('POST', `/api/moodboards/${target}/elements`, {
      type: 'text',
      name: 'Existing',
      data: { text: 'old' },
    });

    const appended = await s.api('POST', `/api/moodboards/${target}/import`, { from_url: shareUrl, mode: 'append' });
    assert.equal(appended.status, 200, appended.text);
    assert.deepEqual(appended.body, { board_id: target, mode: 'append', imported: 6 });
    let els = (await s.api('GET', `/api/moodboards/${target}/elements`)).body as any[];
    assert.equal(els.length, 7);
    const blobCopy = els.find((e) => e.name === 'Data');
    const served = (await get(s.baseUrl + blobCopy.url)).body;
    assert.equal(
      crypto.createHash('sha256').update(served).digest('hex'),
      crypto.createHash('sha256').update(sample.blob).digest('hex'),
    );
    const cardCopy = els.find((e) => e.type === 'html');
    assert.equal(cardCopy.data.htmlVersion, 1);
    assert.match((await s.api('GET', cardCopy.url)).text, /rgb\(0,200,0\)/);

    const replaced = await s.api('POST', `/api/moodboards/${target}/import`, { from_url: shareUrl, mode: 'replace' });
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal(replaced.body.imported, 6);
    els = (await s.api('GET', `/api/moodboards/${target}/elements`)).body as any[];
    assert.equal(els.length, 6);
    assert.ok(!els.some((e) => e.id === keep.body.id), 'the old elements are gone');
    assert.equal((await s.api('GET', blobCopy.url)).status, 200, 'their files stay in the board folder');

    const fresh = await s.api('POST', `/api/moodboards/${target}/import`, { from_url: shareUrl, mode: 'new-board' });
    assert.equal(fresh.status, 200, fresh.text);
    assert.notEqual(fresh.body.board_id, target);
    const newBoard = (await s.api('GET', `/api/moodboards/${fresh.body.board_id}`)).body;
    assert.equal(newBoard.name, 'Shared board');
    assert.equal(newBoard.elements.length, 6);
    assert.equal(newBoard.elements.find((e: any) => e.name === 'Note').x, 900);
  });

  it('PUT after an element was removed deletes its files from the bucket', async () => {
    const before = (await get(`${shareUrl}board.json`)).json();
    const blue = before.elements.find((e: { id: string }) => e.id === sample.ids.blue);
    assert.equal((await s.api('DELETE', `/api/moodboards/${sample.board}/elements/${sample.ids.blue}`)).status, 204);
    const res = await s.api('PUT', `/api/moodboards/${sample.board}/share`, {});
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.uploaded, 1);
    assert.equal(res.body.files, files - 1 - blue.thumbs.length);
    assert.equal((await get(shareUrl + blue.file.path)).status, 404);
    assert.equal((await get(shareUrl + blue.thumbs[0].path)).status, 404);
    files = res.body.files;
    const head = await fetch(shareUrl, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.ok(Number(head.headers.get('content-length')) > 0);
  });

  it('DELETE removes every object: the page and its files answer 404', async () => {
    const board = (await get(`${shareUrl}board.json`)).json();
    const del = await s.api('DELETE', `/api/moodboards/${sample.board}/share`);
    assert.equal(del.status, 200, del.text);
    assert.equal(del.body.deleted, files);
    assert.equal((await get(shareUrl)).status, 404);
    assert.equal((await get(`${shareUrl}board.json`)).status, 404);
    assert.equal((await get(shareUrl + board.elements[0].thumbs?.[0]?.path)).status, 404);
    assert.equal((await s.api('PUT', `/api/moodboards/${sample.board}/share`, {})).status, 404);
    const gone = await s.api('POST', `/api/moodboards/${sample.board}/import`, { from_url: shareUrl, mode: 'append' });
    assert.equal(gone.status, 400);
    assert.match(gone.body.error.message, /not a shared board/);
  });

  it('deleting a board ends its live share', async () => {
    const board = await s.createBoard('Short-lived');
    await s.api('POST', `/api/moodboards/${board}/elements`, { type: 'text', name: 'n', data: { text: 'bye' } });
    const shared = await s.api('POST', `/api/moodboards/${board}/share`, { kind: 'live' });
    assert.equal(shared.status, 200, shared.text);
    const page = `${worker.url}/s/${shared.body.share_id}/`;
    assert.equal((await get(page)).status, 200);
    assert.equal((await s.api('DELETE', `/api/moodboards/${board}`)).status, 204);
    await eventually(async () => ((await get(page)).status === 404 ? true : undefined), 10_000, 'the share to go');
  });
});
