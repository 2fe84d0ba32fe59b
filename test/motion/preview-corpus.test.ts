import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { startService, type TestService } from '../helpers/service.js';

/**
 * Every composition of every real project of ../shared/fixtures/after-effects/corpus previews: one small PNG each
 * (64 px wide, the first frame), never a 500 and never a refusal of the file. Missing footage, fonts and effects are
 * approximations, not errors. Small and one frame each, so the whole corpus costs a few seconds of CPU.
 */
const CORPUS = path.resolve('../shared/fixtures/after-effects/corpus');
const haveCorpus = fs.existsSync(CORPUS);
if (!haveCorpus) console.log(`# motion preview corpus: ${CORPUS} is absent, the real After Effects corpus is skipped`);

function projects(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? projects(path.join(dir, e.name)) : /\.aepx?$/i.test(e.name) ? [path.join(dir, e.name)] : [],
    )
    .sort();
}

describe('motion preview of the real corpus', { skip: !haveCorpus }, () => {
  let t: TestService;
  let board: string;
  before(async () => {
    t = await startService({ AERENDER_PATH: '/nonexistent/aerender' });
    board = await t.createBoard('Preview corpus');
  });
  after(() => t?.close());

  it('draws every composition of every file', async () => {
    let drawn = 0;
    for (const file of haveCorpus ? projects(CORPUS) : []) {
      const name = path.relative(CORPUS, file);
      const up = await t.upload(board, { name: name.replace(/[\\/]/g, '__'), data: fs.readFileSync(file) });
      assert.equal(up.status, 200, `${name}: ${up.text}`);
      const inspected = await t.api('POST', '/api/motion/projects/inspect', { board_id: board, url: up.body.url });
      assert.equal(inspected.status, 200, `${name}: ${inspected.text}`);
      for (const comp of inspected.body.compositions) {
        const res = await t.api('POST', '/api/motion/projects/preview', {
          board_id: board,
          url: up.body.url,
          composition: comp.id,
          width: 64,
        });
        assert.equal(res.status, 200, `${name} "${comp.name}": ${res.text}`);
        assert.equal(res.body.type, 'image');
        assert.ok(Array.isArray(res.body.approximations));
        const png = Buffer.from(await (await fetch(t.baseUrl + res.body.url)).arrayBuffer());
        const meta = await sharp(png).metadata();
        assert.equal(meta.width, 64, `${name} "${comp.name}"`);
        assert.equal(meta.height, res.body.height);
        drawn++;
      }
    }
    assert.ok(drawn >= 50, `${drawn} compositions drawn`);
  });
});
