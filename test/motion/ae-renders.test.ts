import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import sharp from 'sharp';
import { startService } from '../helpers/service.js';
import {
  AE_RENDERS,
  aeProjects,
  AePreviewer,
  compareFrames,
  NEAR_IDENTICAL,
  type FrameDiff,
} from '../helpers/ae-compare.js';

/**
 * The judge of issue 32: every project of ../shared/fixtures/after-effects/ae-renders previewed at each frame After
 * Effects rendered (time (frame + 0.01) / fps, at the render's size) and compared with After Effects' picture
 * composited over the composition's background. A project is near-identical when the mean of the largest channel
 * difference is at most 2 (of 255) on every frame.
 *
 * The frames are drawn by the preview's own pipeline batched per project (AePreviewer: decode, evaluate, the preview
 * page in one Chromium page); the first test checks that it gives the preview endpoint's pixels exactly.
 *
 * Not every project is drawn so yet: KNOWN_FAILING names those that are not, so the others must keep passing, and a
 * listed one that starts passing fails the test until it is taken off the list (the list stays true). A table of every
 * project's worst frame is printed either way.
 */
const KNOWN_FAILING = new Set<string>([]);

const haveRenders = fs.existsSync(AE_RENDERS);
if (!haveRenders) console.log(`# ae-renders: ${AE_RENDERS} is absent, the comparison with After Effects is skipped`);
const projects = haveRenders ? aeProjects() : [];

type Row = { name: string; worst: FrameDiff & { frame: number }; error?: string };
const passes = (r: Row) => !r.error && r.worst.mean <= NEAR_IDENTICAL;

describe('previews against After Effects’ own renders', { skip: !haveRenders }, () => {
  const previewer = new AePreviewer();
  const rows: Row[] = [];
  after(async () => {
    const lines = rows.map((r) => {
      const what = r.error
        ? `error: ${r.error}`
        : `${r.worst.mean.toFixed(2).padStart(6)}  frame ${String(r.worst.frame).padEnd(4)} max ${String(Math.round(r.worst.max)).padStart(3)}  ${(r.worst.off * 100).toFixed(1).padStart(5)}% over 16`;
      return `# ${r.name.padEnd(44)} ${what}${passes(r) ? '' : '  FAIL'}`;
    });
    console.log(
      `# ae-renders: ${rows.filter(passes).length} of ${rows.length} near-identical (worst frame's mean largest channel difference <= ${NEAR_IDENTICAL})\n${lines.join('\n')}`,
    );
    await previewer.close();
  });

  it('draws what the preview endpoint draws (one project, over HTTP)', async () => {
    const p = projects.find((x) => x.name === 'layers/image-layer-transform') ?? projects[0];
    const t = await startService({ AERENDER_PATH: '/nonexistent/aerender' });
    try {
      const board = await t.createBoard('AE renders');
      for (const f of p.footage) assert.equal((await t.upload(board, f)).status, 200);
      const up = await t.upload(board, { name: 'project.aep', data: fs.readFileSync(p.aep) });
      assert.equal(up.status, 200, up.text);
      const res = await t.api('POST', '/api/motion/projects/preview', {
        board_id: board,
        url: up.body.url,
        composition: p.composition,
        time: 0,
      });
      assert.equal(res.status, 200, res.text);
      const http = Buffer.from(await (await fetch(t.baseUrl + res.body.url)).arrayBuffer());
      const drawn = await previewer.draw(p, () => [0]);
      const [a, b] = await Promise.all([http, drawn.pngs[0]].map((png) => sharp(png).removeAlpha().raw().toBuffer()));
      assert.ok(a.equals(b), 'the batched drawing differs from the preview endpoint');
    } finally {
      await t.close();
    }
  });

  for (const p of projects) {
    it(p.name, async () => {
      const row: Row = { name: p.name, worst: { mean: 0, max: 0, off: 0, frame: -1 } };
      rows.push(row);
      try {
        const drawn = await previewer.draw(p);
        const bg = drawn.composition.background.map((v) => v * 255) as [number, number, number];
        for (const [k, f] of p.frames.entries()) {
          const d = await compareFrames(f.png, drawn.pngs[k], bg);
          if (row.worst.frame < 0 || d.mean > row.worst.mean) row.worst = { ...d, frame: f.frame };
        }
      } catch (err) {
        row.error = (err as Error).message.split('\n')[0];
        throw err;
      }
      if (KNOWN_FAILING.has(p.name))
        assert.ok(
          !passes(row),
          `${p.name} is now near-identical (${row.worst.mean.toFixed(2)}): take it off KNOWN_FAILING`,
        );
      else
        assert.ok(
          passes(row),
          `${p.name}: frame ${row.worst.frame} differs by ${row.worst.mean.toFixed(2)} on average (at most ${NEAR_IDENTICAL})`,
        );
    });
  }
});
