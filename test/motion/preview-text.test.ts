import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { startService, type TestService } from '../helpers/service.js';
import type { DisplayText } from '../../src/motion/scene/display.js';
import { textPage } from '../helpers/text-page.js';

/**
 * The drawer's text layout against After Effects' documented behaviour (docs/motion.md "Text"): box text breaks after
 * spaces and hyphens and inside a word wider than the box, its first baseline is the box's top plus the font's
 * ascent, lines below the box are overset, spaces at a line's end hang. The ascent is given (0.75 em) so the rows are
 * known whatever sans-serif face the machine has.
 */

const W = 400;
const H = 120;
const text = (t: string, box: DisplayText['box'], o: Partial<DisplayText> = {}): DisplayText => ({
  kind: 'text',
  text: t,
  font: 'Given-Ascent',
  size: 20,
  fill: [1, 1, 1, 1],
  stroke_width: 0,
  stroke_over_fill: false,
  tracking: 0,
  leading: 30,
  justification: 'left',
  all_caps: false,
  small_caps: false,
  faux_bold: false,
  faux_italic: false,
  baseline_shift: 0,
  horizontal_scale: 100,
  vertical_scale: 100,
  box,
  ...o,
});

const page = (nodes: [number, DisplayText][]) =>
  textPage(
    W,
    H,
    nodes.map(([x, n]) => [x, 10, n]),
  );

describe('preview drawer: text laid out as After Effects lays it out', () => {
  let t: TestService;
  let board: string;
  before(async () => {
    t = await startService();
    board = await t.createBoard('text');
  });
  after(() => t.close());

  it('breaks box text at spaces, hyphens and inside long words, from the box top + ascent, hiding overset lines', async () => {
    const box = (width: number, height: number) => ({ x: 0, y: 0, width, height });
    const res = await t.api('POST', '/api/html/render-frame', {
      html: page([
        [10, text('HHH HHH', box(70, 110))],
        [100, text('HHHHHHHHHH', box(70, 110))],
        [200, text('HHH HHH HHH', box(70, 40))],
        [300, text('HH-HHHHH', box(90, 110))],
      ]),
      board_id: board,
      width: W,
      height: H,
      fps: 25,
    });
    assert.equal(res.status, 200, res.text);
    const png = Buffer.from(await (await fetch(t.baseUrl + res.body.url)).arrayBuffer());
    const { data } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const lit = (x0: number, x1: number, y0: number, y1: number) => {
      let n = 0;
      for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) if (data[(y * W + x) * 3] > 128) n++;
      return n;
    };
    // Baselines at 10 + 0.75 x 20 = 25, then 55, 85: capitals stand on them, nothing above the box's top.
    for (const x of [10, 100, 200, 300]) assert.equal(lit(x, x + 90, 0, 10), 0, `nothing above the box at ${x}`);
    for (const x of [10, 100, 200, 300]) assert.ok(lit(x, x + 90, 12, 26) > 60, `first line on its baseline at ${x}`);
    // "HHH HHH": two lines; nothing on the third.
    assert.ok(lit(10, 90, 42, 56) > 60);
    assert.equal(lit(10, 90, 72, 86), 0);
    // A word wider than the box breaks between characters: three lines, none past the box's right side.
    assert.ok(lit(100, 170, 72, 86) > 30, 'third line of the long word');
    assert.equal(lit(172, 200, 0, H), 0, 'the long word stays in its box');
    // The box holds one line (the second baseline, 55, is below its bottom, 50): the rest is overset.
    assert.equal(lit(200, 290, 30, H), 0, 'overset lines are not drawn');
    // After a hyphen: "HH-" then "HHHHH".
    assert.ok(lit(300, 390, 42, 56) > 60, 'second line after the hyphen');
    assert.equal(lit(300 + 50, 390, 12, 26), 0, 'first line ends at the hyphen');
  });
});
