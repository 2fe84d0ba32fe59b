import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { startService, type TestService } from '../helpers/service.js';
import { previewHtml } from '../../src/motion/preview/page.js';
import type { PreparedFrames } from '../../src/motion/preview/frames.js';
import type { PreviewParams } from '../../src/motion/preview/contract.js';
import {
  MASK_FEATHER_SIGMA,
  type DisplayGroup,
  type DisplayList,
  type DisplayNode,
  type Matrix,
} from '../../src/motion/scene/display.js';
import { decodeScene } from '../../src/motion/scene/decode.js';
import { evaluate } from '../../src/motion/scene/evaluate.js';
import { comp, group as sceneGroup, layer, layerData, project, prop } from './scene-builder.js';

/**
 * The preview page's drawer on hand-made display lists, drawn by the HTML renderer over HTTP (POST
 * /api/html/render-frame with the preview page): each feature of the display list checked by the colour of pixels.
 */

const W = 200;
const H = 100;
const I: Matrix = [1, 0, 0, 1, 0, 0];
const RED: [number, number, number, number] = [1, 0, 0, 1];
const GREEN: [number, number, number, number] = [0, 1, 0, 1];
const BLUE: [number, number, number, number] = [0, 0, 1, 1];
const WHITE: [number, number, number, number] = [1, 1, 1, 1];

const solid = (width: number, height: number, color: [number, number, number, number]): DisplayNode => ({
  kind: 'solid',
  width,
  height,
  color,
});
const group = (children: DisplayNode[], o: Partial<DisplayGroup> = {}): DisplayGroup => ({
  kind: 'group',
  matrix: I,
  opacity: 1,
  blend: 'normal',
  children,
  ...o,
});
const at = (x: number, y: number): Matrix => [1, 0, 0, 1, x, y];
const rect = (x: number, y: number, w: number, h: number) => ({
  closed: true,
  v: [
    [x, y],
    [x + w, y],
    [x + w, y + h],
    [x, y + h],
  ] as [number, number][],
  i: [
    [0, 0],
    [0, 0],
    [0, 0],
    [0, 0],
  ] as [number, number][],
  o: [
    [0, 0],
    [0, 0],
    [0, 0],
    [0, 0],
  ] as [number, number][],
});

function list(children: DisplayNode[], size = { width: W, height: H }): DisplayList {
  return {
    composition: { id: 1, name: 'C', ...size, pixelAspect: 1, frameRate: 25, background: [0, 0, 0] },
    time: 0,
    root: group(children),
    approximations: [],
  };
}

function page(l: DisplayList, out = { width: W, height: H }): string {
  const params = { ...out, fps: 25 } as PreviewParams;
  const prepared: PreparedFrames = {
    frames: [0],
    times: [0],
    single: l,
    chunks: 0,
    composition: { width: l.composition.width, height: l.composition.height, background: l.composition.background },
    footage: {},
    fonts: {},
    approximations: [],
  };
  return previewHtml(params, prepared);
}

describe('preview drawer (display list → pixels)', () => {
  let t: TestService;
  let board: string;
  before(async () => {
    t = await startService();
    board = await t.createBoard('drawer');
  });
  after(() => t.close());

  /** Draws a list and answers a pixel reader. */
  async function draw(l: DisplayList, out = { width: W, height: H }) {
    const res = await t.api('POST', '/api/html/render-frame', {
      html: page(l, out),
      board_id: board,
      width: out.width,
      height: out.height,
      fps: 25,
    });
    assert.equal(res.status, 200, res.text);
    const png = Buffer.from(await (await fetch(t.baseUrl + res.body.url)).arrayBuffer());
    const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    return (x: number, y: number): [number, number, number] => {
      const i = (y * info.width + x) * 3;
      return [data[i], data[i + 1], data[i + 2]];
    };
  }
  const near = (got: number[], want: number[], tol = 6) =>
    assert.ok(
      got.every((v, i) => Math.abs(v - want[i]) <= tol),
      `pixel ${JSON.stringify(got)} is not ${JSON.stringify(want)}`,
    );

  it('draws solids at their matrices, with opacity and nested groups (parenting)', async () => {
    const px = await draw(
      list([
        group([solid(40, 40, RED)], { matrix: at(10, 10) }),
        // A child 50 px right of its parent at 100,10: lands at 150,10; half opacity over black.
        group([group([solid(20, 20, GREEN)], { matrix: at(50, 0) })], { matrix: at(100, 10), opacity: 0.5 }),
        // Rotated 90° around its origin at 60,60: covers x 40..60, y 60..80.
        group([solid(20, 20, BLUE)], { matrix: [0, 1, -1, 0, 60, 60] }),
      ]),
    );
    near(px(30, 30), [255, 0, 0]);
    near(px(5, 5), [0, 0, 0]);
    near(px(160, 20), [0, 128, 0]);
    near(px(110, 20), [0, 0, 0]);
    near(px(50, 70), [0, 0, 255]);
    near(px(70, 70), [0, 0, 0]);
  });

  it('blends with multiply, screen and add', async () => {
    const px = await draw(
      list([
        solid(W, H, [0.5, 0.5, 0.5, 1]),
        group([solid(50, 50, [1, 0, 0, 1])], { blend: 'multiply' }),
        group([solid(50, 50, [0, 0, 1, 1])], { blend: 'screen', matrix: at(60, 0) }),
        group([solid(50, 50, [0.25, 0.25, 0.25, 1])], { blend: 'add', matrix: at(120, 0) }),
      ]),
    );
    near(px(25, 25), [128, 0, 0]);
    near(px(85, 25), [128, 128, 255]);
    near(px(145, 25), [191, 191, 191]);
    near(px(25, 80), [128, 128, 128]);
  });

  it('applies masks: add, subtract, inverted, and their opacity', async () => {
    const mask = (mode: 'add' | 'subtract', inverted = false, opacity = 1) => ({
      mode,
      inverted,
      opacity,
      feather: [0, 0] as [number, number],
      expansion: 0,
      path: rect(10, 10, 20, 20),
    });
    const px = await draw(
      list([
        group([solid(40, 40, RED)], { masks: [mask('add')] }),
        group([solid(40, 40, GREEN)], { matrix: at(50, 0), masks: [mask('subtract')] }),
        group([solid(40, 40, BLUE)], { matrix: at(100, 0), masks: [mask('add', true)] }),
        group([solid(40, 40, WHITE)], { matrix: at(150, 0), masks: [mask('add', false, 0.5)] }),
      ]),
    );
    near(px(20, 20), [255, 0, 0]);
    near(px(5, 5), [0, 0, 0]);
    near(px(70, 20), [0, 0, 0]);
    near(px(55, 5), [0, 255, 0]);
    near(px(120, 20), [0, 0, 0]);
    near(px(105, 5), [0, 0, 255]);
    near(px(170, 20), [128, 128, 128]);
  });

  it('feathers a mask as After Effects documents it: a Gaussian centred on the path, each axis its own', async () => {
    // A white layer over black, masked by rectangles: the left one feathered 20 px across only (horizontal feather), the
    // right one 20 px up and down only. After Effects' manual: the feather straddles the path, half inside and half
    // outside, with a Gaussian falloff. So across a feathered edge the alpha is the normal distribution's cumulative at
    // the distance from the path over sigma (MASK_FEATHER_SIGMA x 20 = 7.6 px): 50 % on the path, about 9 % and 91 %
    // half the feather out and in, next to nothing a whole feather out; an edge not feathered stays sharp.
    const F = 20;
    const sigma = MASK_FEATHER_SIGMA * F;
    const mask = (x: number, y: number, w: number, h: number, feather: [number, number]) => ({
      mode: 'add' as const,
      inverted: false,
      opacity: 1,
      feather,
      expansion: 0,
      path: rect(x, y, w, h),
    });
    const px = await draw(
      list([
        group([solid(100, H, WHITE)], { masks: [mask(30, 30, 40, 40, [F, 0])] }),
        group([solid(100, H, WHITE)], { matrix: at(100, 0), masks: [mask(30, 30, 40, 40, [0, F])] }),
      ]),
    );
    // the standard normal cumulative (Abramowitz and Stegun 7.1.26, error under 1.5e-7)
    const phi = (z: number) => {
      const x = Math.abs(z) / Math.SQRT2;
      const t = 1 / (1 + 0.3275911 * x);
      const erf =
        1 -
        ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) *
          t *
          Math.exp(-x * x);
      return z < 0 ? (1 - erf) / 2 : (1 + erf) / 2;
    };
    // inside is positive; a pixel's centre is half a pixel past its index. Tolerance 8 of 255 (3 %): Chromium blurs
    // large sigmas with three box passes (the SVG filter specification allows it), within about 2 % of the Gaussian.
    const profile = (inside: number) => Math.round(255 * phi(inside / sigma));
    for (const d of [-F, -F / 2, -5, 0, 5, F / 2, F]) {
      // left: across its left edge at x = 30, along the middle row
      const x = 30 + d;
      const got = px(Math.floor(x), 50)[0];
      const want = profile(Math.floor(x) + 0.5 - 30);
      assert.ok(Math.abs(got - want) <= 8, `horizontal feather ${d} px from the path: ${got}, not ${want}`);
      // right: across its top edge at y = 30, down the middle column
      const y = 30 + d;
      const gotY = px(150, Math.floor(y))[0];
      const wantY = profile(Math.floor(y) + 0.5 - 30);
      assert.ok(Math.abs(gotY - wantY) <= 8, `vertical feather ${d} px from the path: ${gotY}, not ${wantY}`);
    }
    // documented shape: half at the path, nearly none a whole feather out, nearly all a whole feather in
    assert.ok(px(9, 50)[0] <= 3 && px(50, 50)[0] >= 252);
    // the edges not feathered stay sharp: the left mask's top edge, the right mask's left edge
    near(px(50, 28), [0, 0, 0]);
    near(px(50, 32), [255, 255, 255]);
    near(px(128, 50), [0, 0, 0]);
    near(px(132, 50), [255, 255, 255]);

    // Inverted: one minus the feathered mask, the layer's own edges untouched. Expanded by 10 px: the feather
    // straddles the expanded edge (the manual: expansion controls "where the mask feathering appears").
    const inverted = { ...mask(30, 30, 40, 40, [F, F]), inverted: true };
    const expanded = { ...mask(40, 30, 20, 40, [F, 0]), expansion: 10 };
    const px2 = await draw(
      list([
        group([solid(100, H, WHITE)], { masks: [inverted] }),
        group([solid(100, H, WHITE)], { matrix: at(100, 0), masks: [expanded] }),
      ]),
    );
    near(px2(0, 0), [255, 255, 255]);
    near(px2(0, 50), [255, 255, 255]);
    near(px2(50, 50), [0, 0, 0]);
    for (const d of [-F / 2, 0, F / 2]) {
      const x = Math.floor(30 + d);
      const want = 255 - profile(x + 0.5 - 30);
      assert.ok(Math.abs(px2(x, 50)[0] - want) <= 8, `inverted ${d} px: ${px2(x, 50)[0]}, not ${want}`);
      const xe = Math.floor(130 + d);
      const wantE = profile(xe + 0.5 - 130);
      assert.ok(Math.abs(px2(xe, 50)[0] - wantE) <= 8, `expanded ${d} px: ${px2(xe, 50)[0]}, not ${wantE}`);
    }
  });

  it('keeps a layer by its track matte: alpha, alpha inverted, luma, luma inverted', async () => {
    const matteNode = (x: number, color = WHITE) => group([solid(20, 40, color)], { matrix: at(x, 0) });
    const px = await draw(
      list([
        group([solid(40, 40, RED)], { matte: { mode: 'alpha', node: matteNode(0) } }),
        group([solid(40, 40, GREEN)], { matrix: at(50, 0), matte: { mode: 'alpha-inverted', node: matteNode(50) } }),
        // Luma: the left half of the matte is white (kept), the right half black (dropped).
        group([solid(40, 40, BLUE)], {
          matrix: at(100, 0),
          matte: { mode: 'luma', node: group([matteNode(100), matteNode(120, [0, 0, 0, 1])]) },
        }),
        group([solid(40, 40, WHITE)], {
          matrix: at(150, 0),
          matte: { mode: 'luma-inverted', node: group([matteNode(150), matteNode(170, [0, 0, 0, 1])]) },
        }),
      ]),
    );
    near(px(10, 20), [255, 0, 0]);
    near(px(30, 20), [0, 0, 0]);
    near(px(60, 20), [0, 0, 0]);
    near(px(80, 20), [0, 255, 0]);
    near(px(110, 20), [0, 0, 255]);
    near(px(130, 20), [0, 0, 0]);
    near(px(160, 20), [0, 0, 0]);
    near(px(180, 20), [255, 255, 255]);
  });

  it('draws shapes: fill rule, stroke, linear gradient, trim', async () => {
    const px = await draw(
      list([
        { kind: 'shape', paths: [rect(0, 0, 40, 40), rect(10, 10, 20, 20)], fill: fill(RED, 'evenodd') },
        {
          kind: 'shape',
          paths: [rect(60, 10, 30, 30)],
          stroke: stroke(GREEN, 6),
        },
        {
          kind: 'shape',
          paths: [rect(100, 0, 100, 40)],
          fill: {
            ...fill(WHITE),
            gradient: {
              type: 'linear',
              start: [100, 0],
              end: [200, 0],
              highlight_length: 0,
              highlight_angle: 0,
              stops: [
                { offset: 0, color: [0, 0, 0, 1] },
                { offset: 1, color: [1, 1, 1, 1] },
              ],
            },
          },
        },
        // An open line from x 0 to 200 at y 70, trimmed to its first half.
        {
          kind: 'shape',
          paths: [
            {
              closed: false,
              v: [
                [0, 70],
                [200, 70],
              ],
              i: [
                [0, 0],
                [0, 0],
              ],
              o: [
                [0, 0],
                [0, 0],
              ],
            },
          ],
          stroke: stroke(BLUE, 10),
          trim: { start: 0, end: 0.5, offset: 0, individually: false },
        },
      ]),
    );
    near(px(5, 5), [255, 0, 0]);
    near(px(20, 20), [0, 0, 0]);
    near(px(60, 25), [0, 255, 0]);
    near(px(75, 25), [0, 0, 0]);
    near(px(150, 20), [128, 128, 128], 10);
    near(px(50, 70), [0, 0, 255]);
    near(px(150, 70), [0, 0, 0]);
  });

  it('merge paths: union, the first minus the others, intersection, exclusion, each through its fill', async () => {
    // two 30 px squares overlapping by 10 px in each of four 50 px cells; the third path is painted as it is
    const cell = (x: number, mode: 'add' | 'subtract' | 'intersect' | 'exclude'): DisplayNode => ({
      kind: 'shape',
      paths: [rect(x, 10, 30, 30), rect(x + 20, 10, 30, 30), rect(x, 60, 10, 10)],
      fill: fill(RED),
      merge: { mode, operands: [1, 1] },
    });
    const px = await draw(list([cell(0, 'add'), cell(50, 'subtract'), cell(100, 'intersect'), cell(150, 'exclude')]));
    const row = (x: number) => [px(x + 5, 25), px(x + 25, 25), px(x + 45, 25), px(x + 5, 65)].map((p) => p[0]);
    // red channel at: the first square only, both, the second only, the extra path
    assert.deepEqual(row(0), [255, 255, 255, 255]);
    assert.deepEqual(row(50), [255, 0, 0, 255]);
    assert.deepEqual(row(100), [0, 255, 0, 255]);
    assert.deepEqual(row(150).slice(0, 2), [255, 0]);
    near(px(150 + 45, 25), [255, 0, 0]);
  });

  it('repeater: each copy moved and faded, from a decoded shape layer', async () => {
    const scene = decodeScene(
      project(
        comp({
          id: 1,
          name: 'Main',
          width: W,
          height: H,
          fps: 25,
          duration: 1,
          layers: [
            layer(layerData({ id: 1, type: 4, flags39: 1, duration: 1 }), 'shapes', [
              [
                'ADBE Root Vectors Group',
                sceneGroup([
                  [
                    'ADBE Vector Shape - Rect',
                    sceneGroup([
                      ['ADBE Vector Rect Size', prop({ value: [20, 20] })],
                      ['ADBE Vector Rect Position', prop({ value: [-80, 0] })],
                    ]),
                  ],
                  [
                    'ADBE Vector Graphic - Fill',
                    sceneGroup([['ADBE Vector Fill Color', prop({ value: [1, 0, 0, 1], kind: 'color' })]]),
                  ],
                  [
                    'ADBE Vector Filter - Repeater',
                    sceneGroup([
                      ['ADBE Vector Repeater Copies', prop({ value: [3] })],
                      [
                        'ADBE Vector Repeater Transform',
                        sceneGroup([
                          ['ADBE Vector Repeater Position', prop({ value: [50, 0] })],
                          ['ADBE Vector Repeater Opacity 2', prop({ value: [50] })],
                        ]),
                      ],
                    ]),
                  ],
                ]),
              ],
            ]),
          ],
        }),
      ),
    );
    const px = await draw(evaluate(scene, 1, 0));
    // the layer at the composition's centre: copies at x 20, 70, 120 (opacity 100 %, 75 %, 50 % over black)
    near(px(20, 50), [255, 0, 0]);
    near(px(70, 50), [191, 0, 0]);
    near(px(120, 50), [128, 0, 0]);
    near(px(45, 50), [0, 0, 0]);
    near(px(170, 50), [0, 0, 0]);
  });

  it('draws text (a fallback face when the font is not there) and footage placeholders', async () => {
    const px = await draw(
      list([
        group(
          [
            {
              kind: 'text',
              text: 'HHHH',
              font: 'NoSuchFont-Bold',
              size: 40,
              fill: WHITE,
              stroke_width: 0,
              stroke_over_fill: false,
              tracking: 0,
              leading: 48,
              justification: 'left',
              all_caps: false,
              small_caps: false,
              faux_bold: false,
              faux_italic: false,
              baseline_shift: 0,
              horizontal_scale: 100,
              vertical_scale: 100,
            },
          ],
          { matrix: at(10, 50) },
        ),
        group([{ kind: 'footage', footage_id: 5, name: 'gone.png', width: 60, height: 60, media: 'placeholder' }], {
          matrix: at(130, 20),
        }),
      ]),
    );
    let lit = 0;
    for (let x = 10; x < 120; x++) for (let y = 20; y < 50; y++) if (px(x, y)[0] > 200) lit++;
    assert.ok(lit > 300, `text drew ${lit} white pixels`);
    const p = px(135, 60);
    assert.ok(p[0] > 60 && p[0] === p[1] && p[1] === p[2], `placeholder grey at its edge: ${p}`);
  });

  it('fits the composition inside a different output size on its background, clipping precomps', async () => {
    const l = list([group([solid(400, 400, RED)], { clip: { width: 100, height: 50 }, matrix: at(50, 25) })]);
    l.composition.background = [0, 0, 1];
    // A 200x100 composition in a 100x100 output: scaled by 0.5, centred (25 px bands above and below).
    const px = await draw(l, { width: 100, height: 100 });
    near(px(50, 10), [0, 0, 255]);
    near(px(50, 50), [255, 0, 0]);
    near(px(20, 50), [0, 0, 255]);
    near(px(80, 50), [0, 0, 255]);
  });

  it('blends in the modes Canvas lacks (per pixel), and a shape fill only with its own layer', async () => {
    const gray = [0.5, 0.5, 0.5, 1] as [number, number, number, number];
    const q = [0.25, 0.25, 0.25, 1] as [number, number, number, number];
    const px = await draw(
      list([
        solid(W, H, gray),
        group([solid(30, 30, [0.75, 0.75, 0.75, 1])], { blend: 'linear-burn' }),
        group([solid(30, 30, q)], { blend: 'subtract', matrix: at(40, 0) }),
        group([solid(30, 30, gray)], { blend: 'divide', matrix: at(80, 0) }),
        group([solid(30, 30, [0.25, 0.75, 0.25, 1])], { blend: 'pin-light', matrix: at(120, 0) }),
        // A darken fill over a white fill of the same layer: the layer is drawn on its own surface, so the fill
        // darkens the white fill (to its own colour) and nothing of the gray below.
        group(
          [
            { kind: 'shape', paths: [rect(0, 0, 30, 30)], fill: fill(WHITE) },
            { kind: 'shape', paths: [rect(0, 0, 30, 60)], fill: { ...fill([0.75, 0.2, 0.2, 1]), blend: 'darken' } },
          ],
          { matrix: at(160, 0), isolate: true },
        ),
      ]),
    );
    near(px(15, 15), [64, 64, 64]);
    near(px(55, 15), [64, 64, 64]);
    near(px(95, 15), [255, 255, 255]);
    near(px(135, 15), [128, 128, 128]); // pin light: min(0.5, 0.5) and max(0.5, 0.5)
    near(px(175, 15), [191, 51, 51]);
    // where the layer has only the darken fill, it is drawn as it is (darken over nothing of its own layer)
    near(px(175, 45), [191, 51, 51]);
    near(px(175, 80), [128, 128, 128]);
  });
});

function fill(color: [number, number, number, number], rule: 'nonzero' | 'evenodd' = 'nonzero') {
  return { color, opacity: 1, rule, blend: 'normal' as const };
}

function stroke(color: [number, number, number, number], width: number) {
  return {
    color,
    opacity: 1,
    width,
    cap: 'butt' as const,
    join: 'miter' as const,
    miter_limit: 4,
    dashes: [],
    dash_offset: 0,
    blend: 'normal' as const,
  };
}
