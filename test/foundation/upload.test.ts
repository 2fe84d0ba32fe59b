import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startService, type TestService } from '../helpers/service.js';

let svc: TestService;
before(async () => {
  svc = await startService({ MAX_UPLOAD_BYTES: String(256 * 1024) });
});
after(() => svc.close());

const boardFiles = (id: string) => fs.readdirSync(path.join(svc.dataDir, 'media', 'admin', id)).sort();

test('upload stores the file in the board folder and answers {filename, url}', async () => {
  const id = await svc.createBoard();
  const bytes = crypto.randomBytes(100_000);
  const res = await svc.upload(id, { name: 'photo.bin', data: bytes });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { filename: 'photo.bin', url: `/media/${id}/photo.bin` });
  assert.ok(fs.readFileSync(path.join(svc.dataDir, 'media', 'admin', id, 'photo.bin')).equals(bytes));
  const served = Buffer.from(await (await fetch(svc.baseUrl + res.body.url)).arrayBuffer());
  assert.ok(served.equals(bytes));
  const long = await fetch(`${svc.baseUrl}/media/admin/${id}/photo.bin`);
  assert.equal(long.status, 200, 'the /media/admin/<board>/<file> form serves the same file');
});

test('a second upload with the same name never overwrites: it gets a numbered name', async () => {
  const id = await svc.createBoard();
  const first = await svc.upload(id, { name: 'same.txt', data: 'one' });
  const second = await svc.upload(id, { name: 'same.txt', data: 'two' });
  const third = await svc.upload(id, { name: 'same.txt', data: 'three' });
  assert.equal(first.body.filename, 'same.txt');
  assert.equal(second.body.filename, 'same (1).txt');
  assert.equal(third.body.filename, 'same (2).txt');
  assert.equal(fs.readFileSync(path.join(svc.dataDir, 'media', 'admin', id, 'same.txt'), 'utf8'), 'one');
});

test('concurrent uploads of one name all survive', async () => {
  const id = await svc.createBoard();
  const results = await Promise.all(
    Array.from({ length: 8 }, (_, i) => svc.upload(id, { name: 'race.txt', data: `v${i}` })),
  );
  const names = new Set(results.map((r) => r.body.filename));
  assert.equal(names.size, 8);
  const contents = boardFiles(id)
    .map((f) => fs.readFileSync(path.join(svc.dataDir, 'media', 'admin', id, f), 'utf8'))
    .sort();
  assert.deepEqual(contents, Array.from({ length: 8 }, (_, i) => `v${i}`).sort());
});

test('filenames from the request are sanitised', async () => {
  const id = await svc.createBoard();
  const cases: [string, RegExp][] = [
    ['../../escape.txt', /^escape\.txt$/],
    ['..\\..\\win.txt', /^win\.txt$/],
    ['.hidden', /^hidden$/],
    ['con.txt', /^_con\.txt$/],
    [`a${'\u{1F600}'.repeat(60)}.png`, /^a\u{1F600}+\.png$/u],
    ['a\u0000b<>:|?*.txt', /^a_b[^<>:"|?*\\/\u0000]*\.txt$/],
  ];
  for (const [name, expected] of cases) {
    const res = await svc.upload(id, { name, data: 'x' });
    assert.equal(res.status, 200, name);
    assert.match(res.body.filename, expected, name);
  }
  assert.ok(boardFiles(id).every((f) => !f.startsWith('.')));
  assert.equal(fs.existsSync(path.join(svc.dataDir, 'media', 'escape.txt')), false);
});

test('a file part with an empty filename is stored under the fallback name (it was a 500)', async () => {
  const id = await svc.createBoard();
  // `filename=""`: the multipart parser then gives the part no filename at all.
  const res = await svc.upload(id, { name: '', data: 'x' }, { addToBoard: true });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.filename, 'upload');
  assert.equal(res.body.element.name, 'upload');
  assert.deepEqual(boardFiles(id), ['upload']);
});

test('add_to_board creates the element with merged data; type from the file', async () => {
  const id = await svc.createBoard();
  const res = await svc.upload(
    id,
    { name: 'page.html', data: '<p>hi</p>' },
    { addToBoard: true, data: { bridge_origin: 'messenger' } },
  );
  assert.equal(res.status, 200);
  assert.equal(res.body.element.type, 'html');
  assert.equal(res.body.element.url, res.body.url);
  assert.equal(res.body.element.data.bridge_origin, 'messenger');
  const bad = await svc.upload(id, { name: 'x.txt', data: 'x' }, { addToBoard: true, data: 'not-json' as never });
  assert.equal(bad.status, 400);
});

test('over MAX_UPLOAD_BYTES: 413 and no partial file left anywhere', async () => {
  const id = await svc.createBoard();
  const res = await svc.upload(id, { name: 'big.bin', data: crypto.randomBytes(300 * 1024) });
  assert.equal(res.status, 413);
  assert.equal(res.body.error.code, 'payload_too_large');
  assert.deepEqual(boardFiles(id), []);
  assert.deepEqual(fs.readdirSync(path.join(svc.dataDir, 'tmp')), []);
});

test('upload errors: unknown board 404, missing fields 400, not multipart 415', async () => {
  const unknown = await svc.upload('bd_missing', { name: 'a.txt', data: 'a' });
  assert.equal(unknown.status, 404);
  assert.deepEqual(fs.readdirSync(path.join(svc.dataDir, 'tmp')), []);

  const noFile = new FormData();
  noFile.set('board_id', await svc.createBoard());
  const r1 = await fetch(`${svc.baseUrl}/api/upload`, { method: 'POST', body: noFile });
  assert.equal(r1.status, 400);
  assert.match((await r1.json()).error.message, /file is required/);

  const noBoard = new FormData();
  noBoard.set('file', new Blob(['x']), 'x.txt');
  const r2 = await fetch(`${svc.baseUrl}/api/upload`, { method: 'POST', body: noBoard });
  assert.equal(r2.status, 400);
  assert.match((await r2.json()).error.message, /board_id is required/);

  const json = await svc.api('POST', '/api/upload', { board_id: 'x' });
  assert.equal(json.status, 415);

  const noBoundary = await svc.api('POST', '/api/upload', 'x', { 'content-type': 'multipart/form-data' });
  assert.equal(noBoundary.status, 400);
  const board = await svc.createBoard();
  const cut = await svc.api(
    'POST',
    '/api/upload',
    `--b\r\nContent-Disposition: form-data; name="board_id"\r\n\r\n${board}\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\n\r\nhalf a fi`,
    { 'content-type': 'multipart/form-data; boundary=b' },
  );
  assert.equal(cut.status, 400);
  assert.equal(cut.body.error.code, 'malformed_multipart');
  assert.deepEqual(boardFiles(board), []);
  assert.deepEqual(fs.readdirSync(path.join(svc.dataDir, 'tmp')), []);
});
