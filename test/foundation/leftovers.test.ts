import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startService, type TestService } from '../helpers/service.js';

/** A name exactly like the service's temp files (`.tmp-` + 12 hex digits + `-` + the target name). */
const tempName = (target: string) => `.tmp-0123456789ab-${target}`;

describe('start-up removes the temp files a crash left in every folder the service writes into', () => {
  test('DATA_DIR folders (media, card versions, sounds, presets) and the top of connected folders; users’ files stay', async () => {
    const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-left-'));
    const connected = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-connected-'));
    let svc = await startService({}, { dataDir });
    try {
      const board = await svc.createBoard();
      const linked = await svc.createBoard('Connected');
      assert.equal((await svc.api('PATCH', `/api/moodboards/${linked}`, { connected_folder: connected })).status, 200);
      await svc.close();

      // What kill -9 in the middle of writes leaves behind.
      const leftovers = [
        path.join(dataDir, 'html-versions', 'el_abc', tempName('3.html')),
        path.join(dataDir, 'media', 'admin', board, tempName('card.html')),
        path.join(dataDir, 'media', 'camera-presets', tempName('cam.json')),
        path.join(dataDir, 'sounds', tempName('notice.wav')),
        path.join(connected, tempName('upload.png')),
      ];
      // Files that are not the service's temp files, in the user's folder.
      const kept = [
        path.join(connected, '.tmp-notes.txt'),
        path.join(connected, 'photo.png'),
        path.join(dataDir, 'html-versions', 'el_abc', '2.html'),
      ];
      for (const f of [...leftovers, ...kept]) {
        await fsp.mkdir(path.dirname(f), { recursive: true });
        await fsp.writeFile(f, 'x');
      }

      svc = await startService({}, { dataDir });
      for (const f of leftovers)
        assert.equal(
          await fsp.access(f).then(
            () => 'there',
            () => 'gone',
          ),
          'gone',
          f,
        );
      for (const f of kept)
        assert.equal(
          await fsp.access(f).then(
            () => 'there',
            () => 'gone',
          ),
          'there',
          f,
        );
    } finally {
      await svc.close();
      await fsp.rm(dataDir, { recursive: true, force: true });
      await fsp.rm(connected, { recursive: true, force: true });
    }
  });
});

describe('the multipart `data` field is JSON under the same limits as a body', () => {
  let svc: TestService;
  let board: string;
  before(async () => {
    svc = await startService();
    board = await svc.createBoard();
  });
  after(() => svc.close());

  const boardFiles = async () =>
    (await fsp.readdir(path.join(svc.dataDir, 'media', 'admin', board))).filter((n) => !n.startsWith('.'));

  test('5,000 levels of nesting or a 1e400 are a 400, and the upload leaves no file and no element', async () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    const cases: [string, string, string][] = [
      [`{"a":${deep}}`, 'too_deep', 'deep'],
      ['{"scale":1e400}', 'invalid_request', 'non-finite'],
      ['{"a":', 'invalid_request', 'malformed'],
    ];
    for (const [data, code, what] of cases) {
      const form = new FormData();
      form.set('board_id', board);
      form.set('add_to_board', 'true');
      form.set('data', data);
      form.set('file', new Blob(['hello']), 'note.txt');
      const res = await fetch(`${svc.baseUrl}/api/upload`, { method: 'POST', body: form });
      const body = (await res.json()) as { error: { code: string } };
      assert.equal(res.status, 400, what);
      assert.equal(body.error.code, code, what);
    }
    assert.deepEqual(await boardFiles(), []);
    assert.deepEqual((await svc.api('GET', `/api/moodboards/${board}/elements`)).body, []);
    assert.deepEqual(await fsp.readdir(path.join(svc.dataDir, 'tmp')), [], 'no temp upload left');
  });

  test('data the board refuses (a key the service owns) leaves no file either', async () => {
    const form = new FormData();
    form.set('board_id', board);
    form.set('add_to_board', 'true');
    form.set('data', JSON.stringify({ htmlUrl: '/media/x' }));
    form.set('file', new Blob(['hello']), 'note.txt');
    const res = await fetch(`${svc.baseUrl}/api/upload`, { method: 'POST', body: form });
    assert.equal(res.status, 400);
    assert.deepEqual(await boardFiles(), []);
  });
});
