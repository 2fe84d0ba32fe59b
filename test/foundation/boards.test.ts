import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startService, eventually, type TestService } from '../helpers/service.js';
import { makeCorrupt, makeImage, makeVideo, tempDir } from '../helpers/fixtures.js';
import { rawRequest } from '../helpers/raw-http.js';

let svc: TestService;
let fx: string;
before(async () => {
  svc = await startService();
  fx = await tempDir();
});
after(async () => {
  await svc.close();
  fs.rmSync(fx, { recursive: true, force: true });
});

test('board CRUD: create, list with element_count, get, rename, delete', async () => {
  const created = await svc.api('POST', '/api/moodboards', { name: '  Mood  ' });
  assert.equal(created.status, 201);
  assert.equal(created.body.name, 'Mood');
  assert.match(created.body.id, /^bd_[0-9a-z]{12}$/);
  const id = created.body.id;

  const list = await svc.api('GET', '/api/moodboards');
  const row = list.body.find((b: any) => b.id === id);
  assert.deepEqual(Object.keys(row).sort(), ['created_at', 'element_count', 'id', 'name', 'updated_at']);
  assert.equal(row.element_count, 0);

  await svc.api('POST', `/api/moodboards/${id}/elements`, { type: 'text', name: 'note', data: { text: 'hi' } });
  const again = await svc.api('GET', '/api/moodboards');
  assert.equal(again.body.find((b: any) => b.id === id).element_count, 1);

  const got = await svc.api('GET', `/api/moodboards/${id}`);
  assert.equal(got.status, 200);
  assert.equal(got.body.connected_folder, null);
  assert.equal(got.body.elements.length, 1);

  const renamed = await svc.api('PATCH', `/api/moodboards/${id}`, { name: 'Renamed' });
  assert.equal(renamed.body.name, 'Renamed');
  assert.ok(renamed.body.updated_at >= created.body.updated_at);

  const del = await svc.api('DELETE', `/api/moodboards/${id}`);
  assert.equal(del.status, 204);
  assert.equal((await svc.api('GET', `/api/moodboards/${id}`)).status, 404);
});

test('deleting a board moves its media to the trash instead of destroying it', async () => {
  const id = await svc.createBoard();
  const up = await svc.upload(id, { name: 'keep.txt', data: 'precious' });
  assert.equal(up.status, 200);
  assert.equal((await svc.api('DELETE', `/api/moodboards/${id}`)).status, 204);
  const trash = path.join(svc.dataDir, 'trash');
  const moved = fs.readdirSync(trash).find((d) => d.startsWith(`${id}-`));
  assert.ok(moved, 'board folder is in the trash');
  assert.equal(fs.readFileSync(path.join(trash, moved, 'keep.txt'), 'utf8'), 'precious');
  assert.equal(fs.existsSync(path.join(svc.dataDir, 'media', 'admin', id)), false);
});

test('element CRUD with validation and 404s', async () => {
  const id = await svc.createBoard();
  const up = await svc.upload(id, { name: 'a.txt', data: 'x' });
  const created = await svc.api('POST', `/api/moodboards/${id}/elements`, {
    type: 'file',
    url: up.body.url,
    name: 'A',
    x: 10,
    y: 20,
    width: 100,
    height: 50,
    data: { k: 1 },
  });
  assert.equal(created.status, 201);
  const el = created.body;
  assert.deepEqual(Object.keys(el).sort(), [
    'board_id',
    'created_at',
    'data',
    'height',
    'id',
    'name',
    'type',
    'updated_at',
    'url',
    'width',
    'x',
    'y',
  ]);
  assert.equal(el.url, `/media/${id}/a.txt`);

  const patched = await svc.api('PATCH', `/api/moodboards/${id}/elements/${el.id}`, {
    x: 5,
    data: { k: null, extra: 'y' },
  });
  assert.equal(patched.status, 200);
  assert.equal(patched.body.x, 5);
  assert.equal(patched.body.y, 20);
  assert.deepEqual(patched.body.data, { extra: 'y' });

  const listed = await svc.api('GET', `/api/moodboards/${id}/elements?type=file`);
  assert.deepEqual(
    listed.body.map((e: any) => e.id),
    [el.id],
  );
  assert.equal((await svc.api('GET', `/api/moodboards/${id}/elements?type=video`)).body.length, 0);

  assert.equal((await svc.api('DELETE', `/api/moodboards/${id}/elements/${el.id}`)).status, 204);
  assert.equal((await svc.api('GET', `/api/moodboards/${id}/elements/${el.id}`)).status, 404);
  // The file stays: removing a card never destroys a user's file.
  assert.equal((await svc.api('GET', up.body.url)).status, 200);

  const other = await svc.createBoard();
  const foreign = await svc.api('POST', `/api/moodboards/${other}/elements`, { type: 'text', name: 't' });
  assert.equal(
    (await svc.api('GET', `/api/moodboards/${id}/elements/${foreign.body.id}`)).status,
    404,
    'element of another board',
  );
});

test('bad element requests answer 400 naming the problem, unknown boards 404', async () => {
  const id = await svc.createBoard();
  const cases: [unknown, RegExp][] = [
    [{ type: 'hologram', url: '/media/x' }, /type/],
    [{ type: 'image' }, /url is required/],
    [{ type: 'image', url: `/media/${id}/missing.png` }, /url: No media file/],
    [{ type: 'image', url: '/etc/passwd' }, /not a \/media/],
    [{ type: 'text', bogus: 1 }, /unknown field "bogus"/],
    [{ type: 'text', x: 'left' }, /body\.x/],
  ];
  for (const [body, message] of cases) {
    const res = await svc.api('POST', `/api/moodboards/${id}/elements`, body);
    const expected = /No media file/.test(String(message)) ? 404 : 400;
    assert.equal(res.status, expected, JSON.stringify(body));
    assert.match(res.body.error.message, message);
    assert.equal(typeof res.body.error.code, 'string');
  }
  const unknown = await svc.api('POST', '/api/moodboards/bd_nope/elements', { type: 'text' });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.error.code, 'not_found');
});

test('malformed JSON, empty bodies and wrong content types are 4xx with the error body', async () => {
  const bad = await svc.api('POST', '/api/moodboards', '{"name": ');
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, 'malformed_json');
  const empty = await svc.api('POST', '/api/moodboards', '', { 'content-type': 'application/json' });
  assert.equal(empty.status, 400);
  assert.ok(empty.body.error.message);
  const xml = await svc.api('POST', '/api/moodboards', '<name/>', { 'content-type': 'application/xml' });
  assert.equal(xml.status, 415);
  assert.equal(xml.body.error.code, 'unsupported_media_type');
  const nope = await svc.api('GET', '/api/no-such-thing');
  assert.equal(nope.status, 404);
  assert.equal(nope.body.error.code, 'not_found');
  const badUrl = await rawRequest(svc.port, 'GET', '/api/moodboards/%zz');
  assert.equal(badUrl.status, 400);
  assert.equal(badUrl.json().error.code, 'bad_url');
  const jobs = await svc.api('GET', '/api/jobs?limit=Infinity');
  assert.ok(jobs.status === 400 || jobs.status === 200, `limit=Infinity -> ${jobs.status}`);
  assert.ok(jobs.status !== 200 || Array.isArray(jobs.body.jobs));
});

test('data keys the service owns cannot be set by a client (POST, PATCH or upload)', async () => {
  // htmlVersion is one of the keys the html feature owns (SERVICE_DATA_KEYS).
  const id = await svc.createBoard();
  const post = await svc.api('POST', `/api/moodboards/${id}/elements`, { type: 'text', data: { htmlVersion: 1 } });
  assert.equal(post.status, 400);
  assert.match(post.body.error.message, /data\.htmlVersion is managed by the service/);
  const el = (await svc.api('POST', `/api/moodboards/${id}/elements`, { type: 'text', data: { mine: 1 } })).body;
  const patch = await svc.api('PATCH', `/api/moodboards/${id}/elements/${el.id}`, { data: { htmlVersion: 'x' } });
  assert.equal(patch.status, 400);
  const up = await svc.upload(id, { name: 'a.txt', data: 'a' }, { addToBoard: true, data: { htmlVersion: true } });
  assert.equal(up.status, 400);
  assert.deepEqual(fs.readdirSync(path.join(svc.dataDir, 'media', 'admin', id)), [], 'the refused upload left no file');
});

test('absurdly deep JSON is a 400, not a stack overflow', async () => {
  const id = await svc.createBoard();
  const el = (await svc.api('POST', `/api/moodboards/${id}/elements`, { type: 'text' })).body;
  const deep = `{"data":{"k":${'['.repeat(5000)}${']'.repeat(5000)}}}`;
  const r = await svc.api('PATCH', `/api/moodboards/${id}/elements/${el.id}`, deep);
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, 'too_deep');
  const ok = await svc.api('PATCH', `/api/moodboards/${id}/elements/${el.id}`, { data: { k: [[[1]]] } });
  assert.equal(ok.status, 200);
});

test('connected folder: files go to and are served from the folder the board is connected to', async () => {
  const id = await svc.createBoard();
  const folder = await tempDir('bms-connected-');
  const res = await svc.api('PATCH', `/api/moodboards/${id}`, { connected_folder: folder });
  assert.equal(res.status, 200);
  assert.equal(res.body.connected_folder, fs.realpathSync(folder));
  const up = await svc.upload(id, { name: 'here.txt', data: 'in folder' });
  assert.equal(fs.readFileSync(path.join(folder, 'here.txt'), 'utf8'), 'in folder');
  assert.equal((await svc.api('GET', up.body.url)).text, 'in folder');
  for (const bad of ['relative/dir', '/definitely/not/here', '/', svc.dataDir, path.join(svc.dataDir, 'media')]) {
    const r = await svc.api('PATCH', `/api/moodboards/${id}`, { connected_folder: bad });
    assert.equal(r.status, 400, bad);
  }
  // Once the board has file elements, its folder cannot change under them (their URLs would point elsewhere).
  await svc.api('POST', `/api/moodboards/${id}/elements`, { type: 'file', url: up.body.url });
  const other = await tempDir('bms-connected-');
  const moved = await svc.api('PATCH', `/api/moodboards/${id}`, { connected_folder: other });
  assert.equal(moved.status, 409);
  assert.equal(moved.body.error.code, 'conflict');
  assert.equal((await svc.api('PATCH', `/api/moodboards/${id}`, { connected_folder: null })).status, 409);
  assert.equal(
    (await svc.api('PATCH', `/api/moodboards/${id}`, { connected_folder: folder, name: 'same folder' })).status,
    200,
  );
  fs.rmSync(other, { recursive: true, force: true });
  fs.rmSync(folder, { recursive: true, force: true });
});

test('new media elements are probed in the background: size, duration, codec, thumbnail; bad media keeps its file', async () => {
  const id = await svc.createBoard();
  const video = await makeVideo(path.join(fx, 'clip.mp4'), { width: 320, height: 240, duration: 1, tone: 440 });
  const image = await makeImage(path.join(fx, 'pic.png'), { width: 200, height: 100 });
  const corrupt = await makeCorrupt(path.join(fx, 'broken.mp4'));
  const v = (await svc.upload(id, video, { addToBoard: true })).body.element;
  const i = (await svc.upload(id, image, { addToBoard: true })).body.element;
  const c = (await svc.upload(id, corrupt, { addToBoard: true })).body.element;
  assert.equal(v.type, 'video');
  assert.equal(i.type, 'image');
  assert.equal(v.data.probe_status, 'pending');

  const settled = async (eid: string) =>
    eventually(
      async () => {
        const e = (await svc.api('GET', `/api/moodboards/${id}/elements/${eid}`)).body;
        return e.data.probe_status === 'pending' ? undefined : e;
      },
      30_000,
      `probe of ${eid}`,
    );
  const pv = await settled(v.id);
  assert.equal(pv.data.probe_status, 'done');
  assert.equal(pv.data.width, 320);
  assert.equal(pv.data.height, 240);
  assert.equal(pv.data.codec, 'h264');
  assert.equal(pv.data.has_audio, true);
  assert.ok(Math.abs(pv.data.duration - 1) < 0.1, `duration ${pv.data.duration}`);
  const thumb = await fetch(svc.baseUrl + pv.data.thumbnail_url);
  assert.equal(thumb.status, 200);
  assert.equal(thumb.headers.get('content-type'), 'image/jpeg');

  const pi = await settled(i.id);
  assert.equal(pi.data.width, 200);
  assert.equal(pi.data.height, 100);
  assert.equal(pi.data.format, 'png');

  const pc = await settled(c.id);
  assert.equal(pc.data.probe_status, 'error');
  assert.ok(pc.data.probe_error);
  assert.equal((await svc.api('GET', c.url)).status, 200, 'the undecodable file is still kept');
});
