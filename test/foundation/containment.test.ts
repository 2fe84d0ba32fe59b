import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { eventually, startService, waitForJob, type TestService } from '../helpers/service.js';
import { pngPixels } from '../html/cards.js';

/**
 * Every feature that reads a file named by a request (or by a record a request wrote) resolves it through the media
 * root: a link in the board folder that leads outside reads as missing. One check per such place; html cards and
 * camera presets have their own (test/html/containment, test/camera-presets/containment).
 */
describe('files named by requests stay inside the media root (symlinks included)', () => {
  let s: TestService;
  let board: string;
  let outside: string;
  let boardDir: string;
  let inside: string;
  const link = () => `/media/${board}/link.png`;

  before(async () => {
    s = await startService();
    board = await s.createBoard('Links');
    outside = await tempDir('bms-outside-');
    const secret = await makeImage(path.join(outside, 'secret.png'), { width: 32, height: 32, source: 'color=c=red' });
    const up = await s.upload(
      board,
      await makeImage(path.join(outside, 'inside.png'), { width: 32, height: 32, source: 'color=c=lime' }),
    );
    inside = up.body.url;
    boardDir = path.join(s.dataDir, 'media', 'admin', board);
    await fsp.symlink(secret, path.join(boardDir, 'link.png'));
  });
  after(async () => {
    await s.close();
    await fsp.rm(outside, { recursive: true, force: true });
  });

  it('GET /media and a new element refuse the link', async () => {
    assert.equal((await s.api('GET', link())).status, 404);
    const add = await s.api('POST', `/api/moodboards/${board}/elements`, { type: 'image', url: link() });
    assert.equal(add.status, 404, add.text);
    assert.deepEqual((await s.api('GET', `/api/moodboards/${board}/elements`)).body, []);
  });

  it('a media operation on an element whose file became a link out is a 404 and makes nothing', async () => {
    const up = await s.upload(board, await makeImage(path.join(outside, 'victim.png'), { width: 32, height: 32 }), {
      addToBoard: true,
    });
    await eventually(async () =>
      (await s.api('GET', `/api/moodboards/${board}/elements/${up.body.element.id}`)).body.data.probe_status !==
      'pending'
        ? true
        : undefined,
    );
    await fsp.rm(path.join(boardDir, 'victim.png'));
    await fsp.symlink(path.join(outside, 'secret.png'), path.join(boardDir, 'victim.png'));
    const before = (await fsp.readdir(boardDir)).length;
    const res = await s.api('POST', '/api/convert-image', {
      board_id: board,
      element_id: up.body.element.id,
      format: 'webp',
    });
    assert.equal(res.status, 404, res.text);
    assert.equal((await fsp.readdir(boardDir)).length, before);
  });

  it('derived files (thumbnails) are never written through a folder that links out', async () => {
    const other = await s.createBoard('Thumbs');
    const foreign = path.join(outside, 'thumbs');
    await fsp.mkdir(foreign);
    await fsp.mkdir(path.join(s.dataDir, 'media', 'thumbs'), { recursive: true });
    await fsp.symlink(foreign, path.join(s.dataDir, 'media', 'thumbs', other));
    const up = await s.upload(other, await makeImage(path.join(outside, 'thumbed.png'), { width: 32, height: 32 }), {
      addToBoard: true,
    });
    assert.equal(up.status, 200, up.text);
    const probed = await eventually(async () => {
      const el = (await s.api('GET', `/api/moodboards/${other}/elements/${up.body.element.id}`)).body;
      return el.data.probe_status !== 'pending' ? el : undefined;
    });
    assert.equal(probed.data.thumbnail_url, undefined);
    assert.deepEqual(await fsp.readdir(foreign), [], 'nothing was written outside');
  });

  it('the terminal bridge neither types nor sends a linked file', async () => {
    assert.equal(
      (await s.api('POST', '/api/terminal-bridge/session', { session_id: 'pty-links', board_id: board, enabled: true }))
        .status,
      200,
    );
    assert.equal((await s.api('POST', '/api/terminal-bridge/chat', { chat_id: 9, enabled: true })).status, 200);
    const typed = await s.api('POST', '/api/terminal-bridge/to-terminal', { kind: 'path', url: link() });
    assert.equal(typed.status, 404, typed.text);
    const sent = await s.api('POST', '/api/terminal-bridge/send-media', { url: link(), session_id: 'pty-links' });
    assert.equal(sent.status, 404, sent.text);
    assert.ok(!typed.text.includes(outside) && !sent.text.includes(outside), 'the outside path is not revealed');
  });

  it('a timeline render fails on a clip that links out, naming the item', async () => {
    const created = (await s.api('POST', `/api/moodboards/${board}/video-projects`, { name: 'links' })).body;
    const data = {
      ...created.data,
      videoSize: { w: 32, h: 32 },
      clips: [{ id: 'c', source: 'REMOTE', mediaType: 'image', url: link(), name: 'c', duration: 1 }],
      channels: [
        { id: 'ch', name: 'Main', visible: true, items: [{ id: 'it', clipId: 'c', trimStart: 0, trimEnd: 1 }] },
      ],
    };
    assert.equal((await s.api('PUT', `/api/moodboards/${board}/video-projects/${created.id}`, { data })).status, 200);
    const start = await s.api('POST', `/api/moodboards/${board}/video-projects/${created.id}/render`, {
      size_preset: 'source',
      fps: 5,
    });
    assert.equal(start.status, 202, start.text);
    const done = await waitForJob(
      s,
      `/api/moodboards/${board}/video-projects/${created.id}/render/${start.body.job_id}`,
    );
    assert.equal(done.status, 'error');
    assert.match(done.error, /"it"/);
  });

  it('an HTML card in the render sandbox sees the linked file as missing', async () => {
    const html = `<!doctype html><html><body style="margin:0;background:#fff">
      <img src="${inside}" style="position:absolute;left:0;top:0;width:32px;height:32px">
      <img src="${link()}" style="position:absolute;left:32px;top:0;width:32px;height:32px"></body></html>`;
    const res = await s.api('POST', '/api/html/render-frame', {
      html,
      width: 64,
      height: 32,
      fps: 10,
      frame: 0,
      board_id: board,
    });
    assert.equal(res.status, 200, res.text);
    const px = await pngPixels(await fsp.readFile(path.join(boardDir, res.body.filename)));
    const [r, g] = px(16, 16);
    assert.ok(g > 200 && r < 60, `the file inside the board shows (${px(16, 16)})`);
    const right = px(48, 16);
    assert.ok(!(right[0] > 200 && right[1] < 60), `the linked red picture must not show (${right})`);
  });
});
