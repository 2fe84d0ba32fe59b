import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { startService, type TestService } from '../helpers/service.js';
import { framePage } from '../helpers/text-page.js';
import type { DisplayEffect, DisplayGroup, DisplayList, DisplayNode } from '../../src/motion/scene/display.js';
import { DRAWN_EFFECTS, DRAWN_STYLES } from '../../src/motion/scene/effects.js';
import { contourTable, GAUSSIAN_CONTOUR } from '../../src/motion/preview/contours.js';

/**
 * Effects and layer styles drawn by the preview page (draw-effects.ts), checked against their documented behaviour on
 * hand-made display lists (pixel values), and the Lottie-Windows BlurOverlap project (Gaussian Blur on precomps and
 * shapes) against After Effects' own frames (../shared/fixtures/after-effects/ae-renders/, skipped without it).
 */
const W = 200;
const H = 100;
const RENDERS = path.resolve('../shared/fixtures/after-effects/ae-renders/CommunityToolkit__Lottie-Windows');
const haveRenders = fs.existsSync(path.join(RENDERS, 'BlurOverlap', 'AfterEffects.aep'));
if (!haveRenders) console.log(`# motion effects: ${RENDERS} is absent, the After Effects comparison is skipped`);

const solid = (width: number, height: number, color: number[]): DisplayNode => ({
  kind: 'solid',
  width,
  height,
  color: color as [number, number, number, number],
});
const layer = (children: DisplayNode[], o: Partial<DisplayGroup> = {}): DisplayGroup => ({
  kind: 'group',
  matrix: [1, 0, 0, 1, 0, 0],
  opacity: 1,
  blend: 'normal',
  children,
  ...o,
});
const fx = (kind: string, params: DisplayEffect['params']): DisplayEffect => ({
  kind,
  match_name: kind,
  params,
  time: 0,
});

function page(children: DisplayNode[], background: [number, number, number] = [0, 0, 0]): string {
  const l: DisplayList = {
    composition: { id: 1, name: 'C', width: W, height: H, pixelAspect: 1, frameRate: 25, background },
    time: 0,
    root: layer(children),
    approximations: [],
  };
  return framePage(l);
}

describe('preview effects (display list → pixels)', () => {
  let t: TestService;
  let board: string;
  before(async () => {
    t = await startService();
    board = await t.createBoard('effects');
  });
  after(() => t.close());

  async function draw(children: DisplayNode[], background: [number, number, number] = [0, 0, 0]) {
    const res = await t.api('POST', '/api/html/render-frame', {
      html: page(children, background),
      board_id: board,
      width: W,
      height: H,
      fps: 25,
    });
    assert.equal(res.status, 200, res.text);
    const png = Buffer.from(await (await fetch(t.baseUrl + res.body.url)).arrayBuffer());
    const { data } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    return (x: number, y: number): number[] => {
      const i = (y * W + x) * 3;
      return [data[i], data[i + 1], data[i + 2]];
    };
  }
  const near = (got: number[], want: number[], tol = 4) =>
    assert.ok(
      got.every((v, i) => Math.abs(v - want[i]) <= tol),
      `pixel ${JSON.stringify(got)} is not ${JSON.stringify(want)}`,
    );

  it('Gaussian Blur: an edge becomes the normal CDF with sigma 0.3 x blurriness; Horizontal leaves rows sharp', async () => {
    // a white half-plane x >= 100 blurred by 20: sigma 6, so at x = 100 + 6 the level is Phi(1) - 84 %
    const px = await draw([
      layer([solid(100, 40, [1, 1, 1, 1])], {
        matrix: [1, 0, 0, 1, 100, 0],
        effects: [fx('gaussian-blur', { Blurriness: 20, 'Blur Dimensions': 1, 'Repeat Edge Pixels': 0 })],
        layerSize: { width: 100, height: 40 },
      }),
      layer([solid(100, 40, [1, 1, 1, 1])], {
        matrix: [1, 0, 0, 1, 100, 60],
        effects: [fx('gaussian-blur', { Blurriness: 20, 'Blur Dimensions': 2, 'Repeat Edge Pixels': 0 })],
        layerSize: { width: 100, height: 40 },
      }),
    ]);
    const v = (x: number) => px(x, 20)[0] / 255;
    // pixel centres: x + 0.5 - 100 away from the edge
    const cdf = (d: number) => 0.5 * (1 + erf(d / 6 / Math.SQRT2));
    for (const x of [90, 96, 100, 103, 106, 112])
      assert.ok(Math.abs(v(x) - cdf(x + 0.5 - 100)) < 0.04, `x ${x}: ${v(x)}`);
    // horizontal only: the bottom layer's top edge (y 60) stays sharp
    near(px(150, 58), [0, 0, 0], 3);
    near(px(150, 61), [255, 255, 255], 3);
  });

  it('Levels maps input black/white and gamma; Invert; Tint maps luminance between two colours', async () => {
    const grey = [0.5, 0.5, 0.5, 1];
    const px = await draw([
      layer([solid(50, 50, grey)], {
        effects: [
          fx('levels', {
            'Channel:': 1,
            'Input Black': 0.25,
            'Input White': 0.75,
            Gamma: 1,
            'Output Black': 0,
            'Output White': 1,
          }),
        ],
        layerSize: { width: 50, height: 50 },
      }),
      layer([solid(50, 50, [0.2, 0.2, 0.2, 1])], {
        matrix: [1, 0, 0, 1, 50, 0],
        effects: [
          fx('levels', {
            'Channel:': 1,
            'Input Black': 0,
            'Input White': 1,
            Gamma: 2,
            'Output Black': 0,
            'Output White': 1,
          }),
        ],
        layerSize: { width: 50, height: 50 },
      }),
      layer([solid(50, 50, [1, 0.25, 0, 1])], {
        matrix: [1, 0, 0, 1, 100, 0],
        effects: [fx('invert', { Channel: 1, 'Blend With Original': 0 })],
        layerSize: { width: 50, height: 50 },
      }),
      layer([solid(50, 50, [1, 1, 1, 1])], {
        matrix: [1, 0, 0, 1, 150, 0],
        effects: [fx('tint', { 'Map Black To': [0, 0, 0, 1], 'Map White To': [0, 0, 1, 1], 'Amount to Tint': 100 })],
        layerSize: { width: 50, height: 50 },
      }),
    ]);
    // (0.5 - 0.25) / 0.5 = 0.5 -> 128
    near(px(25, 25), [128, 128, 128], 2);
    // gamma 2: 0.2^(1/2) = 0.447 -> 114
    near(px(75, 25), [114, 114, 114], 2);
    near(px(125, 25), [0, 191, 255], 2);
    near(px(175, 25), [0, 0, 255], 2);
  });

  it('an adjustment layer inverts the layers below it where it covers, at its opacity, within its own composition', async () => {
    const invertFx = [fx('invert', { Channel: 1, 'Blend With Original': 0 })];
    const px = await draw([
      layer([solid(200, 100, [1, 0, 0, 1])]),
      // a blue square at 120..160 below the adjustment: inverted to yellow where the adjustment is whole
      layer([solid(40, 40, [0, 0, 1, 1])], { matrix: [1, 0, 0, 1, 120, 10] }),
      // covers x 100..200, y 0..60 (a solid 100 x 60); its masked-out bottom right and its half opacity
      layer([solid(100, 60, [0.3, 0.3, 0.3, 1])], {
        matrix: [1, 0, 0, 1, 100, 0],
        adjustment: true,
        effects: invertFx,
        layerSize: { width: 100, height: 60 },
        masks: [
          {
            mode: 'add',
            inverted: false,
            opacity: 1,
            feather: [0, 0],
            expansion: 0,
            path: {
              closed: true,
              v: [
                [0, 0],
                [50, 0],
                [50, 60],
                [0, 60],
              ],
              i: [],
              o: [],
            },
          },
        ],
      }),
      // half opacity over x 0..50, y 60..100
      layer([solid(50, 40, [0, 0, 0, 1])], {
        matrix: [1, 0, 0, 1, 0, 60],
        adjustment: true,
        opacity: 0.5,
        effects: invertFx,
        layerSize: { width: 50, height: 40 },
      }),
      // a layer above an adjustment layer is not adjusted by it
      layer([solid(20, 20, [0, 1, 0, 1])], { matrix: [1, 0, 0, 1, 105, 5] }),
      // a precomposition's adjustment layer adjusts its own layers only: nothing below it inside, red stays red
      layer(
        [
          layer([solid(200, 100, [0, 0, 0, 1])], {
            adjustment: true,
            effects: invertFx,
            layerSize: { width: 200, height: 100 },
          }),
        ],
        {
          matrix: [1, 0, 0, 1, 60, 80],
          clip: { width: 20, height: 20 },
        },
      ),
    ]);
    // red inverted: cyan; blue inverted: yellow; outside the mask (x 150..200) untouched
    near(px(130, 50), [0, 255, 255], 2);
    near(px(140, 30), [255, 255, 0], 2);
    near(px(155, 30), [0, 0, 255], 2);
    near(px(180, 50), [255, 0, 0], 2);
    // below it (y 60..100) nothing covers
    near(px(130, 80), [255, 0, 0], 2);
    // half opacity: red x 0.5 + cyan x 0.5
    near(px(25, 80), [128, 128, 128], 2);
    near(px(110, 10), [0, 255, 0], 2);
    near(px(70, 90), [255, 0, 0], 2);
  });

  it('motion blur: the mean of the samples over the shutter, empty instants counted', async () => {
    // a white bar 10 px wide at 40 positions 1 px apart: at x = 100 + j, min(j + 1, 10, 40 - j + 9) samples of 40 cover
    const bar = (y: number, total: number) =>
      layer(
        Array.from({ length: 40 }, (_, d) =>
          layer([solid(10, 20, [1, 1, 1, 1])], { matrix: [1, 0, 0, 1, 100 + d, y] }),
        ),
        { motionBlur: total },
      );
    const px = await draw([bar(10, 40), bar(50, 80)]);
    const level = (x: number, y: number) => px(x, y)[0];
    for (const [j, covered] of [
      [0, 1],
      [4, 5],
      [9, 10],
      [25, 10],
      [44, 5],
    ]) {
      assert.ok(Math.abs(level(100 + j, 20) - (255 * covered) / 40) <= 3, `x ${100 + j}: ${level(100 + j, 20)}`);
      assert.ok(Math.abs(level(100 + j, 60) - (255 * covered) / 80) <= 3, `x ${100 + j}: ${level(100 + j, 60)}`);
    }
    near(px(99, 20), [0, 0, 0], 0);
    near(px(149, 20), [0, 0, 0], 0);
  });

  it('Drop Shadow: offset by distance along the direction (135 = down right), its opacity of 255, under the layer', async () => {
    const px = await draw(
      [
        layer([solid(40, 40, [1, 0, 0, 1])], {
          matrix: [1, 0, 0, 1, 20, 20],
          effects: [
            fx('drop-shadow', {
              'Shadow Color': [0, 0, 1, 1],
              Opacity: 255,
              Direction: 180,
              Distance: 20,
              Softness: 0,
              'Shadow Only': 0,
            }),
          ],
          layerSize: { width: 40, height: 40 },
        }),
      ],
      [1, 1, 1],
    );
    near(px(40, 40), [255, 0, 0]);
    // direction 180 points down: the shadow shows below the layer, from y 60 to 80
    near(px(40, 70), [0, 0, 255]);
    near(px(40, 85), [255, 255, 255]);
    near(px(70, 40), [255, 255, 255]);
  });

  it('Fill, Linear Wipe and the drop shadow layer style', async () => {
    const px = await draw(
      [
        layer([solid(50, 50, [1, 0, 0, 1])], {
          effects: [fx('fill', { Color: [0, 1, 0, 1], Opacity: 1 })],
          layerSize: { width: 50, height: 50 },
        }),
        layer([solid(80, 50, [0, 0, 1, 1])], {
          matrix: [1, 0, 0, 1, 60, 0],
          // wipe angle 90: from left to right; half done
          effects: [fx('linear-wipe', { 'Transition Completion': 50, 'Wipe Angle': 90, Feather: 0 })],
          layerSize: { width: 80, height: 50 },
        }),
        layer([solid(30, 30, [1, 1, 1, 1])], {
          matrix: [1, 0, 0, 1, 150, 10],
          styles: [{ kind: 'dropShadow', params: { distance: 10, blur: 0, opacity: 100, localLightingAngle: 90 } }],
          layerSize: { width: 30, height: 30 },
        }),
      ],
      [0.5, 0.5, 0.5],
    );
    near(px(25, 25), [0, 255, 0]);
    near(px(70, 25), [128, 128, 128]);
    near(px(130, 25), [0, 0, 255]);
    // light from above (90°): the shadow falls 10 px below
    near(px(165, 45), [0, 0, 0]);
    near(px(165, 25), [255, 255, 255]);
  });

  it('Set Matte keeps the layer where the other layer is; Displacement Map moves pixels by the map', async () => {
    const matte = layer([solid(100, 50, [1, 1, 1, 1])]);
    // a map of value 1 in red: every pixel takes the one (1 - 0.5) x 2 x 10 = 10 px to its right
    const map = layer([solid(W, H, [1, 0.5, 0.5, 1])]);
    const px = await draw([
      layer([solid(W, 50, [1, 0, 0, 1])], {
        effects: [
          {
            ...fx('set-matte', { 'Use For Matte': 4, 'Invert Matte': 0, 'Composite Matte with Original': 1 }),
            layers: { 'Take Matte From Layer': matte },
          },
        ],
        layerSize: { width: W, height: 50 },
      }),
      layer([solid(50, 50, [0, 0, 1, 1])], {
        matrix: [1, 0, 0, 1, 100, 50],
        effects: [
          {
            ...fx('displacement-map', {
              'Use For Horizontal Displacement': 1,
              'Max Horizontal Displacement': 10,
              'Use For Vertical Displacement': 2,
              'Max Vertical Displacement': 10,
            }),
            layers: { 'Displacement Map Layer': map },
          },
        ],
        layerSize: { width: 50, height: 50 },
      }),
    ]);
    near(px(50, 25), [255, 0, 0]);
    near(px(150, 25), [0, 0, 0]);
    // the blue square (x 100..150) now shows from x 90 to 140
    near(px(92, 75), [0, 0, 255]);
    near(px(145, 75), [0, 0, 0]);
  });

  it("Roto Brush: the stored matte is the layer's alpha, stretched over its rectangle; inverted when asked", async () => {
    // a 4x1 matte [255, 255, 128, 0] over a 200x50 red layer: each matte pixel covers 50 output pixels
    const alpha = Buffer.from([255, 255, 128, 0]).toString('base64');
    const roto = (inv: number, y: number) =>
      layer([solid(W, 50, [1, 0, 0, 1])], {
        matrix: [1, 0, 0, 1, 0, y],
        effects: [
          { ...fx('roto-brush', { 'Invert Foreground/Background': inv }), matte: { width: 4, height: 1, alpha } },
        ],
        layerSize: { width: W, height: 50 },
      });
    const px = await draw([roto(0, 0), roto(1, 50)]);
    near(px(40, 25), [255, 0, 0]);
    near(px(125, 25), [128, 0, 0]);
    near(px(190, 25), [0, 0, 0]);
    near(px(40, 75), [0, 0, 0]);
    near(px(125, 75), [127, 0, 0]);
    near(px(190, 75), [255, 0, 0]);
  });

  it("Roto Brush's Fine-tune step: Feather F blurs the matte's edge over F layer pixels, Contrast steepens it, Shift Edge moves it", async () => {
    // a 200x50 red layer whose matte is opaque left of x = 100 and clear right of it (1 matte pixel per layer pixel,
    // or 2 layer pixels per matte pixel for the half-resolution matte). Feather 20: a Gaussian of sigma 0.38 x 20 =
    // 7.6, so the edge is Phi((100 - x) / 7.6): 91 % at F / 2 = 10 pixels inside, 9 % at 10 outside, half on it
    const matte = (w: number, h: number) =>
      Buffer.from(Uint8Array.from({ length: w * h }, (_, i) => (i % w < w / 2 ? 255 : 0))).toString('base64');
    const roto = (y: number, params: DisplayEffect['params'], half = false) =>
      layer([solid(W, 50, [1, 0, 0, 1])], {
        matrix: [1, 0, 0, 1, 0, y],
        effects: [
          {
            ...fx('roto-brush', { 'Fine-tune Roto Brush Matte': 1, Feather: 20, ...params }),
            matte: half
              ? { width: 100, height: 25, alpha: matte(100, 25) }
              : { width: W, height: 50, alpha: matte(W, 50) },
          },
        ],
        layerSize: { width: W, height: 50 },
      });
    const level = (z: number) => 0.5 * (1 + erf(z / Math.SQRT2));
    // pixel x's centre is x + 0.5
    const feathered = (x: number) => level((100 - x - 0.5) / 7.6);
    const red = (a: number) => [Math.round(a * 255), 0, 0];
    const a = await draw([roto(0, {}), roto(50, { Contrast: 50 })]);
    for (const x of [80, 89, 95, 99, 100, 104, 110, 120]) near(a(x, 25), red(feathered(x)), 5);
    // the feathered edge is within 1 % of clear and opaque at F pixels from it, and its rows stay whole to the matte's
    // top and bottom (the border repeated, not faded)
    assert.ok(a(79, 25)[0] >= 248 && a(120, 25)[0] <= 7, `${a(79, 25)} ${a(120, 25)}`);
    near(a(60, 0), [255, 0, 0], 2);
    // Contrast 50 %: twice as steep about 50 %
    const steep = (x: number) => Math.min(1, Math.max(0, 0.5 + (feathered(x) - 0.5) / 0.5));
    for (const x of [90, 95, 99, 103, 106]) near(a(x, 75), red(steep(x)), 6);
    near(a(85, 75), [255, 0, 0], 2);
    near(a(115, 75), [0, 0, 0], 2);
    // Shift Edge 50 %: levels above 0 reach full at 50 %, so the edge moves out (9 % at x = 110 becomes 18 %);
    // -50 % moves it in. Contrast 100 % on the half-resolution matte: a hard edge at the feathered 50 %, x = 100
    const b = await draw([roto(0, { 'Shift Edge': 50 }), roto(50, { 'Shift Edge': -50 })]);
    for (const x of [95, 104, 110, 116]) near(b(x, 25), red(Math.min(1, feathered(x) / 0.5)), 6);
    for (const x of [84, 90, 95]) near(b(x, 75), red(Math.max(0, (feathered(x) - 0.5) / 0.5)), 6);
    const c = await draw([roto(0, { Contrast: 100 }, true), roto(50, { Feather: 0 }, true)]);
    near(c(97, 25), [255, 0, 0], 2);
    near(c(102, 25), [0, 0, 0], 2);
    // Feather 0 on the half-resolution matte: the stored edge, stretched (one layer pixel of partial coverage)
    near(c(95, 75), [255, 0, 0], 2);
    near(c(104, 75), [0, 0, 0], 2);
  });

  it('Bevel and Emboss (inner bevel, smooth) lights the edge facing the light and shades the other; flat is as it was', async () => {
    // a grey 100x60 square at (50, 20), defaults: size 5 (sigma 2.5), depth 100 %, angle 120, altitude 30. Inner
    // bevel height h = max(0, 2v - 1), v the blurred alpha = Phi(d / 2.5) at d pixels inside the edge. At x = 51 on
    // the middle row: h(50) = 0.1585, h(52) = 0.6827, so the normal is (-(0.2621 x 5), 0, 1); lit from
    // (cos 30 cos 120, -cos 30 sin 120, sin 30) its shade is 0.6476 against 0.5 for flat ground: highlight
    // (0.6476 - 0.5) / 0.5 x 75 % = 0.221 of white screened on 128 -> 156. At x = 148 the mirror normal gives shade
    // -0.041: shadow (0.5 + 0.041) / 1.5 x 75 % = 0.271 of black multiplied -> 93.
    const grey = (styles: DisplayGroup['styles']) =>
      layer([solid(100, 60, [0.5, 0.5, 0.5, 1])], {
        matrix: [1, 0, 0, 1, 50, 20],
        styles,
        layerSize: { width: 100, height: 60 },
      });
    const px = await draw([grey([{ kind: 'bevelEmboss', params: {} }])]);
    near(px(100, 50), [128, 128, 128]);
    near(px(51, 50), [156, 156, 156], 6);
    near(px(148, 50), [93, 93, 93], 6);
    // the top edge faces the light too, the bottom one away from it
    assert.ok(px(100, 21)[0] > 140 && px(100, 78)[0] < 115, `${px(100, 21)} ${px(100, 78)}`);
    near(px(47, 50), [0, 0, 0]);
    // outer bevel: the ramp lies outside the edge (lit on the left, drawn under the layer); pillow emboss and
    // direction down draw (no page error) and turn the left edge's inside away from the light
    const outer = await draw([
      grey([{ kind: 'bevelEmboss', params: { bevelStyle: 1 } }]),
      layer([solid(20, 20, [0.5, 0.5, 0.5, 1])], {
        matrix: [1, 0, 0, 1, 170, 70],
        styles: [{ kind: 'bevelEmboss', params: { bevelStyle: 4, bevelDirection: 2, softness: 2 } }],
        layerSize: { width: 20, height: 20 },
      }),
    ]);
    assert.ok(outer(47, 50)[0] > 10, `outer bevel ${outer(47, 50)}`);
    near(outer(100, 50), [128, 128, 128]);
    assert.ok(outer(171, 80)[0] < 128, `pillow emboss, down ${outer(171, 80)}`);
    // Satin (defaults: black, multiply, 50 %, angle 19, distance 11, size 14, inverted): far from the edges both
    // moved copies cover, their difference is 0, inverted 1: black at 50 % multiplied, 64; not inverted, untouched
    const satin = await draw([grey([{ kind: 'chromeFX', params: {} }])]);
    near(satin(100, 50), [64, 64, 64]);
    const plain = await draw([grey([{ kind: 'chromeFX', params: { invert: 0 } }])]);
    near(plain(100, 50), [128, 128, 128]);
    assert.ok(plain(56, 50)[0] < 120, `satin near the edge ${plain(56, 50)}`);
    // near the left edge on the middle row, the two copies moved 11 px along 19 degrees (x +-10.4) and blurred by
    // sigma 7 cover Phi((x + 0.5 - 60.4) / 7) and Phi((x + 0.5 - 39.6) / 7); each goes through Photoshop's Gaussian
    // contour before their difference: at x = 65 the nearer copy's 0.77 becomes 0.92 (a linear contour would keep
    // it, about 10 levels of grey apart)
    const gaussian = contourTable(GAUSSIAN_CONTOUR);
    const cover = (edge: number, x: number) => 0.5 * (1 + erf((x + 0.5 - edge) / 7 / Math.SQRT2));
    const shaped = (v: number) => gaussian[Math.round(v * 255)] / 255;
    for (const x of [58, 62, 65, 70]) {
      const satin = shaped(cover(50 + 10.4, x)) - shaped(cover(50 - 10.4, x));
      const v = Math.round(128 * (1 - 0.5 * Math.abs(satin)));
      near(plain(x, 50), [v, v, v], 3);
    }
  });

  it('every effect kind and layer style draws with its defaults and with typical values (no page error)', async () => {
    const kinds: [string, DisplayEffect['params']][] = [
      ...Object.values(DRAWN_EFFECTS).map((d): [string, DisplayEffect['params']] => [
        d.kind,
        Object.fromEntries(Object.entries(d.defaults ?? {}).map(([k, v]) => [k, v.length === 1 ? v[0] : v])),
      ]),
      ['radial-blur', { Amount: 30, Center: [25, 25], Type: 2 }],
      ['directional-blur', { Direction: 45, 'Blur Length': 10 }],
      ['radial-wipe', { 'Transition Completion': 40, 'Start Angle': 30, Wipe: 3, Feather: 5 }],
      ['venetian-blinds', { 'Transition Completion': 50, Direction: 30, Width: 8, Feather: 2 }],
      ['transform', { 'Anchor Point': [25, 25], Position: [30, 20], Scale: 80, Rotation: 30, Skew: 10, Opacity: 50 }],
      ['motion-tile', { 'Tile Width': 50, 'Tile Height': 50, 'Output Width': 200, 'Mirror Edges': 1 }],
      ['glow', { 'Glow Threshold': 50, 'Glow Radius': 20, 'Glow Intensity': 2, 'Glow Colors': 2 }],
      ['turbulent-displace', { Amount: 20, Size: 30 }],
    ];
    // each layer draws a red square with one effect; the page must draw the frame (a page error fails the render)
    const layers = kinds.map(([kind, params], k) =>
      layer([solid(50, 50, [1, 0, 0, 1])], {
        matrix: [0.3, 0, 0, 0.3, (k % 12) * 16, Math.floor(k / 12) * 16],
        effects: [fx(kind, params)],
        layerSize: { width: 50, height: 50 },
      }),
    );
    const styles = [...DRAWN_STYLES];
    layers.push(
      layer([solid(20, 20, [1, 1, 1, 1])], {
        matrix: [1, 0, 0, 1, 170, 70],
        styles: styles.map((kind) => ({ kind, params: {} })),
        layerSize: { width: 20, height: 20 },
      }),
    );
    const px = await draw(layers, [0.5, 0.5, 0.5]);
    // the frame was drawn to its last layer (drawing stops at a page error): the background shows where no layer
    // is, the styled square is not background (a gradient overlay halfway down would be 128)
    near(px(100, 95), [128, 128, 128]);
    assert.notDeepEqual(px(175, 72), [128, 128, 128]);
  });
});

/** Abramowitz-Stegun 7.1.26 (error below 1.5e-7). */
function erf(x: number): number {
  const s = Math.sign(x);
  const a = Math.abs(x);
  const t = 1 / (1 + 0.3275911 * a);
  const y =
    1 -
    ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-a * a);
  return s * y;
}

describe(
  'Gaussian Blur against After Effects (Lottie-Windows BlurOverlap)',
  { skip: haveRenders ? false : `${RENDERS} is absent` },
  () => {
    let t: TestService;
    let board: string;
    let projectId: string;
    before(async () => {
      t = await startService();
      board = await t.createBoard('blur');
      const data = fs.readFileSync(path.join(RENDERS, 'BlurOverlap', 'AfterEffects.aep'));
      const up = await t.upload(board, { name: 'BlurOverlap.aep', data }, { addToBoard: true });
      assert.equal(up.status, 200, up.text);
      projectId = up.body.element.id;
    });
    after(() => t.close());

    it('each frame After Effects rendered is within the comparison bounds', async () => {
      const frames = fs
        .readdirSync(path.join(RENDERS, 'BlurOverlap', 'Frames'))
        .filter((f) => f.endsWith('.png'))
        .sort();
      const figures: string[] = [];
      let worst = 0;
      for (const f of frames.filter((_, k) => k % 3 === 0)) {
        const n = Number(/(\d+)/.exec(f)![1]);
        const res = await t.api('POST', '/api/motion/projects/preview', {
          board_id: board,
          element_id: projectId,
          composition: 'Main',
          time: (n + 0.01) / 30,
        });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body.approximations, []);
        const ours = await sharp(Buffer.from(await (await fetch(t.baseUrl + res.body.url)).arrayBuffer()))
          .removeAlpha()
          .raw()
          .toBuffer();
        // After Effects' RGBA over the composition's white background
        const ae = await sharp(path.join(RENDERS, 'BlurOverlap', 'Frames', f))
          .flatten({ background: '#ffffff' })
          .removeAlpha()
          .raw()
          .toBuffer();
        let sum = 0;
        for (let i = 0; i < ae.length; i += 3)
          sum += Math.max(
            Math.abs(ae[i] - ours[i]),
            Math.abs(ae[i + 1] - ours[i + 1]),
            Math.abs(ae[i + 2] - ours[i + 2]),
          );
        const mean = sum / (ae.length / 3);
        worst = Math.max(worst, mean);
        figures.push(`${f} ${mean.toFixed(2)}`);
      }
      console.log(`# BlurOverlap mean largest channel difference per frame: ${figures.join(', ')}`);
      assert.ok(worst <= 4, `worst frame ${worst.toFixed(2)}`);
    });

    it('draws the same bytes for the same request (blurs included)', async () => {
      const png = async () => {
        const res = await t.api('POST', '/api/motion/projects/preview', {
          board_id: board,
          element_id: projectId,
          composition: 'Main',
          time: 2.01,
        });
        assert.equal(res.status, 200, res.text);
        return Buffer.from(await (await fetch(t.baseUrl + res.body.url)).arrayBuffer());
      };
      assert.ok((await png()).equals(await png()));
    });
  },
);
