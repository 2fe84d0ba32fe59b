import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startService, type TestService } from '../helpers/service.js';

const DEVICES = [
  'iphone',
  'iphone-pro-max',
  'ipad',
  'ipad-mini',
  'macbook-air',
  'macbook-pro',
  'imac',
  'double-iphone',
  'browser',
  'grid',
  'no-device',
];

describe('mockup projects', () => {
  let t: TestService;
  let board: string;
  const base = () => `/api/moodboards/${board}/mockup-projects`;

  before(async () => {
    t = await startService();
    board = await t.createBoard('Mockups');
  });
  after(() => t.close());

  it('creates a project with defaults for every device', async () => {
    for (const device of DEVICES) {
      const res = await t.api('POST', base(), { name: ` ${device} `, device });
      assert.equal(res.status, 201, res.text);
      const p = res.body;
      assert.match(p.id, /^mk_/);
      assert.equal(p.name, device);
      assert.equal(p.device, device);
      assert.deepEqual(p.transform, {
        position: { x: 0, y: 0, z: 0 },
        rotation: { x: 0, y: 0, z: 0 },
        scale: { x: 1, y: 1, z: 1 },
      });
      assert.equal(p.dof.enabled, false);
      assert.equal(p.background.mode, 'gradient');
      assert.match(p.background.params.from, /^#[0-9a-f]{6}$/);
      assert.deepEqual(p.keyframes, []);
      assert.equal(p.duration_seconds, 5);
      assert.equal(p.screen_source_url, null);
      assert.equal(p.created_at, p.updated_at);
    }
  });

  it('refuses an unknown device, listing the allowed values', async () => {
    const res = await t.api('POST', base(), { name: 'x', device: 'pixel' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'invalid_request');
    assert.equal(res.body.error.details[0].field, 'body.device');
    for (const d of DEVICES) assert.ok(res.body.error.message.includes(d), `${d} listed in: ${res.body.error.message}`);
  });

  it('lists summaries, most recently saved first', async () => {
    const b = await t.createBoard('List');
    const first = (await t.api('POST', `/api/moodboards/${b}/mockup-projects`, { name: 'first', device: 'ipad' })).body;
    const second = (await t.api('POST', `/api/moodboards/${b}/mockup-projects`, { name: 'second', device: 'imac' }))
      .body;
    let list = await t.api('GET', `/api/moodboards/${b}/mockup-projects`);
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.map((s: { name: string }) => s.name),
      ['second', 'first'],
    );
    assert.deepEqual(Object.keys(list.body[0]).sort(), ['device', 'duration_seconds', 'id', 'name', 'updated_at']);
    const put = await t.api('PUT', `/api/moodboards/${b}/mockup-projects/${first.id}`, {
      ...first,
      duration_seconds: 7.5,
    });
    assert.equal(put.status, 200, put.text);
    assert.ok(put.body.updated_at > first.updated_at);
    list = await t.api('GET', `/api/moodboards/${b}/mockup-projects`);
    assert.deepEqual(
      list.body.map((s: { id: string }) => s.id),
      [first.id, second.id],
    );
    assert.equal(list.body[0].duration_seconds, 7.5);
    assert.equal(list.body[1].device, 'imac');
  });

  it('PUT replaces the whole state, keeps unknown fields and answers the project', async () => {
    const p = (await t.api('POST', base(), { name: 'full', device: 'iphone' })).body;
    const state = {
      ...p,
      name: 'renamed',
      device: 'macbook-pro',
      screen_source_url: `/media/${board}/shot.png`,
      transform: {
        position: { x: 10, y: -20, z: 300 },
        rotation: { x: 5, y: -30, z: 2, note: 'kept' },
        scale: { x: 1.2, y: 1.2, z: 1 },
      },
      dof: { enabled: true, focus_distance: 1700, aperture: 35 },
      background: { mode: 'image', params: { url: `/media/${board}/bg.jpg` } },
      keyframes: [
        { time: 0, easing: 'Smooth', transform: { rotation: { y: -30 } } },
        {
          time: 2,
          easing: 'Linear',
          transform: { rotation: { y: 30 } },
          dof: { aperture: 10 },
          background: { params: { color: '#ff000080' } },
          client: { id: 7 },
        },
      ],
      duration_seconds: 3,
      client_state: { selected: 1, tags: ['a'] },
      created_at: 'ignored',
      updated_at: 'ignored',
    };
    const res = await t.api('PUT', `${base()}/${p.id}`, state);
    assert.equal(res.status, 200, res.text);
    const got = (await t.api('GET', `${base()}/${p.id}`)).body;
    for (const body of [res.body, got]) {
      assert.equal(body.name, 'renamed');
      assert.equal(body.device, 'macbook-pro');
      assert.deepEqual(body.transform, state.transform);
      assert.deepEqual(body.keyframes, state.keyframes);
      assert.deepEqual(body.client_state, state.client_state);
      assert.equal(body.created_at, p.created_at);
      assert.notEqual(body.updated_at, 'ignored');
    }
  });

  it('PUT type-checks every field with a 400 naming it, and writes nothing then', async () => {
    const p = (await t.api('POST', base(), { name: 'typed', device: 'browser' })).body;
    const bad: [Record<string, unknown>, string][] = [
      [{ transform: { ...p.transform, rotation: { x: 'abc', y: 0, z: 0 } } }, 'body.transform.rotation.x'],
      [{ dof: { ...p.dof, enabled: 'yes' } }, 'body.dof.enabled'],
      [{ dof: { ...p.dof, aperture: -1 } }, 'body.dof.aperture'],
      [{ background: { mode: 'video', params: {} } }, 'body.background.mode'],
      [{ background: { mode: 'solid', params: { color: 'red;}' } } }, 'body.background.params.color'],
      [{ keyframes: [{ time: 1, easing: 'Bounce' }] }, 'body.keyframes.0.easing'],
      [{ keyframes: [{ easing: 'Linear' }] }, 'body.keyframes.0.time'],
      [{ duration_seconds: 0 }, 'body.duration_seconds'],
      [{ duration_seconds: 1e9 }, 'body.duration_seconds'],
      [{ screen_source_url: 'http://elsewhere/x.png' }, 'body.screen_source_url'],
      [{ device: 'phone' }, 'body.device'],
    ];
    for (const [change, field] of bad) {
      const res = await t.api('PUT', `${base()}/${p.id}`, { ...p, ...change });
      assert.equal(res.status, 400, `${JSON.stringify(change)}: ${res.text}`);
      assert.ok(
        res.body.error.details.some((d: { field: string }) => d.field.startsWith(field)),
        `${field} in ${res.text}`,
      );
    }
    const { transform: _t, ...missing } = p;
    const res = await t.api('PUT', `${base()}/${p.id}`, missing);
    assert.equal(res.status, 400);
    assert.equal(res.body.error.details[0].field, 'body.transform');
    const mismatch = await t.api('PUT', `${base()}/${p.id}`, { ...p, id: 'mk_other' });
    assert.equal(mismatch.status, 400);
    const after = (await t.api('GET', `${base()}/${p.id}`)).body;
    assert.deepEqual(after, p);
  });

  it('DELETE removes a project; unknown ids are 404', async () => {
    const p = (await t.api('POST', base(), { name: 'gone', device: 'grid' })).body;
    const del = await t.api('DELETE', `${base()}/${p.id}`);
    assert.equal(del.status, 204);
    assert.equal((await t.api('GET', `${base()}/${p.id}`)).status, 404);
    assert.equal((await t.api('DELETE', `${base()}/${p.id}`)).status, 404);
    assert.equal((await t.api('PUT', `${base()}/${p.id}`, p)).status, 404);
    assert.equal((await t.api('GET', '/api/moodboards/bd_nothere/mockup-projects')).status, 404);
    assert.equal(
      (await t.api('POST', '/api/moodboards/bd_nothere/mockup-projects', { name: 'x', device: 'iphone' })).status,
      404,
    );
    const other = await t.createBoard('Other');
    const q = (await t.api('POST', base(), { name: 'mine', device: 'imac' })).body;
    assert.equal((await t.api('GET', `/api/moodboards/${other}/mockup-projects/${q.id}`)).status, 404);
    assert.equal((await t.api('GET', '/api/mockup/render/mockjob_nothere')).status, 404);
  });

  it('shows its routes in the OpenAPI document', async () => {
    const doc = (await t.api('GET', '/api/openapi.json')).body;
    for (const route of [
      '/api/moodboards/{id}/mockup-projects',
      '/api/moodboards/{id}/mockup-projects/{pid}',
      '/api/mockup/render',
      '/api/mockup/render/{job_id}',
    ]) {
      assert.ok(doc.paths[route], route);
    }
    const body = doc.paths['/api/mockup/render'].post.requestBody.content['application/json'].schema;
    assert.deepEqual(body.properties.format.enum, ['mp4', 'webm', 'mov']);
  });
});
