import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startService, type TestService } from '../helpers/service.js';
import { rawRequest } from '../helpers/raw-http.js';

// Bodies above 1 MiB are streamed in 1 MiB reads, smaller ones read at once: both paths, their edges, and what must
// never be served (FIFOs, directories).
let svc: TestService;
let board: string;
let dir: string;
const big = crypto.randomBytes(2 * 1024 * 1024 + 123);

before(async () => {
  svc = await startService();
  board = await svc.createBoard();
  dir = await svc.service.ctx.media.boardDir(board);
  fs.writeFileSync(path.join(dir, 'big.bin'), big);
});
after(() => svc.close());

const get = (p: string, headers: Record<string, string> = {}, method = 'GET') =>
  rawRequest(svc.port, method, `/media/${board}/${p}`, headers);

test('a file larger than one read streams whole and in ranges that cross read boundaries', async () => {
  const whole = await get('big.bin');
  assert.equal(whole.status, 200);
  assert.ok(whole.body.equals(big));
  const span = await get('big.bin', { range: 'bytes=1048000-2000000' });
  assert.equal(span.status, 206);
  assert.equal(span.headers['content-range'], `bytes 1048000-2000000/${big.length}`);
  assert.ok(span.body.equals(big.subarray(1048000, 2000001)));
  const exactlyOneRead = await get('big.bin', { range: 'bytes=5-1048580' });
  assert.ok(exactlyOneRead.body.equals(big.subarray(5, 1048581)));
});

test('HEAD of a streamed file keeps its Content-Length and sends no body', async () => {
  const head = await get('big.bin', {}, 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.headers['content-length'], String(big.length));
  assert.equal(head.body.length, 0);
  const range = await get('big.bin', { range: 'bytes=10-19' }, 'HEAD');
  assert.equal(range.status, 206);
  assert.equal(range.headers['content-length'], '10');
});

test('If-Match with another validator fails with 412; with the current one it serves', async () => {
  const etag = String((await get('big.bin', {}, 'HEAD')).headers.etag);
  const failed = await get('big.bin', { 'if-match': '"other"' });
  assert.equal(failed.status, 412);
  assert.equal(failed.json().error.code, 'precondition_failed');
  assert.equal((await get('big.bin', { 'if-match': etag.replace(/^W\//, ''), range: 'bytes=0-0' })).status, 206);
});

test('a FIFO or a directory in a board folder is not served (and does not hang the service)', async () => {
  execFileSync('mkfifo', [path.join(dir, 'pipe.mp4')]);
  fs.mkdirSync(path.join(dir, 'folder.mp4'));
  assert.equal((await get('pipe.mp4')).status, 404);
  assert.equal((await get('folder.mp4')).status, 404);
  assert.equal((await get('big.bin', { range: 'bytes=0-3' })).status, 206, 'the service still answers');
});

test(
  'a client that goes away mid-body leaves no descriptor of the file open',
  { skip: process.platform !== 'linux' },
  async () => {
    const target = path.join(fs.realpathSync(dir), 'big.bin');
    const fds = () =>
      fs.readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`) === target;
        } catch {
          return false;
        }
      }).length;
    const before = fds();
    assert.equal(before, 0);
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve) => {
        const req = (globalThis as unknown as { fetch: typeof fetch }).fetch(`${svc.baseUrl}/media/${board}/big.bin`);
        void req.then(async (res) => {
          const reader = res.body!.getReader();
          await reader.read();
          await reader.cancel();
          resolve();
        });
      });
    }
    // The stream closes its descriptor asynchronously after the socket closes.
    for (let i = 0; i < 50 && fds() > before; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(fds() <= before, `${fds()} descriptors open, ${before} before`);
  },
);
