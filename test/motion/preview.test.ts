import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { startService, type TestService } from '../helpers/service.js';
import { sampleProject } from './project-builder.js';

/** POST /api/motion/projects/preview: the checks made before any drawing, over HTTP. */
describe('motion preview: bad requests', () => {
  let t: TestService;
  let board: string;
  let project: string;
  let folder: string;
  before(async () => {
    t = await startService();
    board = await t.createBoard('preview checks');
    const up = await t.upload(board, { name: 'template.aep', data: sampleProject() }, { addToBoard: true });
    assert.equal(up.status, 200, up.text);
    project = up.body.element.id;
    folder = path.join(t.dataDir, 'media', 'admin', board);
  });
  after(() => t.close());

  const preview = (body: Record<string, unknown>) =>
    t.api('POST', '/api/motion/projects/preview', { board_id: board, element_id: project, ...body });
  const files = async () => (await fsp.readdir(folder)).sort();

  it('refuses an unreadable project as inspect does', async () => {
    const bad = await t.upload(board, { name: 'broken.aep', data: Buffer.from('not a project at all') });
    const inspect = await t.api('POST', '/api/motion/projects/inspect', { board_id: board, url: bad.body.url });
    const res = await preview({ element_id: undefined, url: bad.body.url, composition: 'Main' });
    assert.equal(inspect.status, 400);
    assert.equal(res.status, 400, res.text);
    assert.deepEqual(res.body, inspect.body);
  });

  it('answers 404 composition_not_found naming the composition, by name or by id', async () => {
    const byName = await preview({ composition: 'Nope' });
    assert.equal(byName.status, 404, byName.text);
    assert.equal(byName.body.error.code, 'composition_not_found');
    assert.match(byName.body.error.message, /"Nope"/);
    const byId = await preview({ composition: 999 });
    assert.equal(byId.status, 404);
    assert.match(byId.body.error.message, /999/);
  });

  it('answers 400 naming the field for times and sizes out of range', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ composition: 'Main', time: 2 }, 'time'],
      [{ composition: 'Main', time: -1 }, 'time'],
      [{ composition: 'Main', width: 8193 }, 'width'],
      [{ composition: 'Main', height: 9000 }, 'height'],
      [{ composition: 'Main', height: 8000 }, 'height'],
      [{ composition: 'Main', fps: 121 }, 'fps'],
      [{ composition: 'Main', format: 'mp4', duration: 601 }, 'duration'],
      [{ composition: 'Main', format: 'mp4', start: 2 }, 'start'],
      [{ composition: 'Main', format: 'mp4', start: 1.5, duration: 1 }, 'duration'],
      [{ composition: 'Main', format: 'mp4', width: 101 }, 'width'],
      [{ composition: 'Main', format: 'png', start: 0 }, 'start'],
      [{ composition: 'Main', format: 'gif' }, 'format'],
      [{ composition: 'Main', colour: 'red' }, 'colour'],
    ];
    for (const [body, field] of cases) {
      const res = await preview(body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.ok(res.text.includes(field), `${JSON.stringify(body)} names ${field}: ${res.text}`);
    }
  });

  it('checks text and media edits exactly as a render does', async () => {
    const edits = { textEdits: [{ layer: 'Bar', text: 'x' }] };
    const res = await preview({ composition: 'Main', ...edits });
    // A preset is checked against the project as a render is (aerender not needed): the same 400.
    const preset = await t.api('POST', '/api/motion/projects/presets', {
      board_id: board,
      element_id: project,
      name: 'p',
      composition: 'Main',
      inputs: edits,
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'invalid_edit');
    // the same mistake; its field is where each request holds the edits (body.textEdits, body.inputs.textEdits)
    assert.equal(res.body.error.message, preset.body.error.message);
    assert.equal(res.body.error.details[0].field, 'body.textEdits[0].layer');
    const media = await preview({ composition: 'Main', mediaEdits: [{ layer: 1, url: '/media/nope.png' }] });
    assert.equal(media.status, 400, media.text);
    assert.equal(media.body.error.code, 'invalid_edit');
  });

  it('queues nothing and writes nothing for a bad request with async: true', async () => {
    const before = await files();
    const res = await preview({ composition: 'Main', time: 5, async: true });
    assert.equal(res.status, 400);
    const jobs = await t.api('GET', `/api/jobs?board_id=${board}`);
    assert.equal(jobs.status, 200);
    assert.equal((jobs.body.jobs ?? jobs.body).filter((j: { kind: string }) => j.kind === 'motion.preview').length, 0);
    assert.deepEqual(await files(), before);
  });
});
