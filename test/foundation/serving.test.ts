import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import { eventually, startService, type TestService } from '../helpers/service.js';
import { rawRequest } from '../helpers/raw-http.js';

let svc: TestService;
let board: string;
let url: string;
const bytes = crypto.randomBytes(10_000);

before(async () => {
  svc = await startService();
  board = await svc.createBoard();
  url = (await svc.upload(board, { name: 'data.mp4', data: bytes })).body.url;
});
after(() => svc.close());

const get = (headers: Record<string, string> = {}, method = 'GET', path = url) =>
  rawRequest(svc.port, method, path, headers);

test('full GET: 200, length, type, validators, Accept-Ranges', async () => {
  const r = await get();
  assert.equal(r.status, 200);
  assert.ok(r.body.equals(bytes));
  assert.equal(r.headers['content-length'], '10000');
  assert.equal(r.headers['content-type'], 'video/mp4');
  assert.equal(r.headers['accept-ranges'], 'bytes');
  assert.ok(r.headers.etag);
  assert.ok(r.headers['last-modified']);
  assert.match(String(r.headers['content-security-policy']), /sandbox/);
});

test('single, open-ended and suffix ranges answer 206 with Content-Range', async () => {
  const single = await get({ range: 'bytes=100-199' });
  assert.equal(single.status, 206);
  assert.equal(single.headers['content-range'], 'bytes 100-199/10000');
  assert.ok(single.body.equals(bytes.subarray(100, 200)));

  const open = await get({ range: 'bytes=9990-' });
  assert.equal(open.status, 206);
  assert.equal(open.headers['content-range'], 'bytes 9990-9999/10000');
  assert.ok(open.body.equals(bytes.subarray(9990)));

  const suffix = await get({ range: 'bytes=-10' });
  assert.equal(suffix.status, 206);
  assert.equal(suffix.headers['content-range'], 'bytes 9990-9999/10000');

  const clamped = await get({ range: 'bytes=9000-20000' });
  assert.equal(clamped.status, 206);
  assert.equal(clamped.headers['content-range'], 'bytes 9000-9999/10000');
  assert.equal(clamped.body.length, 1000);
});

test('unsatisfiable ranges answer 416 with bytes */size; other range units are ignored (200)', async () => {
  const r = await get({ range: 'bytes=20000-30000' });
  assert.equal(r.status, 416);
  assert.equal(r.headers['content-range'], 'bytes */10000');
  assert.equal(r.json().error.code, 'range_not_satisfiable');
  const otherUnit = await get({ range: 'items=0-5' });
  assert.equal(otherUnit.status, 200);
  assert.equal(otherUnit.body.length, 10000);
});

test('HEAD gives the headers without a body', async () => {
  const r = await get({}, 'HEAD');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-length'], '10000');
  assert.equal(r.body.length, 0);
});

test('conditional requests: If-None-Match and If-Modified-Since give 304; a stale If-Range gives the whole file', async () => {
  const first = await get();
  const etag = String(first.headers.etag);
  assert.equal((await get({ 'if-none-match': etag })).status, 304);
  assert.equal((await get({ 'if-modified-since': String(first.headers['last-modified']) })).status, 304);
  assert.equal((await get({ 'if-none-match': 'W/"other"' })).status, 200);
  const fresh = await get({ range: 'bytes=0-9', 'if-range': etag });
  assert.equal(fresh.status, 206);
  const stale = await get({ range: 'bytes=0-9', 'if-range': 'W/"stale"' });
  assert.equal(stale.status, 200);
  assert.equal(stale.body.length, 10000);
});

test('files at the media root are served at /media/<name>', async () => {
  fs.writeFileSync(path.join(svc.dataDir, 'media', 'share-archive-x.zip'), 'zipbytes');
  const r = await rawRequest(svc.port, 'GET', '/media/share-archive-x.zip');
  assert.equal(r.status, 200);
  assert.equal(r.body.toString(), 'zipbytes');
  assert.equal(r.headers['content-type'], 'application/zip');
});

test('no request can leave the media root', async () => {
  fs.writeFileSync(path.join(svc.dataDir, 'secret.txt'), 'secret');
  const outside = path.join(path.dirname(svc.dataDir), `outside-${Date.now()}.txt`);
  fs.writeFileSync(outside, 'outside');
  fs.symlinkSync(outside, path.join(svc.dataDir, 'media', 'admin', board, 'link.txt'));
  fs.symlinkSync(path.join(svc.dataDir), path.join(svc.dataDir, 'media', 'admin', board, 'dirlink'));
  const attempts = [
    '/media/../secret.txt',
    '/media/%2e%2e/secret.txt',
    `/media/${board}/..%2f..%2f..%2fsecret.txt`,
    `/media/${board}/%2e%2e%2f%2e%2e%2f%2e%2e%2fsecret.txt`,
    `/media/${board}/..%5c..%5csecret.txt`,
    `/media/${board}/%00secret.txt`,
    `/media/${board}/data.mp4%00.txt`,
    `/media/${encodeURIComponent(path.join(svc.dataDir, 'secret.txt'))}`,
    '/media//etc/passwd',
    '/media/C:%5cWindows%5cwin.ini',
    `/media/${board}/link.txt`,
    `/media/${board}/dirlink/secret.txt`,
    `/media/admin/${board}/../../../secret.txt`,
    '/media/%zz',
  ];
  for (const p of attempts) {
    const r = await rawRequest(svc.port, 'GET', p);
    assert.ok(r.status === 400 || r.status === 404, `${p} -> ${r.status}`);
    assert.ok(!r.body.toString().includes('secret') || r.headers['content-type']?.includes('json'), p);
    assert.ok(!r.body.toString().includes('outside'), p);
  }
  fs.rmSync(outside);
});

test('read buffers used again never mix answers: pipelined ranges a client has not read keep their bytes', async () => {
  const big = crypto.randomBytes(8 * 1024 * 1024);
  const bigUrl = (await svc.upload(board, { name: 'big.bin', data: big })).body.url;
  const range = (i: number, length: number) => ({ start: (i * 104_729 + 17) % (big.length - length), length });
  // 64 ranges of 256 KiB asked at once on one connection, not read for a while: past the kernel's socket buffers the
  // answers wait inside the server, each holding its read buffer.
  const piped = Array.from({ length: 64 }, (_, i) => range(i, 256 * 1024));
  const socket = net.connect(svc.port, '127.0.0.1');
  await once(socket, 'connect');
  socket.pause();
  socket.write(
    piped
      .map(
        ({ start, length }) =>
          `GET ${bigUrl} HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes=${start}-${start + length - 1}\r\n\r\n`,
      )
      .join(''),
  );
  await new Promise((resolve) => setTimeout(resolve, 300));
  // Meanwhile other answers are read in full, into whatever buffers the server has to spare.
  const others = Array.from({ length: 200 }, (_, i) => range(i + 1000, 1 + ((i * 7919) % (256 * 1024))));
  for (const { start, length } of others) {
    const r = await get({ range: `bytes=${start}-${start + length - 1}` }, 'GET', bigUrl);
    assert.ok(r.body.equals(big.subarray(start, start + length)), `range ${start}+${length} has other bytes`);
  }
  // Now the held answers, in order: headers, then Content-Length bytes each.
  let buffered = Buffer.alloc(0);
  socket.on('data', (c: Buffer) => (buffered = Buffer.concat([buffered, c])));
  socket.resume();
  for (const { start, length } of piped) {
    await eventually(
      () => {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return undefined;
        const size = Number(/content-length: (\d+)/i.exec(buffered.subarray(0, end).toString())?.[1]);
        return buffered.length >= end + 4 + size ? true : undefined;
      },
      10_000,
      'a pipelined answer',
    );
    const end = buffered.indexOf('\r\n\r\n');
    const head = buffered.subarray(0, end).toString();
    assert.match(head, /^HTTP\/1\.1 206/);
    const body = buffered.subarray(end + 4, end + 4 + length);
    assert.ok(body.equals(big.subarray(start, start + length)), `pipelined range ${start}+${length} has other bytes`);
    buffered = buffered.subarray(end + 4 + length);
  }
  socket.destroy();
});

test('bodies above 1 MiB: whole file and a range arrive whole; a client that goes away mid-body leaves no open file', async () => {
  const big = crypto.randomBytes(5 * 1024 * 1024 + 123);
  const bigUrl = (await svc.upload(board, { name: 'large.bin', data: big })).body.url;
  const whole = await get({}, 'GET', bigUrl);
  assert.equal(whole.status, 200);
  assert.ok(whole.body.equals(big));
  const start = 777_777;
  const end = start + 3 * 1024 * 1024 + 4;
  const part = await get({ range: `bytes=${start}-${end}` }, 'GET', bigUrl);
  assert.equal(part.status, 206);
  assert.ok(part.body.equals(big.subarray(start, end + 1)));

  if (!fs.existsSync('/proc/self/fd')) return; // the descriptor count is read from Linux's /proc
  const openFiles = () => fs.readdirSync('/proc/self/fd').length;
  const before = openFiles();
  for (let i = 0; i < 5; i++) {
    const socket = net.connect(svc.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write(`GET ${bigUrl} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    await once(socket, 'data');
    socket.destroy();
  }
  await eventually(() => (openFiles() <= before ? true : undefined), 5000, 'the files to be closed');
});
