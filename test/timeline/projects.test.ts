import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startService, type TestService } from '../helpers/service.js';

describe('video projects', () => {
  let t: TestService;
  let board: string;
  const base = () => `/api/moodboards/${board}/video-projects`;

  before(async () => {
    t = await startService();
    board = await t.createBoard('Timeline');
  });
  after(() => t.close());

  it('creates a project with the current layout and default settings', async () => {
    const res = await t.api('POST', base(), { name: 'Teaser' });
    assert.equal(res.status, 201);
    const p = res.body;
    assert.match(p.id, /^vp_/);
    assert.equal(p.name, 'Teaser');
    assert.equal(p.duration, 0);
    assert.equal(p.data.version, 2);
    assert.deepEqual(p.data.videoSize, { w: 1920, h: 1080 });
    assert.equal(p.data.motionBlurEnabled, false);
    assert.equal(p.data.motionBlurShutter, 180);
    assert.deepEqual(p.data.clips, []);
    assert.equal(p.data.channels.length, 1);
    assert.equal(p.data.channels[0].visible, true);
    assert.deepEqual(p.data.channels[0].items, []);
    assert.equal(p.data.activeChannelId, p.data.channels[0].id);
    assert.equal(p.data.currentTime, 0);
    const got = await t.api('GET', `${base()}/${p.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, p);
  });

  it('replaces the whole state on PUT, keeps unknown fields and computes the duration', async () => {
    const created = (await t.api('POST', base(), { name: 'Cut' })).body;
    const data = {
      ...created.data,
      customFlag: { nested: [1, 2] },
      clips: [
        { id: 'c1', source: 'REMOTE', mediaType: 'video', url: '/media/x/a.mp4', name: 'a', duration: 10 },
        { id: 'c2', source: 'REMOTE', mediaType: 'video', url: '/media/x/b.mp4', name: 'b', duration: 4 },
      ],
      channels: [
        // Two items end to end (2 s + 3 s), then one placed at 6 s lasting 4 s (the clip's duration): ends at 10 s.
        {
          id: 'ch1',
          name: 'Main',
          visible: true,
          items: [
            { id: 'i1', clipId: 'c1', trimStart: 1, trimEnd: 3, extra: 'kept' },
            { id: 'i2', clipId: 'c1', trimStart: 0, trimEnd: 3 },
            { id: 'i3', clipId: 'c2', start: 6 },
          ],
        },
        // Invisible channels do not count: it would end at 30 s.
        {
          id: 'ch2',
          name: 'Hidden',
          visible: false,
          items: [{ id: 'i4', clipId: 'c1', start: 20, trimStart: 0, trimEnd: 10 }],
        },
      ],
      keyframes: [{ legacy: true }],
    };
    const before = created.last_modified;
    const put = await t.api('PUT', `${base()}/${created.id}`, { id: created.id, name: 'Cut v2', data });
    assert.equal(put.status, 200);
    assert.equal(put.body.name, 'Cut v2');
    assert.equal(put.body.duration, 10);
    assert.ok(put.body.last_modified > before, 'last_modified moves forward on every save');
    assert.deepEqual(put.body.data.customFlag, { nested: [1, 2] });
    assert.equal(put.body.data.channels[0].items[0].extra, 'kept');
    assert.deepEqual(put.body.data.keyframes, [{ legacy: true }]);

    const again = await t.api('PUT', `${base()}/${created.id}`, { name: 'Cut v2', data });
    assert.ok(again.body.last_modified > put.body.last_modified);

    const list = await t.api('GET', base());
    assert.equal(list.status, 200);
    const summary = list.body.find((s: { id: string }) => s.id === created.id);
    assert.deepEqual(Object.keys(summary).sort(), ['duration', 'id', 'last_modified', 'name']);
    assert.equal(summary.duration, 10);
    assert.equal(list.body[0].id, created.id, 'most recently saved first');
  });

  it('rejects what is not a project with a 400 naming the field', async () => {
    const { id } = (await t.api('POST', base(), { name: 'Bad' })).body;
    const cases: [unknown, string][] = [
      ['not an object', 'data must be an object'],
      [[1, 2], 'data must be an object'],
      [{ channels: [{ items: [{}, {}, { trimEnd: '5' }] }] }, 'data.channels[0].items[2].trimEnd must be a number'],
      [{ channels: {} }, 'data.channels must be an array'],
      [{ videoSize: { w: 0, h: 10 } }, 'data.videoSize.w must be an integer between 2 and 8192'],
      [{ motionBlurEnabled: 'yes' }, 'data.motionBlurEnabled must be a boolean'],
      [{ version: 1.5 }, 'data.version must be an integer'],
      [{ clips: [{ id: 7 }] }, 'data.clips[0].id must be a string'],
      [
        { channels: [{ items: [{ propertyKeyframes: { zoom: [{ position: 'a', value: '1' }] } }] }] },
        'data.channels[0].items[0].propertyKeyframes.zoom[0].position must be a number',
      ],
    ];
    for (const [data, message] of cases) {
      const res = await t.api('PUT', `${base()}/${id}`, { name: 'Bad', data });
      assert.equal(res.status, 400, JSON.stringify(data));
      assert.equal(res.body.error.message, message);
    }
    const mismatch = await t.api('PUT', `${base()}/${id}`, { id: 'vp_other', name: 'Bad', data: {} });
    assert.equal(mismatch.status, 400);
    const missing = await t.api('PUT', `${base()}/${id}`, { name: 'Bad' });
    assert.equal(missing.status, 400);
    assert.match(missing.body.error.message, /data/);
  });

  it('migrates an older layout forward on read', async () => {
    const { id } = (await t.api('POST', base(), { name: 'Old' })).body;
    const legacy = {
      version: 1,
      clips: [],
      channels: [{ id: 'a', name: 'A', items: [{ id: 'x', clipId: 'c', keyframes: [{ t: 0 }] }] }],
      oldField: 3,
    };
    const put = await t.api('PUT', `${base()}/${id}`, { name: 'Old', data: legacy });
    assert.equal(put.status, 200);
    const d = put.body.data;
    assert.equal(d.version, 2);
    assert.equal(d.channels[0].visible, true);
    assert.deepEqual(d.channels[0].items[0].propertyKeyframes, {});
    assert.deepEqual(d.channels[0].items[0].keyframes, [{ t: 0 }], 'the legacy keyframes array is left alone');
    assert.deepEqual(d.videoSize, { w: 1920, h: 1080 });
    assert.equal(d.motionBlurShutter, 180);
    assert.equal(d.activeChannelId, 'a');
    assert.equal(d.oldField, 3);

    const bare = await t.api('PUT', `${base()}/${id}`, { name: 'Old', data: {} });
    assert.equal(bare.body.data.version, 2);
    assert.equal(bare.body.data.channels.length, 1, 'a project without channels gets one empty visible channel');
    const reread = await t.api('GET', `${base()}/${id}`);
    assert.deepEqual(
      reread.body.data.channels,
      bare.body.data.channels,
      'the migrated channel keeps its id across reads',
    );
    assert.equal(reread.body.data.activeChannelId, reread.body.data.channels[0].id);
  });

  it('answers 404 for unknown ids and for a project of another board, 204 on delete', async () => {
    const other = await t.createBoard('Other');
    const { id } = (await t.api('POST', base(), { name: 'Mine' })).body;
    assert.equal((await t.api('GET', `/api/moodboards/${other}/video-projects/${id}`)).status, 404);
    assert.equal(
      (await t.api('PUT', `/api/moodboards/${other}/video-projects/${id}`, { name: 'x', data: {} })).status,
      404,
    );
    assert.equal((await t.api('DELETE', `/api/moodboards/${other}/video-projects/${id}`)).status, 404);
    assert.equal((await t.api('GET', `${base()}/vp_nope`)).status, 404);
    assert.equal((await t.api('GET', '/api/moodboards/bd_nope/video-projects')).status, 404);
    assert.equal((await t.api('POST', '/api/moodboards/bd_nope/video-projects', { name: 'x' })).status, 404);

    const del = await t.api('DELETE', `${base()}/${id}`);
    assert.equal(del.status, 204);
    assert.equal((await t.api('GET', `${base()}/${id}`)).status, 404);
    assert.equal((await t.api('DELETE', `${base()}/${id}`)).status, 404);
  });

  it("removes a board's projects with the board", async () => {
    const b = await t.createBoard('Doomed');
    const { id } = (await t.api('POST', `/api/moodboards/${b}/video-projects`, { name: 'Gone' })).body;
    assert.equal((await t.api('DELETE', `/api/moodboards/${b}`)).status, 204);
    const row = t.service.ctx.db.prepare('SELECT id FROM video_projects WHERE id = ?').get(id);
    assert.equal(row, undefined);
  });

  it('validates render settings before queueing', async () => {
    const { id } = (await t.api('POST', base(), { name: 'Empty' })).body;
    const url = `${base()}/${id}/render`;
    const pair = await t.api('POST', url, { format: 'webm', codec: 'h264' });
    assert.equal(pair.status, 400);
    assert.match(pair.body.error.message, /mp4\/h264, mp4\/h265, webm\/vp9, mov\/h264, mov\/h265, mov\/prores/);
    for (const body of [
      { fps: 0 },
      { fps: 121 },
      { crf: 52 },
      { crf: -1 },
      { size_preset: '8k' },
      { format: 'avi' },
      { codec: 'av1' },
    ]) {
      assert.equal((await t.api('POST', url, body)).status, 400, JSON.stringify(body));
    }
    const empty = await t.api('POST', url, { format: 'mp4', codec: 'h264', crf: 23, size_preset: '1080p', fps: 30 });
    assert.equal(empty.status, 400, 'an empty timeline has nothing to render');
    assert.equal((await t.api('POST', `${base()}/vp_nope/render`, {})).status, 404);
    assert.equal((await t.api('GET', `${base()}/${id}/render/render_nope`)).status, 404);
  });
});
