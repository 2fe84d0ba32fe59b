import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { offsetPath, puckerBloat, roundCorners, twist, twistRadius, zigZag } from '../../src/motion/scene/geometry.js';
import type { BezierPath } from '../../src/motion/scene/model.js';
import { midpointCurve, paintStops, withMidpointStops } from '../../src/motion/scene/gradients.js';
import { MAX_REPEATED, repeaterCopies } from '../../src/motion/scene/repeater.js';
import { applyToPath } from '../../src/motion/scene/geometry.js';
import { decodeScene } from '../../src/motion/scene/decode.js';
import { evaluate } from '../../src/motion/scene/evaluate.js';
import type { DisplayGroup, DisplayNode, DisplayShape } from '../../src/motion/scene/display.js';
import { writeLottie } from '../../src/motion/lottie/write.js';
import { comp, group, layer, layerData, project, prop } from './scene-builder.js';

/** Shape layers' path operators on paths whose result After Effects' manual lets one compute by hand. */

const poly = (pts: [number, number][], closed = true): BezierPath => ({
  closed,
  v: pts,
  i: pts.map(() => [0, 0]),
  o: pts.map(() => [0, 0]),
});
// a 100 px square centred on 0,0, clockwise on screen (y down) from its top-left corner
const square = () =>
  poly([
    [-50, -50],
    [50, -50],
    [50, 50],
    [-50, 50],
  ]);
const near = (a: number[], b: number[], eps = 1e-6) =>
  assert.ok(
    a.every((v, k) => Math.abs(v - b[k]) <= eps),
    `${JSON.stringify(a)} is not ${JSON.stringify(b)}`,
  );

describe('shape path operators', () => {
  it('pucker & bloat: corners move the amount towards the centre, tangent ends as far away', () => {
    const b = puckerBloat(square(), 50);
    near(b.v[0], [-25, -25]);
    // the tangent's end (at the old corner) moves 50 % away from the centre: -75, -75, relative to the new vertex
    near(b.o[0], [-50, -50]);
    const p = puckerBloat(square(), -50);
    near(p.v[1], [75, -75]);
    near(p.i[1], [-50, 50]);
  });

  it('round corners: each sharp corner cut at the radius along both sides (at most half a side)', () => {
    const r = roundCorners(square(), 10);
    assert.equal(r.v.length, 8);
    near(r.v[0], [-50, -40]);
    near(r.v[1], [-40, -50]);
    // the tangents reach 55.19 % of the way to the old corner
    near(r.o[0], [0, -10 * 0.5519]);
    near(r.i[1], [-10 * 0.5519, 0]);
    const big = roundCorners(square(), 80);
    near(big.v[0], [-50, 0]);
    // a curved vertex is kept as it is
    const curved = square();
    curved.o[0] = [10, 0];
    assert.deepEqual(roundCorners(curved, 10).v[0], [-50, -50]);
  });

  it('zig zag: ridges spread on each segment, alternately pushed the size to either side', () => {
    const z = zigZag(
      poly(
        [
          [0, 0],
          [60, 0],
        ],
        false,
      ),
      5,
      2,
      false,
    );
    assert.equal(z.v.length, 4);
    // the first point to the right of the direction of travel (y down)
    near(z.v[0], [0, 5], 0.05);
    near(z.v[1], [20, -5], 0.05);
    near(z.v[2], [40, 5], 0.05);
    near(z.v[3], [60, -5], 0.05);
    const smooth = zigZag(
      poly(
        [
          [0, 0],
          [60, 0],
        ],
        false,
      ),
      5,
      2,
      true,
    );
    // smooth points: tangents along the path, half the spacing long
    near(smooth.o[1], [7.5, 0], 0.05);
  });

  it('offset paths: outwards and inwards, miter, bevel and round joins, the miter limit, open paths', () => {
    const out = offsetPath(square(), 10, 'miter', 4);
    assert.equal(out.v.length, 4);
    near(out.v[0], [-60, -60]);
    near(out.v[2], [60, 60]);
    const inward = offsetPath(square(), -10, 'miter', 4);
    near(inward.v[0], [-40, -40]);
    const bevel = offsetPath(square(), 10, 'bevel', 4);
    assert.equal(bevel.v.length, 8);
    near(bevel.v[0], [-60, -50]);
    near(bevel.v[1], [-50, -60]);
    // a square's miter is sqrt(2) x the amount: a limit of 1.2 bevels it
    assert.equal(offsetPath(square(), 10, 'miter', 1.2).v.length, 8);
    const round = offsetPath(square(), 10, 'round', 4);
    // every point of a rounded corner is 10 px from the corner
    for (const q of round.v.filter((q) => q[0] < -50 && q[1] < -50)) near([Math.hypot(q[0] + 50, q[1] + 50)], [10]);
    // an open line becomes the 20 px band around it, square ends
    const band = offsetPath(
      poly(
        [
          [0, 0],
          [100, 0],
        ],
        false,
      ),
      10,
      'miter',
      4,
    );
    assert.equal(band.closed, true);
    const ys = band.v.map((q) => q[1]);
    near([Math.min(...ys), Math.max(...ys)], [-10, 10]);
    const xs = band.v.map((q) => q[0]);
    near([Math.min(...xs), Math.max(...xs)], [0, 100]);
  });
});

describe('twist', () => {
  // a point on the path at parameter t of segment k (cubic)
  const at = (p: BezierPath, k: number, t: number): [number, number] => {
    const n = p.v.length;
    const a = p.v[k];
    const b = p.v[(k + 1) % n];
    const c1 = [a[0] + p.o[k][0], a[1] + p.o[k][1]];
    const c2 = [b[0] + p.i[(k + 1) % n][0], b[1] + p.i[(k + 1) % n][1]];
    const u = 1 - t;
    const f = (d: number) => u * u * u * a[d] + 3 * u * u * t * c1[d] + 3 * u * t * t * c2[d] + t * t * t * b[d];
    return [f(0), f(1)];
  };
  const angleOf = (q: number[]) => (Math.atan2(q[1], q[0]) * 180) / Math.PI;
  const turned = (from: number[], to: number[]) => ((angleOf(to) - angleOf(from) + 540) % 360) - 180;

  it('turns clockwise (positive angle, y down) more near the centre than at the edge; the centre stays', () => {
    // a square of side 100 about 0,0 with a vertex at its centre-right edge midpoint and one at the centre itself
    const p = poly([
      [-50, -50],
      [50, -50],
      [50, 0],
      [0, 0],
      [50, 0.0001],
      [50, 50],
      [-50, 50],
    ]);
    const r = twistRadius([p], [0, 0]);
    assert.ok(Math.abs(r - Math.hypot(50, 50)) < 1e-9);
    const t = twist(p, 90, [0, 0], r);
    // the centre does not move
    const centre = t.v.find((q) => Math.hypot(q[0], q[1]) < 1e-9);
    assert.ok(centre, 'the vertex at the centre is kept there');
    // the corners, the farthest points, do not turn; the edge midpoint (50, 0) turns by 90 x (1 - 50 / 70.71)
    near(t.v[0], [-50, -50], 1e-9);
    const mid = t.v.find((q) => Math.abs(Math.hypot(q[0], q[1]) - 50) < 1e-9 && q[1] > 0)!;
    assert.ok(Math.abs(turned([50, 0], mid) - 90 * (1 - 50 / r)) < 1e-6, `${turned([50, 0], mid)}`);
    // clockwise on screen: a point right of the centre moves down (y grows)
    assert.ok(mid[1] > 0);
  });

  it('bends a straight side: points along it turn by the angle at their own distance', () => {
    const p = square();
    const r = twistRadius([p], [0, 0]);
    const t = twist(p, 120, [0, 0], r);
    assert.ok(t.v.length > 4, 'the sides are cut in pieces');
    // every point along the twisted outline sits where the twist takes some point of the original side, within 0.05 px:
    // sample the original top side, twist each sample by hand, and find it on the result
    const expected = (x: number): [number, number] => {
      const d = Math.hypot(x, -50);
      const th = ((120 * Math.PI) / 180) * (1 - d / r);
      return [x * Math.cos(th) + 50 * Math.sin(th), x * Math.sin(th) - 50 * Math.cos(th)];
    };
    const samples: [number, number][] = [];
    for (let k = 0; k < t.v.length; k++) for (let j = 0; j <= 100; j++) samples.push(at(t, k, j / 100));
    for (let x = -50; x <= 50; x += 5) {
      const e = expected(x);
      const best = Math.min(...samples.map((q) => Math.hypot(q[0] - e[0], q[1] - e[1])));
      assert.ok(best < 0.05, `x ${x}: ${best} px off`);
    }
    // every vertex of the result, turned back by the angle at its distance, lies on the square's outline
    for (const q of t.v) {
      const th = ((-120 * Math.PI) / 180) * (1 - Math.hypot(q[0], q[1]) / r);
      const o = [q[0] * Math.cos(th) - q[1] * Math.sin(th), q[0] * Math.sin(th) + q[1] * Math.cos(th)];
      assert.ok(Math.abs(Math.max(Math.abs(o[0]), Math.abs(o[1])) - 50) < 1e-9, `${q} back to ${o}`);
    }
  });

  it('zero angle changes nothing; a negative angle turns the other way', () => {
    assert.deepEqual(twist(square(), 0, [0, 0], 70), square());
    const p = poly([
      [0, 0],
      [50, 0],
      [0, 100],
    ]);
    const r = twistRadius([p], [0, 0]);
    const ccw = twist(p, -60, [0, 0], r).v.find((q) => Math.abs(Math.hypot(q[0], q[1]) - 50) < 1e-6)!;
    assert.ok(ccw[1] < 0, 'counter-clockwise: right of the centre moves up');
    assert.ok(Math.abs(turned([50, 0], ccw) + 60 * 0.5) < 1e-6);
  });

  it('in a shape layer: about its centre in the group, every shape above it, listed; written as tw', () => {
    const s = shapeScene([
      ['ADBE Vector Shape - Rect', group([['ADBE Vector Rect Size', prop({ value: [100, 100] })]])],
      [
        'ADBE Vector Filter - Twist',
        group([
          ['ADBE Vector Twist Angle', prop({ value: [90] })],
          ['ADBE Vector Twist Center', prop({ value: [50, 0] })],
        ]),
      ],
      ['ADBE Vector Graphic - Fill', group([])],
    ]);
    const list = evaluate(s, 1, 0);
    const fill = (list.root.children[0] as DisplayGroup).children[0] as DisplayShape;
    const path = fill.paths[0];
    // the centre (50, 0) is the middle of the right side: the outline still passes through it
    const pass = path.v.some((_, k) =>
      Array.from({ length: 101 }, (__, j) => at(path, k, j / 100)).some((q) => Math.hypot(q[0] - 50, q[1]) < 0.05),
    );
    assert.ok(pass, 'the outline passes through the centre');
    // the farthest points from it, the left corners at 111.8 px, stay
    assert.ok(path.v.some((q) => Math.hypot(q[0] + 50, q[1] + 50) < 1e-6));
    assert.ok(path.v.length > 4);
    assert.match(JSON.stringify(list.approximations), /twist .*: the angle falls off linearly/);
    const out = writeLottie(s, 1, { expressions: 'keep', images: new Map() });
    const tw = (out.lottie.layers as { shapes: Record<string, { k: unknown }>[] }[])[0].shapes[1];
    assert.equal(tw.ty as unknown, 'tw');
    assert.deepEqual([tw.a.k, tw.c.k], [90, [50, 0]]);
  });
});

describe('gradients as After Effects mixes them', () => {
  it('a midpoint m mixes half and half at m, straight at 0.5, flat towards the far stop', () => {
    for (const m of [0.2, 0.5, 0.6007, 0.9]) near([midpointCurve(m)(m)], [0.5], 1e-9);
    near([midpointCurve(0.5)(0.3)], [0.3]);
    // under 0.5: 1 - (1 - f)^(ln 0.5 / ln 0.8), ~3.106 (After Effects' render of gradient-linear-midpoint: 0.933 at 0.58)
    near([midpointCurve(0.2)(0.58)], [1 - Math.pow(0.42, Math.log(0.5) / Math.log(0.8))]);
    near([midpointCurve(0.2)(0.58)], [0.932], 1e-3);
    // over 0.5: f^(ln 0.5 / ln m)
    near([midpointCurve(0.8)(0.42)], [Math.pow(0.42, Math.log(0.5) / Math.log(0.8))]);
  });

  it('canvas stops: colour and opacity stops merged, a curved stretch cut into straight pieces', () => {
    const stops = paintStops({
      colors: [
        [0, 1, 0, 0],
        [1, 0, 0, 1],
      ],
      opacities: [
        [0, 1],
        [0.5, 0.5],
        [1, 1],
      ],
    });
    assert.deepEqual(
      stops.map((s) => s.offset),
      [0, 0.5, 1],
    );
    near(stops[1].color, [0.5, 0, 0.5, 0.5]);
    const curved = paintStops({
      colors: [
        [0, 1, 0, 0],
        [1, 0, 0, 1],
      ],
      opacities: [],
      colorMidpoints: [0.2, 0.5],
    });
    assert.equal(curved.length, 33);
    near(curved[16].color, [1 - midpointCurve(0.2)(0.5), 0, midpointCurve(0.2)(0.5), 1]);
  });

  it('Lottie stops: one at every midpoint holding the average, as bodymovin writes them', () => {
    const s = withMidpointStops({
      colors: [
        [0, 1, 0, 0],
        [0.69, 0, 0.047058616, 1],
        [1, 0, 0, 0],
      ],
      opacities: [
        [0, 1],
        [1, 0],
      ],
      colorMidpoints: [0.19927536, 0.5, 0.5],
      opacityMidpoints: [0.25, 0.5],
    });
    // bodymovin's export of ae-renders' gradient-linear-midpoint: 0.137 (0.69 x 0.199), 0.845
    near(s.colors[1], [0.69 * 0.199, 0.5, 0.023529308, 0.5]);
    near(s.colors[3], [0.845, 0, 0.023529308, 0.5]);
    assert.equal(s.colors.length, 5);
    assert.deepEqual(s.opacities, [
      [0, 1],
      [0.25, 0.5],
      [1, 0],
    ]);
  });
});

/** A 200x100 composition with one shape layer holding these root contents. */
const shapeScene = (items: [string, Buffer][]) =>
  decodeScene(
    project(
      comp({
        id: 1,
        name: 'Main',
        width: 200,
        height: 100,
        fps: 25,
        duration: 1,
        layers: [
          layer(layerData({ id: 1, type: 4, flags39: 1, duration: 1 }), 'shapes', [
            ['ADBE Root Vectors Group', group(items)],
          ]),
        ],
      }),
    ),
  );

describe('repeater', () => {
  const point = (m: number[], x: number, y: number) => applyToPath(m as never, poly([[x, y]], false)).v[0];
  const values = { copies: 3, offset: 0, anchor: [10, 0], position: [100, 0], scale: [50, 50], rotation: 90 };

  it('copy k: scaled by scale^k and turned k times about the anchor, moved k times the position; opacity start to end', () => {
    const c = repeaterCopies({ ...values, startOpacity: 100, endOpacity: 40 });
    assert.equal(c.length, 3);
    near(point(c[0].matrix, 20, 0), [20, 0]);
    // (20, 0) is 10 px right of the anchor: halved, turned 90° (clockwise on screen), the anchor moved 100 px
    near(point(c[1].matrix, 20, 0), [110, 5]);
    near(point(c[2].matrix, 20, 0), [207.5, 0]);
    near(
      c.map((x) => x.opacity),
      [1, 0.7, 0.4],
    );
  });

  it('offset: whole steps, a fractional step mixing 100 % with the scale, negative steps undone; copies rounded up', () => {
    const half = repeaterCopies({ ...values, copies: 1.2, offset: 0.5, rotation: 0, startOpacity: 100, endOpacity: 0 });
    assert.equal(half.length, 2);
    // n = 0.5: scale 1 + (0.5 - 1) x 0.5 = 0.75, position 50 px
    near(point(half[0].matrix, 20, 0), [60 + 7.5, 0]);
    near([half[0].opacity, half[1].opacity], [1, 0]);
    const back = repeaterCopies({ ...values, copies: 1, offset: -1, rotation: 0, startOpacity: 100, endOpacity: 100 });
    // n = -1: scale 2, moved -100 px
    near(point(back[0].matrix, 20, 0), [-90 + 20, 0]);
    assert.equal(repeaterCopies({ ...values, copies: 0, startOpacity: 100, endOpacity: 100 }).length, 0);
  });

  it('copies what is above it in its group, below or above each other; a paint further down paints every copy', () => {
    const shapes = (order: number) =>
      shapeScene([
        ['ADBE Vector Shape - Rect', group([['ADBE Vector Rect Size', prop({ value: [10, 10] })]])],
        ['ADBE Vector Graphic - Fill', group([])],
        [
          'ADBE Vector Filter - Repeater',
          group([
            ['ADBE Vector Repeater Copies', prop({ value: [4] })],
            ['ADBE Vector Repeater Order', prop({ value: [order] })],
            [
              'ADBE Vector Repeater Transform',
              group([
                ['ADBE Vector Repeater Position', prop({ value: [30, 0] })],
                ['ADBE Vector Repeater Opacity 2', prop({ value: [25] })],
              ]),
            ],
          ]),
        ],
        ['ADBE Vector Graphic - Stroke', group([])],
      ]);
    for (const order of [1, 2]) {
      const root = (evaluate(shapes(order), 1, 0).root.children[0] as DisplayGroup).children;
      // bottom first: the stroke (below the repeater), then the four copies of the fill
      const [stroke, ...copies] = root as [DisplayShape, ...DisplayGroup[]];
      assert.ok(stroke.stroke);
      assert.equal(stroke.paths.length, 4);
      near(
        stroke.paths.map((p) => p.v[0][0]),
        [5, 35, 65, 95],
      );
      // "below" (1): the first copy on top, drawn last; "above" (2): the last copy on top
      const xs = copies.map((g) => g.matrix[4]);
      near(xs, order === 1 ? [90, 60, 30, 0] : [0, 30, 60, 90]);
      near(
        copies.map((g) => g.opacity),
        order === 1 ? [0.25, 0.5, 0.75, 1] : [1, 0.75, 0.5, 0.25],
      );
      assert.ok(copies.every((g) => (g.children[0] as DisplayShape).fill && g.children.length === 1));
    }
  });
});

describe('repeater limits', () => {
  it('nested repeaters of 1000 copies each: cut to the limit, listed', () => {
    const repeater: [string, Buffer] = [
      'ADBE Vector Filter - Repeater',
      group([['ADBE Vector Repeater Copies', prop({ value: [1000] })]]),
    ];
    const s = shapeScene([
      [
        'ADBE Vector Group',
        group([
          [
            'ADBE Vectors Group',
            group([
              ['ADBE Vector Shape - Rect', group([['ADBE Vector Rect Size', prop({ value: [10, 10] })]])],
              ['ADBE Vector Graphic - Fill', group([])],
              repeater,
            ]),
          ],
        ]),
      ],
      repeater,
    ]);
    const list = evaluate(s, 1, 0);
    const count = (n: DisplayNode): number =>
      1 + (n.kind === 'group' ? n.children.reduce((a, c) => a + count(c), 0) : 0);
    const nodes = count(list.root);
    assert.ok(nodes > 5000 && nodes <= MAX_REPEATED + 10, `${nodes} nodes`);
    assert.match(JSON.stringify(list.approximations), /of 1000 copies drawn/);
  });
});

describe('merge paths', () => {
  const scene = (mode: number) =>
    shapeScene([
      [
        'ADBE Vector Group',
        group([
          [
            'ADBE Vectors Group',
            group([['ADBE Vector Shape - Rect', group([['ADBE Vector Rect Size', prop({ value: [10, 10] })]])]]),
          ],
          ['ADBE Vector Transform Group', group([['ADBE Vector Position', prop({ value: [50, 0] })]])],
        ]),
      ],
      ['ADBE Vector Shape - Ellipse', group([['ADBE Vector Ellipse Size', prop({ value: [20, 20] })]])],
      ['ADBE Vector Graphic - Stroke', group([])],
      ['ADBE Vector Filter - Merge', group([['ADBE Vector Merge Type', prop({ value: [mode] })]])],
      ['ADBE Vector Graphic - Fill', group([])],
    ]);

  it('makes the shapes above it one, in the group’s coordinates, each an operand; the paints above draw nothing', () => {
    for (const [type, mode] of [
      [1, undefined],
      [2, 'add'],
      [3, 'subtract'],
      [4, 'intersect'],
      [5, 'exclude'],
    ] as const) {
      const [fill, stroke] = (evaluate(scene(type), 1, 0).root.children[0] as DisplayGroup).children as DisplayShape[];
      assert.ok(fill.fill && stroke.stroke);
      assert.equal(stroke.paths.length, 0);
      assert.equal(fill.paths.length, 2);
      // the rectangle's group moved it 50 px: its first vertex (top right) at 55, -5
      near(fill.paths[0].v[0], [55, -5]);
      assert.deepEqual(fill.merge, mode && { mode, operands: [1, 1] });
    }
  });
});

describe('Lottie export of the shape operators', () => {
  it('writes the repeater as rp and merge paths as mm, with After Effects’ numbering', () => {
    const s = shapeScene([
      ['ADBE Vector Shape - Rect', group([['ADBE Vector Rect Size', prop({ value: [10, 10] })]])],
      ['ADBE Vector Filter - Merge', group([['ADBE Vector Merge Type', prop({ value: [3] })]])],
      [
        'ADBE Vector Filter - Repeater',
        group([
          ['ADBE Vector Repeater Copies', prop({ value: [4] })],
          ['ADBE Vector Repeater Order', prop({ value: [2] })],
          ['ADBE Vector Repeater Transform', group([['ADBE Vector Repeater Opacity 2', prop({ value: [25] })]])],
        ]),
      ],
      ['ADBE Vector Graphic - Fill', group([])],
    ]);
    const out = writeLottie(s, 1, { expressions: 'keep', images: new Map() });
    const shapes = (out.lottie.layers as { shapes: Record<string, unknown>[] }[])[0].shapes;
    const [mm, rp] = [shapes[1], shapes[2]] as Record<string, never>[];
    assert.equal(mm.ty, 'mm');
    assert.equal(mm.mm, 3);
    assert.equal(rp.ty, 'rp');
    assert.equal(rp.m, 2);
    assert.deepEqual(rp.c, { a: 0, k: 4, ix: 1 });
    const tr = rp.tr as Record<string, { k: unknown }>;
    assert.deepEqual([tr.p.k, tr.s.k, tr.so.k, tr.eo.k], [[100, 0], [100, 100], 100, 25]);
    assert.match(JSON.stringify(out.approximations), /lottie-web does not draw it/);
  });
});
