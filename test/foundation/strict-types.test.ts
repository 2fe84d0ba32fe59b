import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Db } from '../../src/db/database.js';
import { eventually, startService, type TestService } from '../helpers/service.js';

/** A 400 `invalid_request` whose first detail names `field`. */
function assertInvalid(res: { status: number; body: any; text: string }, field: string, what: string): void {
  assert.equal(res.status, 400, `${what}: ${res.text}`);
  assert.equal(res.body.error.code, 'invalid_request', what);
  assert.equal(res.body.error.details?.[0]?.field, field, `${what}: ${res.text}`);
}

const DIGITS_400 = '9'.repeat(400);

describe('request bodies are never converted; numbers are finite', () => {
  let svc: TestService;
  let board: string;
  before(async () => {
    svc = await startService();
    board = await svc.createBoard('Types');
  });
  after(() => svc.close());

  test('boards: a number or an array for a name is refused and creates or renames nothing', async () => {
    const before = (await svc.api('GET', '/api/moodboards')).body.length;
    assertInvalid(await svc.api('POST', '/api/moodboards', { name: 42 }), 'body.name', 'number for a string');
    assertInvalid(await svc.api('POST', '/api/moodboards', { name: ['a'] }), 'body.name', 'array for a string');
    assert.equal((await svc.api('GET', '/api/moodboards')).body.length, before, 'no board was created');
    assertInvalid(
      await svc.api('PATCH', `/api/moodboards/${board}`, { name: 42 }),
      'body.name',
      'rename with a number',
    );
    assert.equal((await svc.api('GET', `/api/moodboards/${board}`)).body.name, 'Types');
  });

  test('elements: numeric strings, "Infinity", 400 digits and 1e400 are refused; nothing is stored', async () => {
    const cases: [string, unknown][] = [
      ['width', '100'],
      ['width', 'Infinity'],
      ['height', '-Infinity'],
      ['x', 'Infinity'],
      ['y', DIGITS_400],
      ['width', ['100']],
    ];
    for (const [field, value] of cases) {
      assertInvalid(
        await svc.api('POST', `/api/moodboards/${board}/elements`, { type: 'text', [field]: value }),
        `body.${field}`,
        `POST ${field}=${JSON.stringify(value)}`,
      );
    }
    // JSON itself can say Infinity: 1e400 parses to it.
    assertInvalid(
      await svc.api('POST', `/api/moodboards/${board}/elements`, '{"type":"text","x":1e400}'),
      'body.x',
      'x = 1e400',
    );
    assertInvalid(
      await svc.api('POST', `/api/moodboards/${board}/elements`, '{"type":"text","data":{"deep":[1,-1e400]}}'),
      'body.data.deep.1',
      'free-form data',
    );
    assert.equal((await svc.api('GET', `/api/moodboards/${board}/elements`)).body.length, 0, 'no element was stored');

    const el = (await svc.api('POST', `/api/moodboards/${board}/elements`, { type: 'text', x: 5, width: 10 })).body;
    for (const [field, value] of cases) {
      assertInvalid(
        await svc.api('PATCH', `/api/moodboards/${board}/elements/${el.id}`, { [field]: value }),
        `body.${field}`,
        `PATCH ${field}=${JSON.stringify(value)}`,
      );
    }
    // A valid field beside an invalid one is not written either: the whole request is refused.
    assertInvalid(
      await svc.api('PATCH', `/api/moodboards/${board}/elements/${el.id}`, { x: 7, width: 'Infinity' }),
      'body.width',
      'mixed',
    );
    const stored = (await svc.api('GET', `/api/moodboards/${board}/elements/${el.id}`)).body;
    assert.equal(stored.x, 5);
    assert.equal(stored.width, 10);
    assert.equal((await svc.api('GET', `/api/moodboards/${board}`)).status, 200, 'the board still answers');
  });

  test('html: a number or an array for the HTML writes no version', async () => {
    const card = (await svc.api('POST', `/api/moodboards/${board}/elements`, { type: 'html', name: 'card' })).body;
    assertInvalid(
      await svc.api('PUT', `/api/moodboards/${board}/elements/${card.id}/html`, { html: 42 }),
      'body.html',
      'number',
    );
    assertInvalid(
      await svc.api('PUT', `/api/moodboards/${board}/elements/${card.id}/html`, { html: ['<p>'] }),
      'body.html',
      'array',
    );
    const versions = (await svc.api('GET', `/api/moodboards/${board}/elements/${card.id}/html/versions`)).body;
    assert.equal(versions.htmlVersion, 1, 'the version did not move');
    // Path parameters keep their conversion ("1" -> 1), and a converted number must be finite.
    const first = `/api/moodboards/${board}/elements/${card.id}/html/versions/1`;
    await eventually(
      async () => ((await svc.api('GET', first)).status === 200 ? true : undefined),
      10_000,
      'the first version',
    );
    assertInvalid(
      await svc.api('GET', `/api/moodboards/${board}/elements/${card.id}/html/versions/Infinity`),
      'params.n',
      'n = Infinity',
    );
    assertInvalid(
      await svc.api('GET', `/api/moodboards/${board}/elements/${card.id}/html/versions/-Infinity`),
      'params.n',
      'n = -Infinity',
    );
  });

  test('terminal bridge: "Infinity" or a string for a chat id, "true" for a boolean link nothing', async () => {
    assertInvalid(
      await svc.api('POST', '/api/terminal-bridge/chat', { chat_id: 'Infinity', enabled: true }),
      'body.chat_id',
      '"Infinity"',
    );
    assertInvalid(
      await svc.api('POST', '/api/terminal-bridge/chat', { chat_id: '123', enabled: true }),
      'body.chat_id',
      'numeric string',
    );
    assertInvalid(
      await svc.api('POST', '/api/terminal-bridge/chat', '{"chat_id":1e400,"enabled":true}'),
      'body.chat_id',
      '1e400',
    );
    assertInvalid(
      await svc.api('POST', '/api/terminal-bridge/chat', { chat_id: 2 ** 60, enabled: true }),
      'body.chat_id',
      'beyond a safe integer',
    );
    assertInvalid(
      await svc.api('POST', '/api/terminal-bridge/chat', { chat_id: 123, enabled: 'true' }),
      'body.enabled',
      '"true"',
    );
    const status = await svc.api('GET', '/api/terminal-bridge/status');
    assert.equal(status.status, 200);
    assert.equal(status.body.chat_linked, false);
    // Query strings keep their conversion, and the number must be finite and bounded.
    assert.equal((await svc.api('GET', '/api/terminal-bridge/to-terminal?wait=0')).status, 200);
    assertInvalid(
      await svc.api('GET', '/api/terminal-bridge/to-terminal?wait=Infinity'),
      'querystring.wait',
      'wait=Infinity',
    );
    assertInvalid(
      await svc.api('GET', `/api/terminal-bridge/to-terminal?wait=${DIGITS_400}`),
      'querystring.wait',
      'wait=400 digits',
    );
  });

  test('camera presets: "Infinity" for a duration or a number for a name writes no file', async () => {
    assertInvalid(
      await svc.api('POST', '/api/camera-presets', { name: 'c', duration: 'Infinity', base: { b: 1 } }),
      'body.duration',
      '"Infinity"',
    );
    assertInvalid(
      await svc.api('POST', '/api/camera-presets', { name: 42, base: { b: 1 } }),
      'body.name',
      'number for a name',
    );
    assertInvalid(
      await svc.api('POST', '/api/camera-presets', { name: 'c', base: { b: '1' } }),
      'body.base.b',
      'numeric string in base',
    );
    const files = await fsp.readdir(path.join(svc.dataDir, 'media', 'camera-presets')).catch(() => []);
    assert.deepEqual(files, [], 'no preset file was written');
  });

  test('timeline: wrong types in a project or a render request are refused', async () => {
    assertInvalid(
      await svc.api('POST', `/api/moodboards/${board}/video-projects`, { name: ['p'] }),
      'body.name',
      'array for a name',
    );
    const project = (await svc.api('POST', `/api/moodboards/${board}/video-projects`, { name: 'p' })).body;
    assertInvalid(
      await svc.api('POST', `/api/moodboards/${board}/video-projects/${project.id}/render`, { fps: '30' }),
      'body.fps',
      'numeric string',
    );
    assertInvalid(
      await svc.api('PUT', `/api/moodboards/${board}/video-projects/${project.id}`, { name: 7, data: {} }),
      'body.name',
      'number',
    );
    // Finite numbers that add up to Infinity cannot be saved either: no answer could carry the duration.
    const huge = {
      clips: [{ id: 'c', duration: 1e308 }],
      channels: [{ id: 'ch', items: [{ id: 'i', clipId: 'c', start: 1.5e308, trimEnd: 1.5e308 }] }],
    };
    const saved = await svc.api('PUT', `/api/moodboards/${board}/video-projects/${project.id}`, { data: huge });
    assert.equal(saved.status, 400, saved.text);
    assert.equal((await svc.api('GET', `/api/moodboards/${board}/video-projects`)).status, 200);
  });

  test('media: a numeric string for a trim point is refused', async () => {
    assertInvalid(
      await svc.api('POST', '/api/trim-media', {
        board_id: board,
        element_id: 'el_x',
        start_seconds: '1',
        end_seconds: 2,
      }),
      'body.start_seconds',
      'numeric string',
    );
    assertInvalid(
      await svc.api('POST', '/api/convert-image', { board_id: board, element_id: ['el_x'], format: 'png' }),
      'body.element_id',
      'array',
    );
  });

  test('sounds: a number for a name is refused', async () => {
    assertInvalid(await svc.api('POST', '/api/sounds/play', { sound: 5 }), 'body.sound', 'number');
  });

  test('jobs: query numbers are still converted, and must be finite', async () => {
    assert.equal((await svc.api('GET', '/api/jobs?limit=5')).status, 200);
    assertInvalid(await svc.api('GET', '/api/jobs?limit=Infinity'), 'querystring.limit', 'limit=Infinity');
  });
});

describe('rows already holding non-finite numbers are repaired on read', () => {
  test('an element stored with Infinity, and a bridge link with an Infinity chat id, answer 200', async () => {
    const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-inf-'));
    let svc = await startService({}, { dataDir });
    try {
      const board = await svc.createBoard();
      const el = (await svc.api('POST', `/api/moodboards/${board}/elements`, { type: 'text', x: 3, width: 10 })).body;
      const project = (await svc.api('POST', `/api/moodboards/${board}/video-projects`, { name: 'p' })).body;
      await svc.close();

      // What older code let in: SQLite keeps 9e999 as Infinity in a REAL (or INTEGER) column.
      const db = new Db(path.join(dataDir, 'board-media.sqlite'));
      db.prepare('UPDATE elements SET x = 9e999, y = -9e999, width = 9e999, height = -9e999 WHERE id = ?').run(el.id);
      db.prepare(
        "INSERT INTO bridge_chats (bot_id, chat_id, linked_at) VALUES ('default', 9e999, '2026-01-01T00:00:00.000Z')",
      ).run();
      const huge = {
        clips: [{ id: 'c', duration: 1 }],
        channels: [{ id: 'ch', items: [{ id: 'i', clipId: 'c', start: 1.5e308, trimEnd: 1.5e308 }] }],
      };
      db.prepare('UPDATE video_projects SET data = ? WHERE id = ?').run(JSON.stringify(huge), project.id);
      db.close();

      svc = await startService({}, { dataDir });
      const full = await svc.api('GET', `/api/moodboards/${board}`);
      assert.equal(full.status, 200, full.text);
      const repaired = full.body.elements[0];
      assert.deepEqual([repaired.x, repaired.y, repaired.width, repaired.height], [0, 0, null, null]);
      assert.equal((await svc.api('GET', `/api/moodboards/${board}/elements`)).status, 200);
      const patched = await svc.api('PATCH', `/api/moodboards/${board}/elements/${el.id}`, { x: 1 });
      assert.equal(patched.status, 200, 'the element can be edited');
      assert.equal(patched.body.width, null);

      const status = await svc.api('GET', '/api/terminal-bridge/status');
      assert.equal(status.status, 200, status.text);
      assert.equal(status.body.chat_linked, false, 'an Infinity chat id names no chat');

      const projects = await svc.api('GET', `/api/moodboards/${board}/video-projects`);
      assert.equal(projects.status, 200, projects.text);
      assert.ok(Number.isFinite(projects.body[0].duration));
      const render = await svc.api('POST', `/api/moodboards/${board}/video-projects/${project.id}/render`, {});
      assert.equal(render.status, 400, 'such a project is not rendered');
    } finally {
      await svc.close();
      await fsp.rm(dataDir, { recursive: true, force: true });
    }
  });
});
