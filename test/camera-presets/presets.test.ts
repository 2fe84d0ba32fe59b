import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { startService, type TestService } from '../helpers/service.js';

describe('camera presets', () => {
  let t: TestService;
  const dir = () => path.join(t.dataDir, 'media', 'camera-presets');

  before(async () => {
    t = await startService();
  });
  after(() => t.close());

  const orbit = {
    name: 'Slow orbit',
    description: 'A quarter turn',
    duration: 4,
    keyframes: [
      { position: 100, easing: 'Smooth', properties: { camRotY: '90', camZoom: '1.2' } },
      { position: 0, easing: 'Linear', properties: { camRotY: '0', camZoom: '1' } },
    ],
    base: { camDofEnabled: 1, camAperture: 2.8 },
  };

  it('creates a preset as one JSON file and lists it', async () => {
    const res = await t.api('POST', '/api/camera-presets', orbit);
    assert.equal(res.status, 201);
    const p = res.body;
    assert.match(p.id, /^cam_/);
    assert.equal(p.name, 'Slow orbit');
    assert.equal(p.duration, 4);
    assert.deepEqual(
      p.keyframes.map((k: { position: number }) => k.position),
      [0, 100],
      'keyframes are stored in position order',
    );
    assert.deepEqual(p.base, orbit.base);
    assert.ok(!Number.isNaN(Date.parse(p.updated_at)));
    const onDisk = JSON.parse(await fsp.readFile(path.join(dir(), `${p.id}.json`), 'utf8'));
    assert.deepEqual(onDisk, p);
    assert.ok(!(await fsp.readdir(dir())).some((f) => f.startsWith('.tmp-')), 'no temp file left behind');
    const list = await t.api('GET', '/api/camera-presets');
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.presets.find((x: { id: string }) => x.id === p.id),
      p,
    );
  });

  it('updates a preset posted with an existing id, moves updated_at and lists newest first', async () => {
    const a = (await t.api('POST', '/api/camera-presets', { name: 'A', base: { camAperture: 4 } })).body;
    const b = (
      await t.api('POST', '/api/camera-presets', {
        name: 'B',
        keyframes: [{ position: 0, easing: 'Hold', properties: { camX: '1' } }],
      })
    ).body;
    let list = (await t.api('GET', '/api/camera-presets')).body.presets;
    assert.equal(list[0].id, b.id);
    const upd = await t.api('POST', '/api/camera-presets', { id: a.id, name: 'A2', base: { camAperture: 5.6 } });
    assert.equal(upd.status, 200);
    assert.equal(upd.body.id, a.id);
    assert.equal(upd.body.name, 'A2');
    assert.ok(upd.body.updated_at > a.updated_at, 'updated_at changes');
    list = (await t.api('GET', '/api/camera-presets')).body.presets;
    assert.equal(list[0].id, a.id, 'the updated preset comes first');
    assert.equal(list.filter((x: { id: string }) => x.id === a.id).length, 1);
    const times = list.map((x: { updated_at: string }) => x.updated_at);
    assert.deepEqual([...times].sort().reverse(), times);

    const number = await t.api('POST', '/api/camera-presets', {
      name: 'Num',
      keyframes: [{ position: 50, properties: { camX: 1.5 } }],
    });
    assert.equal(number.status, 400, 'property values are strings; a number is not converted');
    assert.equal(number.body.error.details[0].field, 'body.keyframes.0.properties.camX');

    const named = await t.api('POST', '/api/camera-presets', {
      id: 'my-dolly_1',
      name: 'Dolly',
      base: { camDofEnabled: 0 },
    });
    assert.equal(named.status, 201, 'a new id given by the client is created');
    assert.equal(named.body.id, 'my-dolly_1');
  });

  it('rejects invalid presets with 400', async () => {
    const bad: unknown[] = [
      { name: 'No content' },
      { name: 'Empty', keyframes: [], base: {} },
      { name: 'Pos', keyframes: [{ position: 101, easing: 'Linear', properties: {} }] },
      { name: 'Neg', keyframes: [{ position: -1, easing: 'Linear', properties: {} }] },
      { name: 'Ease', keyframes: [{ position: 0, easing: 'Bounce', properties: {} }] },
      { name: 'Props', keyframes: [{ position: 0, easing: 'Linear', properties: { camX: { x: 1 } } }] },
      { name: 'PropsList', keyframes: [{ position: 0, easing: 'Linear', properties: ['1'] }] },
      { name: 'Base', base: { camAperture: 'wide' } },
      { keyframes: [{ position: 0, easing: 'Linear', properties: {} }] },
      { id: '../../etc/passwd', name: 'Path', base: { a: 1 } },
      { id: 'a/b', name: 'Path', base: { a: 1 } },
      { name: 'Dur', duration: -2, base: { a: 1 } },
    ];
    for (const body of bad) {
      const res = await t.api('POST', '/api/camera-presets', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.ok(res.body.error.message);
    }
    const files = await fsp.readdir(dir());
    assert.ok(
      files.every((f) => /^[A-Za-z0-9][A-Za-z0-9_-]*\.json$/.test(f)),
      files.join(', '),
    );
  });

  it('deletes a preset (204) and answers 404 for unknown ids', async () => {
    const p = (await t.api('POST', '/api/camera-presets', { name: 'Doomed', base: { camAperture: 1.4 } })).body;
    const del = await t.api('DELETE', `/api/camera-presets/${p.id}`);
    assert.equal(del.status, 204);
    await assert.rejects(fsp.access(path.join(dir(), `${p.id}.json`)));
    assert.equal((await t.api('DELETE', `/api/camera-presets/${p.id}`)).status, 404);
    assert.equal((await t.api('DELETE', '/api/camera-presets/nope')).status, 404);
    assert.equal(
      (await t.api('DELETE', `/api/camera-presets/${encodeURIComponent('../board-media.sqlite')}`)).status,
      404,
    );
    const list = (await t.api('GET', '/api/camera-presets')).body.presets;
    assert.ok(!list.some((x: { id: string }) => x.id === p.id));
  });

  it('keeps presets apart from video-presets and skips unreadable files', async () => {
    await fsp.mkdir(path.join(t.dataDir, 'media', 'video-presets'), { recursive: true });
    await fsp.writeFile(
      path.join(t.dataDir, 'media', 'video-presets', 'other.json'),
      JSON.stringify({ id: 'other', name: 'x', updated_at: '2099-01-01T00:00:00.000Z' }),
    );
    await fsp.writeFile(path.join(dir(), 'broken.json'), '{not json');
    const res = await t.api('GET', '/api/camera-presets');
    assert.equal(res.status, 200);
    assert.ok(!res.body.presets.some((x: { id: string }) => x.id === 'other' || x.id === 'broken'));
  });

  it('skips a file that parses but is not a preset, and refuses Windows device names as ids', async () => {
    await fsp.mkdir(dir(), { recursive: true });
    await fsp.writeFile(path.join(dir(), 'halfway.json'), JSON.stringify({ name: 'no id, no keyframes' }));
    const res = await t.api('GET', '/api/camera-presets');
    assert.equal(res.status, 200);
    assert.ok(!res.body.presets.some((x: { name: string }) => x.name === 'no id, no keyframes'));
    for (const id of ['con', 'CON', 'lpt1']) {
      const r = await t.api('POST', '/api/camera-presets', { ...orbit, id });
      assert.equal(r.status, 400, id);
    }
  });
});
