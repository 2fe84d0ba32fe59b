import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { startService, type TestService } from '../helpers/service.js';
import { tempDir } from '../helpers/fixtures.js';
import { bundleFakeAerender, fakeAerender } from './fake-aerender-setup.js';
import { sampleProject } from './project-builder.js';

describe('motion presets', () => {
  let t: TestService;
  let work: string;
  let log: string;
  let board: string;
  let project: string;

  before(async () => {
    work = await tempDir('bms-motion-');
    log = path.join(work, 'seen.json');
    t = await startService({ AERENDER_PATH: await fakeAerender(work, await bundleFakeAerender(work), 'ok', log) });
    board = await t.createBoard('Presets');
    const up = await t.upload(board, { name: 'template.aep', data: sampleProject() }, { addToBoard: true });
    project = up.body.element.id;
  });
  after(async () => {
    await t.close();
    await fsp.rm(work, { recursive: true, force: true });
  });

  const q = () => `board_id=${board}&element_id=${project}`;
  const seen = async () => JSON.parse(await fsp.readFile(log, 'utf8'));

  it('saves, lists, replaces by name, renders from a preset with explicit edits overriding per layer, deletes', async () => {
    assert.deepEqual((await t.api('GET', `/api/motion/projects/presets?${q()}`)).body, []);
    const inputs = {
      textEdits: [{ layer: 'Title', text: 'From preset' }],
      expressionEdits: [{ layer: 'Bar', property: 'Position', expression: '[1, 1]' }],
    };
    const saved = await t.api('POST', '/api/motion/projects/presets', {
      board_id: board,
      element_id: project,
      name: 'Promo',
      composition: 'Main',
      inputs,
    });
    assert.equal(saved.status, 201, saved.text);
    assert.match(saved.body.id, /^mpreset_/);
    assert.deepEqual(saved.body.inputs, inputs);
    const again = await t.api('POST', '/api/motion/projects/presets', {
      board_id: board,
      element_id: project,
      name: 'Promo',
      composition: 'Main',
      inputs: { ...inputs, textEdits: [{ layer: 1, text: 'Preset v2' }] },
    });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.id, saved.body.id, 'the same name replaces, keeping the id');
    const list = await t.api('GET', `/api/motion/projects/presets?${q()}`);
    assert.deepEqual(
      list.body.map((p: any) => [p.id, p.name, p.composition, p.inputs.textEdits[0].text]),
      [[saved.body.id, 'Promo', 'Main', 'Preset v2']],
    );

    // by name, composition from the preset
    const byName = await t.api('POST', '/api/motion/projects/render', {
      board_id: board,
      element_id: project,
      preset_name: 'Promo',
    });
    assert.equal(byName.status, 200, byName.text);
    let s = await seen();
    assert.equal(s.comp.name, 'Main');
    assert.equal(s.layers.find((l: any) => l.name === 'Title').text, 'Preset v2');
    assert.equal(s.layers.find((l: any) => l.name === 'Bar').position_expression, '[1, 1]');

    // by id, with an explicit text edit on the same layer: the explicit one wins, the preset's expression stays
    const byId = await t.api('POST', '/api/motion/projects/render', {
      board_id: board,
      element_id: project,
      preset_id: saved.body.id,
      textEdits: [{ layer: 'Title', text: 'Explicit' }],
    });
    assert.equal(byId.status, 200, byId.text);
    s = await seen();
    assert.equal(s.layers.find((l: any) => l.name === 'Title').text, 'Explicit');
    assert.equal(s.layers.find((l: any) => l.name === 'Bar').position_expression, '[1, 1]');

    for (const body of [{ preset_id: 'mpreset_unknown' }, { preset_name: 'Nope' }]) {
      const res = await t.api('POST', '/api/motion/projects/render', { board_id: board, element_id: project, ...body });
      assert.equal(res.status, 404, res.text);
    }

    const del = await t.api('DELETE', `/api/motion/projects/presets/${saved.body.id}?${q()}`);
    assert.equal(del.status, 204);
    assert.equal((await t.api('DELETE', `/api/motion/projects/presets/${saved.body.id}?${q()}`)).status, 404);
    assert.deepEqual((await t.api('GET', `/api/motion/projects/presets?${q()}`)).body, []);
  });

  it('checks a preset against the project before saving it', async () => {
    const bad = await t.api('POST', '/api/motion/projects/presets', {
      board_id: board,
      element_id: project,
      name: 'Broken',
      composition: 'Main',
      inputs: { textEdits: [{ layer: 'Backdrop', text: 'x' }] },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'invalid_edit');
    assert.match(bad.body.error.message, /textEdits\[0\]\.layer: layer 3 "Backdrop" is a solid layer/);
    const noComp = await t.api('POST', '/api/motion/projects/presets', {
      board_id: board,
      element_id: project,
      name: 'X',
      composition: 'Nope',
      inputs: {},
    });
    assert.equal(noComp.status, 400);
    const extra = await t.api('POST', '/api/motion/projects/presets', {
      board_id: board,
      element_id: project,
      name: 'X',
      composition: 'Main',
      inputs: { colours: [] },
    });
    assert.equal(extra.status, 400);
    assert.equal(extra.body.error.code, 'invalid_request');
  });

  it('presets go with their project element', async () => {
    const up = await t.upload(board, { name: 'other.aep', data: sampleProject() }, { addToBoard: true });
    const el = up.body.element.id;
    const saved = await t.api('POST', '/api/motion/projects/presets', {
      board_id: board,
      element_id: el,
      name: 'Keep',
      composition: 'Outro',
      inputs: {},
    });
    assert.equal(saved.status, 201, saved.text);
    assert.equal((await t.api('DELETE', `/api/moodboards/${board}/elements/${el}`)).status, 204);
    assert.equal((await t.api('GET', `/api/motion/projects/presets?board_id=${board}&element_id=${el}`)).status, 404);
    assert.equal(
      (
        t.service.ctx.db.prepare('SELECT COUNT(*) AS n FROM motion_presets WHERE element_id = ?').get(el) as {
          n: number;
        }
      ).n,
      0,
    );
  });
});
