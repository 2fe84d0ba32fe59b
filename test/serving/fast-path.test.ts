import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { logCapture, startService, type TestService } from '../helpers/service.js';
import { rawRequest, type RawAnswer } from '../helpers/raw-http.js';

/**
 * Successful /media answers are written by the fast path (src/serving/fast-path.ts) before fastify sees the request;
 * `app.inject` still goes through fastify's route. Every request below is made both ways and must get the same status,
 * headers and body; the request log tells which path answered (fastify's lines carry a reqId, the fast path's not).
 */
const VARYING = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);
const TOKEN = 'fast-path-token-123';

function comparable(headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (!VARYING.has(k.toLowerCase())) out[k.toLowerCase()] = String(v);
  return out;
}

async function bothWays(
  svc: TestService,
  method: string,
  url: string,
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  const h = { host: `127.0.0.1:${svc.port}`, ...headers };
  const raw = await rawRequest(svc.port, method, url, h);
  const routed = await svc.service.app.inject({ method: method as 'GET', url, headers: h });
  const what = `${method} ${url} ${JSON.stringify(headers)}`;
  assert.equal(raw.status, routed.statusCode, what);
  assert.deepEqual(comparable(raw.headers), comparable(routed.headers), what);
  assert.ok(raw.body.equals(routed.rawPayload), what);
  return raw;
}

/** How many requests fastify answered and how many the fast path answered, from the request log. */
function answeredBy(lines: Record<string, unknown>[]) {
  const done = lines.filter((l) => l.msg === 'request completed');
  return { fastify: done.filter((l) => l.reqId !== undefined).length, fast: done.filter((l) => !l.reqId).length };
}

describe('the /media fast path answers as the fastify route does', () => {
  let svc: TestService;
  let board: string;
  let dir: string;
  let outside: string;
  const log = logCapture();
  const small = crypto.randomBytes(200_000);
  const big = crypto.randomBytes(3 * 1024 * 1024 + 17);

  before(async () => {
    svc = await startService({ ALLOWED_ORIGINS: 'app://board', LOG_LEVEL: 'info' }, { logStream: log.stream });
    board = await svc.createBoard();
    dir = await svc.service.ctx.media.boardDir(board);
    fs.writeFileSync(path.join(dir, 'clip.mp4'), small);
    fs.writeFileSync(path.join(dir, 'big.bin'), big);
    fs.writeFileSync(path.join(dir, 'card.html'), '<p>hi</p>');
    fs.writeFileSync(path.join(dir, '.secret'), 'dot');
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'bms-outside-'));
    fs.writeFileSync(path.join(outside, 'secret.mp4'), 'outside');
    fs.symlinkSync(path.join(outside, 'secret.mp4'), path.join(dir, 'escape.mp4'));
    fs.symlinkSync(path.join(dir, 'clip.mp4'), path.join(dir, 'alias.mp4'));
  });
  after(async () => {
    await svc.close();
    fs.rmSync(outside, { recursive: true, force: true });
  });

  test('200, 206, 304 and HEAD: same status, headers and bytes, answered by the fast path', async () => {
    const before = answeredBy(log.lines());
    const clip = `/media/${board}/clip.mp4`;
    const whole = await bothWays(svc, 'GET', clip);
    assert.equal(whole.status, 200);
    assert.ok(whole.body.equals(small));
    assert.equal(whole.headers['x-content-type-options'], 'nosniff');
    assert.match(String(whole.headers['content-security-policy']), /^sandbox/);
    assert.equal(
      (await bothWays(svc, 'GET', `/media/${board}/card.html`)).headers['content-type'],
      'text/html; charset=utf-8',
    );
    const range = await bothWays(svc, 'GET', clip, { range: 'bytes=65536-131071' });
    assert.equal(range.status, 206);
    assert.ok(range.body.equals(small.subarray(65536, 131072)));
    const streamed = await bothWays(svc, 'GET', `/media/${board}/big.bin`);
    assert.ok(streamed.body.equals(big));
    const streamedRange = await bothWays(svc, 'GET', `/media/${board}/big.bin`, { range: 'bytes=1000-2099999' });
    assert.ok(streamedRange.body.equals(big.subarray(1000, 2100000)));
    const etag = String(whole.headers.etag);
    assert.equal((await bothWays(svc, 'GET', clip, { 'if-none-match': etag })).status, 304);
    assert.equal(
      (await bothWays(svc, 'GET', clip, { 'if-modified-since': String(whole.headers['last-modified']) })).status,
      304,
    );
    const head = await bothWays(svc, 'HEAD', clip);
    assert.equal(head.headers['content-length'], String(small.length));
    assert.equal(head.body.length, 0);
    assert.equal((await bothWays(svc, 'HEAD', clip, { range: 'bytes=0-9' })).headers['content-length'], '10');
    // A link inside the board folder to a file inside it is served, as before.
    assert.ok((await bothWays(svc, 'GET', `/media/${board}/alias.mp4`)).body.equals(small));
    // A cache-busting query string, an allowed Origin (CORS headers), a cross-site <img> (embeddable).
    assert.equal((await bothWays(svc, 'GET', `${clip}?v=3`)).status, 200);
    const cors = await bothWays(svc, 'GET', clip, { origin: 'app://board', range: 'bytes=0-0' });
    assert.equal(cors.headers['access-control-allow-origin'], 'app://board');
    assert.equal((await bothWays(svc, 'GET', clip, { 'sec-fetch-site': 'cross-site' })).status, 200);

    const after = answeredBy(log.lines());
    assert.equal(after.fast - before.fast, 13, 'the raw requests were answered by the fast path');
    assert.equal(after.fastify - before.fastify, 13, 'the injected ones by fastify');
  });

  test('refusals and errors are fastify answers, the same ones', async () => {
    const before = answeredBy(log.lines());
    const clip = `/media/${board}/clip.mp4`;
    const cases: [string, string, Record<string, string>, number][] = [
      ['GET', `/media/${board}/.secret`, {}, 400],
      ['GET', `/media/${board}/escape.mp4`, {}, 404],
      ['GET', `/media/${board}/missing.mp4`, {}, 404],
      ['GET', clip, { origin: 'http://evil.example' }, 403],
      ['GET', clip, { origin: 'null' }, 403],
      ['GET', clip, { host: 'evil.example' }, 403],
      ['GET', clip, { range: 'bytes=999999-' }, 416],
      ['GET', clip, { 'if-match': '"other"' }, 412],
      ['GET', `${clip}?token=a&token=b`, {}, 400],
      ['DELETE', clip, {}, 404],
    ];
    for (const [method, url, headers, status] of cases) {
      const r = await bothWays(svc, method, url, headers);
      assert.equal(r.status, status, `${method} ${url} ${JSON.stringify(headers)}`);
      assert.equal(typeof r.json().error.code, 'string');
    }
    // `..` in any spelling (inject would resolve it before sending, so this one is sent raw only).
    assert.equal((await rawRequest(svc.port, 'GET', `/media/${board}/%2e%2e/${board}/clip.mp4`)).status, 400);
    const after = answeredBy(log.lines());
    assert.equal(after.fast, before.fast, 'the fast path answered none of them');
  });
});

test('with API_TOKEN, the fast path serves ?token= and bearer requests and logs the token redacted', async () => {
  const log = logCapture();
  const svc = await startService({ API_TOKEN: TOKEN, LOG_LEVEL: 'info' }, { logStream: log.stream });
  try {
    const created = await svc.api('POST', '/api/moodboards', { name: 't' }, { authorization: `Bearer ${TOKEN}` });
    const board = created.body.id as string;
    fs.writeFileSync(path.join(await svc.service.ctx.media.boardDir(board), 'a.mp4'), 'abc');
    const url = `/media/${board}/a.mp4`;
    assert.equal((await bothWays(svc, 'GET', url)).status, 401);
    assert.equal((await bothWays(svc, 'GET', `${url}?token=wrong`)).status, 401);
    assert.equal((await bothWays(svc, 'GET', `${url}?token=${TOKEN}&x=1`)).body.toString(), 'abc');
    assert.equal((await bothWays(svc, 'GET', url, { authorization: `Bearer ${TOKEN}` })).status, 200);
  } finally {
    await svc.close();
  }
  const fast = log.lines().filter((l) => l.msg === 'request completed' && !l.reqId);
  assert.equal(fast.length, 2);
  assert.ok(!JSON.stringify(log.lines()).includes(TOKEN));
  assert.match((fast[0].req as { url: string }).url, /\?token=\[redacted\]&x=1$/);
});

test('a board connected to another folder, or deleted, is seen at once by /media (the remembered folder is forgotten)', async () => {
  const svc = await startService();
  const folders = [1, 2].map(() => fs.mkdtempSync(path.join(os.tmpdir(), 'bms-connected-')));
  try {
    fs.writeFileSync(path.join(folders[0], 'f.txt'), 'first');
    fs.writeFileSync(path.join(folders[1], 'f.txt'), 'second');
    const board = await svc.createBoard();
    const url = `/media/${board}/f.txt`;
    assert.equal((await rawRequest(svc.port, 'GET', url)).status, 404, 'the default folder has no f.txt');
    assert.equal((await svc.api('PATCH', `/api/moodboards/${board}`, { connected_folder: folders[0] })).status, 200);
    assert.equal((await rawRequest(svc.port, 'GET', url)).body.toString(), 'first');
    assert.equal((await svc.api('PATCH', `/api/moodboards/${board}`, { connected_folder: folders[1] })).status, 200);
    assert.equal((await rawRequest(svc.port, 'GET', url)).body.toString(), 'second');
    assert.equal((await svc.api('DELETE', `/api/moodboards/${board}`)).status, 204);
    const gone = await rawRequest(svc.port, 'GET', url);
    assert.equal(gone.status, 404);
    assert.equal(gone.json().error.code, 'not_found');
  } finally {
    await svc.close();
    for (const f of folders) fs.rmSync(f, { recursive: true, force: true });
  }
});
