import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeScene } from '../../src/motion/scene/decode.js';
import type { DisplayGroup, DisplayNode, DisplayShape, DisplayText } from '../../src/motion/scene/display.js';
import { evaluate } from '../../src/motion/scene/evaluate.js';
import { createExpressionEvaluator } from '../../src/motion/scene/expressions.js';
import type { Layer, NumProperty, SceneProject } from '../../src/motion/scene/model.js';
import { sampleNum } from '../../src/motion/scene/sample.js';
import { list, tdgp, textDocument } from './rifx-writer.js';
import {
  comp,
  group,
  layer,
  layerData,
  masks,
  pathProp,
  project,
  prop,
  solidItem,
  assertPlainJson,
  keyedTextDocument,
  type KeySpec,
} from './scene-builder.js';

const FPS = 25;
const near = (actual: number, expected: number, eps = 1e-6, what = '') =>
  assert.ok(Math.abs(actual - expected) <= eps, `${what} ${actual} is not ${expected} (±${eps})`);
const nearAll = (actual: number[], expected: number[], eps = 1e-6) =>
  expected.forEach((e, k) => near(actual[k], e, eps, `[${k}]`));

/** A one-composition project (320x180, 25 fps, 4 s, item 1) with the given layers; solid item 50 (100x50, red). */
function oneComp(...layers: Buffer[]): SceneProject {
  return decodeScene(
    project(
      comp({ id: 1, name: 'Main', width: 320, height: 180, fps: FPS, duration: 4, layers }),
      solidItem(50, 'Red Solid', 100, 50, [1, 0, 0]),
    ),
  );
}

const solidLayer = (
  id: number,
  name: string,
  transform: [string, Buffer][],
  extra: [string, Buffer][] = [],
  data = {},
) =>
  layer(layerData({ id, source: 50, flags39: 1, duration: 4, ...data }), name, [
    ['ADBE Transform Group', group(transform)],
    ...extra,
  ]);

/** A shape layer with these root contents. */
const shapeLayer = (id: number, name: string, items: [string, Buffer][]) =>
  layer(layerData({ id, type: 4, flags39: 1, duration: 4 }), name, [['ADBE Root Vectors Group', group(items)]]);

const layerOf = (s: SceneProject, name: string): Layer => s.compositions[0].layers.find((l) => l.name === name)!;

describe('scene model: keyframes decoded and sampled as After Effects interpolates them', () => {
  const keys = (k: KeySpec[], kind?: 'dims' | 'spatial' | 'color') => prop({ keys: k, fps: FPS, kind });
  const s = oneComp(
    solidLayer(1, 'linear', [
      [
        'ADBE Opacity',
        keys([
          { t: 0, v: [0] },
          { t: 2, v: [1] },
        ]),
      ],
    ]),
    solidLayer(2, 'hold', [
      [
        'ADBE Rotate Z',
        keys([
          { t: 0, v: [100], out: 'hold' },
          { t: 1, v: [300], in: 'hold', out: 'hold' },
        ]),
      ],
    ]),
    // Easy Ease: speed 0, influence 1/3 on both sides
    solidLayer(3, 'easy', [
      [
        'ADBE Rotate Z',
        keys([
          { t: 0, v: [0], out: 'bezier', outEase: [[0, 1 / 3]] },
          { t: 2, v: [90], in: 'bezier', inEase: [[0, 1 / 3]] },
        ]),
      ],
    ]),
    // leaves at 300°/s over half the segment, arrives at rest over the other half: it overshoots
    solidLayer(4, 'speed', [
      [
        'ADBE Rotate Z',
        keys([
          { t: 0, v: [0], out: 'bezier', outEase: [[300, 0.5]] },
          { t: 1, v: [100], in: 'bezier', inEase: [[0, 0.5]] },
        ]),
      ],
    ]),
    // per-dimension eases: x eased, y linear (speed = its average: 1 a second in the file's fractions, 100 %/s)
    solidLayer(5, 'dims', [
      [
        'ADBE Scale',
        keys([
          {
            t: 0,
            v: [1, 1],
            out: 'bezier',
            outEase: [
              [0, 1 / 3],
              [1, 1 / 3],
            ],
          },
          {
            t: 1,
            v: [2, 2],
            in: 'bezier',
            inEase: [
              [0, 1 / 3],
              [1, 1 / 3],
            ],
          },
        ]),
      ],
    ]),
    // a curved motion path (tangents in the file), linear in time
    solidLayer(6, 'curve', [
      [
        'ADBE Position',
        keys(
          [
            { t: 0, v: [0, 0], outTangent: [55.2, 0] },
            { t: 2, v: [100, 100], inTangent: [0, -55.2] },
          ],
          'spatial',
        ),
      ],
    ]),
    // a straight motion path with Easy Ease: progress by distance along the line
    solidLayer(7, 'straight eased', [
      [
        'ADBE Position',
        keys(
          [
            { t: 0, v: [0, 0, 0], out: 'bezier', outEase: [[0, 1 / 3]] },
            { t: 2, v: [300, 400, 0], in: 'bezier', inEase: [[0, 1 / 3]] },
          ],
          'spatial',
        ),
      ],
    ]),
    // temporal auto-bezier keys saved without their eases
    solidLayer(9, 'auto', [
      [
        'ADBE Rotate Z',
        keys([
          { t: 0, v: [0], in: 'bezier', out: 'bezier', auto: true, inEase: [[0, 0]], outEase: [[0, 0]] },
          { t: 1, v: [100], in: 'bezier', out: 'bezier', auto: true, inEase: [[0, 0]], outEase: [[0, 0]] },
          { t: 2, v: [0], in: 'bezier', out: 'bezier', auto: true, inEase: [[0, 0]], outEase: [[0, 0]] },
        ]),
      ],
    ]),
    // a stretched layer starting at 1 s: its keys are in layer time
    solidLayer(
      8,
      'stretched',
      [
        [
          'ADBE Opacity',
          keys([
            { t: 0, v: [0] },
            { t: 1, v: [1] },
          ]),
        ],
      ],
      [],
      { startMs: 1000, stretch: 2 },
    ),
  );
  const at = (name: string, key: 'opacity' | 'rotation' | 'scale' | 'position', t: number) =>
    sampleNum(layerOf(s, name).transform[key] as NumProperty, t);

  it('reads key times, values in shown units (percent), eases and spatial tangents', () => {
    const op = layerOf(s, 'linear').transform.opacity;
    assert.deepEqual(
      op.keyframes!.map((k) => [k.time, k.value]),
      [
        [0, [0]],
        [2, [100]],
      ],
    );
    const sp = layerOf(s, 'speed').transform.rotation.keyframes!;
    assert.deepEqual(sp[0].outEase, [{ speed: 300, influence: 0.5 }]);
    assert.equal(sp[0].outInterpolation, 'bezier');
    const pos = layerOf(s, 'curve').transform.position!;
    assert.equal(pos.spatial, true);
    assert.deepEqual(pos.keyframes![0].outTangent, [55.2, 0]);
    assert.deepEqual(pos.keyframes![1].inTangent, [0, -55.2]);
  });

  it('linear: a straight blend, exact at the keys', () => {
    assert.deepEqual(at('linear', 'opacity', 0), [0]);
    assert.deepEqual(at('linear', 'opacity', 2), [100]);
    near(at('linear', 'opacity', 0.5)[0], 25);
    near(at('linear', 'opacity', 1.5)[0], 75);
    assert.deepEqual(at('linear', 'opacity', 3), [100], 'after the last key');
  });

  it('hold: the left value until the next key', () => {
    assert.deepEqual(at('hold', 'rotation', 0.999), [100]);
    assert.deepEqual(at('hold', 'rotation', 1), [300]);
    assert.deepEqual(at('hold', 'rotation', 3), [300]);
  });

  it('Easy Ease: x(s) = s, value = smoothstep 3s² - 2s³', () => {
    near(at('easy', 'rotation', 0.5)[0], 90 * (3 * 0.25 ** 2 - 2 * 0.25 ** 3)); // 14.0625
    near(at('easy', 'rotation', 1)[0], 45);
    near(at('easy', 'rotation', 1.5)[0], 90 * (3 * 0.75 ** 2 - 2 * 0.75 ** 3));
  });

  it('speed and influence: the (time, value) bezier, overshoot included', () => {
    // handles: (0.5 s, 300 x 0.5 = 150) and (0.5 s, 100); at s = 0.5, x = 1.5s(1-s) + s³ = 0.5
    const y = 3 * 0.25 * 0.5 * 150 + 3 * 0.5 * 0.25 * 100 + 0.125 * 100; // 106.25
    near(at('speed', 'rotation', 0.5)[0], y, 1e-9);
    assert.deepEqual(at('speed', 'rotation', 1), [100]);
  });

  it('per-dimension eases are applied dimension by dimension', () => {
    const v = at('dims', 'scale', 0.25);
    near(v[0], 100 + 100 * (3 * 0.25 ** 2 - 2 * 0.25 ** 3));
    near(v[1], 125); // speed 100 %/s over a 100 % change in 1 s: a straight line
  });

  it('spatial bezier: the point at the right share of the path length', () => {
    // a symmetric curve: half its length is at the bezier's s = 0.5
    const half = at('curve', 'position', 1);
    nearAll(half, [0.375 * 55.2 + 0.375 * 100 + 12.5, 0.375 * 44.8 + 12.5], 0.05);
    assert.deepEqual(at('curve', 'position', 2), [100, 100]);
    const eased = at('straight eased', 'position', 0.5);
    const f = 3 * 0.25 ** 2 - 2 * 0.25 ** 3;
    nearAll(eased, [300 * f, 400 * f, 0]);
  });

  it('auto-bezier keys without eases get the slope through their neighbours and influence 1/6', () => {
    // first key: out speed 100/s (towards its one neighbour); the peak: speed 0; at s = 0.5, x = 0.5 and
    // y = 3(.25)(.5)(100/6) + 3(.5)(.25)(100) + 100/8
    near(at('auto', 'rotation', 0.5)[0], 56.25, 1e-9);
    assert.deepEqual(at('auto', 'rotation', 1), [100]);
    near(at('auto', 'rotation', 1.5)[0], 56.25, 1e-9);
  });

  it('keys before the layer start, in both encodings of a negative time', () => {
    for (const shortTimes of [false, true]) {
      const s2 = oneComp(
        solidLayer(1, 'early', [
          [
            'ADBE Opacity',
            prop({
              keys: [
                { t: -1, v: [0] },
                { t: 1, v: [1] },
              ],
              fps: FPS,
              shortTimes,
            }),
          ],
        ]),
      );
      const op = s2.compositions[0].layers[0].transform.opacity;
      assert.deepEqual(
        op.keyframes!.map((k) => k.time),
        [-1, 1],
      );
      near(sampleNum(op, 0)[0], 50, 1e-9);
    }
  });

  it('a stretched layer: keys in layer time, in and out points in composition time', () => {
    const l = layerOf(s, 'stretched');
    assert.equal(l.stretch, 2);
    assert.equal(l.startTime, 1);
    assert.equal(l.outPoint, 1 + 4 * 2);
    const list = evaluate(s, 1, 2);
    const g = list.root.children.find((c) => c.kind === 'group' && c.layer === 'stretched') as DisplayGroup;
    near(g.opacity, 0.5, 1e-9); // comp 2 s = layer time 0.5 s
  });
});

describe('scene model: display lists', () => {
  const transform = (pos: number[], extra: [string, Buffer][] = []): [string, Buffer][] => [
    ['ADBE Anchor Point', prop({ value: [10, 10, 0] })],
    ['ADBE Position', prop({ value: pos })],
    ...extra,
  ];
  const s = oneComp(
    solidLayer(1, 'matte', transform([0, 0, 0]), [], { flags39: 0 }),
    solidLayer(
      2,
      'child',
      transform(
        [100, 50, 0],
        [
          ['ADBE Scale', prop({ value: [2, 2, 1] })],
          ['ADBE Rotate Z', prop({ value: [90] })],
        ],
      ),
      [
        [
          'ADBE Mask Parade',
          masks(
            [
              {
                path: {
                  v: [
                    [0, 0],
                    [50, 0],
                    [50, 25],
                  ],
                },
                mode: 2,
                inverted: true,
                opacity: 0.5,
              },
            ],
            [100, 50],
          ),
        ],
      ],
      { parent: 3, matte: 1 },
    ),
    solidLayer(
      3,
      'parent',
      [['ADBE Position', prop({ value: [20, 30, 0], expression: 'wiggle(2, 5)' })]],
      [['ADBE Effect Parade', tdgp(['ADBE CurvesCustom', list('sspc', group([]))])]],
    ),
    layer(layerData({ id: 4, type: 3, flags39: 1, duration: 4 }), 'title', [
      ['ADBE Text Properties', tdgp(['ADBE Text Document', textDocument('Hello\r', 'Arial-BoldMT')])],
    ]),
    shapeLayer(5, 'shapes', [
      [
        'ADBE Vector Group',
        group(
          [
            [
              'ADBE Vectors Group',
              group([
                ['ADBE Vector Shape - Rect', group([['ADBE Vector Rect Size', prop({ value: [100, 50] })]])],
                ['ADBE Vector Filter - Trim', group([['ADBE Vector Trim End', prop({ value: [50] })]])],
                ['ADBE Vector Graphic - Stroke', group([['ADBE Vector Stroke Width', prop({ value: [4] })]])],
                [
                  'ADBE Vector Graphic - Fill',
                  group([['ADBE Vector Fill Color', prop({ value: [0, 0, 1, 1], kind: 'color' })]]),
                ],
                ['ADBE Vector Filter - Roughen', group([])],
              ]),
            ],
            ['ADBE Vector Transform Group', group([['ADBE Vector Position', prop({ value: [40, 0] })]])],
          ],
          { name: 'Box' },
        ),
      ],
    ]),
    layer(layerData({ id: 6, source: 50, flags38: 0x80, flags39: 1, duration: 4 }), 'null', []),
    layer(layerData({ id: 7, source: 50, flags39: 1, duration: 1 }), 'gone after 1 s', []),
  );
  const list0 = evaluate(s, 1, 1.5);
  const byName = (n: string) => list0.root.children.find((c) => c.kind === 'group' && c.layer === n) as DisplayGroup;

  it('draws layers bottom first, leaves out nulls, switched-off layers and layers past their out point', () => {
    assert.deepEqual(
      list0.root.children.map((c) => (c as DisplayGroup).layer),
      ['shapes', 'title', 'parent', 'child'],
    );
    assert.equal(list0.composition.width, 320);
    assertPlainJson(list0, 'display list');
  });

  it('matrices: position, rotation, scale, anchor, and the parent chain', () => {
    // parent: translate(20, 30) x translate(-50, -25) (its anchor defaults to the solid's centre);
    // child: translate(100, 50) rotate(90) scale(2) translate(-10, -10) = [0, 2, -2, 0, 120, 30], then the parent's
    assert.deepEqual(byName('parent').matrix, [1, 0, 0, 1, -30, 5]);
    const m = byName('child').matrix;
    nearAll(m, [0, 2, -2, 0, 120 - 30, 30 + 5], 1e-9);
  });

  it('masks in pixels, with mode, inversion and opacity; the track matte is the layer above', () => {
    const child = byName('child');
    assert.equal(child.masks!.length, 1);
    const mask = child.masks![0];
    assert.equal(mask.mode, 'subtract');
    assert.equal(mask.inverted, true);
    near(mask.opacity, 0.5);
    nearAll(mask.path.v.flat(), [0, 0, 50, 0, 50, 25], 1e-4);
    assert.equal(child.matte!.mode, 'alpha');
    assert.equal(child.matte!.node.layer, 'matte');
    assert.deepEqual(child.matte!.node.children[0], { kind: 'solid', width: 100, height: 50, color: [1, 0, 0, 1] });
  });

  it('text: the text document at this instant', () => {
    const t = byName('title').children[0] as DisplayText;
    assert.equal(t.kind, 'text');
    assert.equal(t.text, 'Hello');
    assert.equal(t.font, 'Arial-BoldMT');
  });

  it('shapes: group transform, the rectangle trimmed to half its length, stroke and fill in paint order', () => {
    const g = byName('shapes').children[0] as DisplayGroup;
    assert.deepEqual(g.matrix, [1, 0, 0, 1, 40, 0]);
    const [fill, stroke] = g.children as DisplayShape[];
    assert.deepEqual(fill.fill!.color, [0, 0, 1, 1]);
    assert.equal(stroke.stroke!.width, 4);
    // the rectangle starts at its top-right corner, clockwise: half of 300 px of perimeter
    const p = fill.paths[0];
    assert.equal(p.closed, false);
    nearAll(p.v[0], [50, -25]);
    nearAll(p.v[p.v.length - 1], [-50, 25], 1e-3);
  });

  it('lists what it does not draw: expressions, effects, unsupported shape operators', () => {
    const features = list0.approximations.map((a) => `${a.layer}:${a.feature}`);
    assert.ok(features.includes('parent:expression'), features.join());
    assert.ok(features.includes('parent:effect'), features.join());
    assert.ok(features.includes('shapes:shape-operator'), features.join());
    const expr = list0.approximations.find((a) => a.feature === 'expression')!;
    assert.match(expr.detail, /ADBE Position.*wiggle\(2, 5\)/);
  });
});

describe('scene model: precomps', () => {
  const opacityKeys = prop({
    keys: [
      { t: 0, v: [0] },
      { t: 2, v: [1] },
    ],
    fps: FPS,
  });
  const s = decodeScene(
    project(
      comp({
        id: 1,
        name: 'Outer',
        width: 320,
        height: 180,
        fps: FPS,
        duration: 4,
        layers: [layer(layerData({ id: 11, source: 2, flags39: 1, duration: 4, startMs: 1000 }), 'inner', [])],
      }),
      comp({
        id: 2,
        name: 'Inner',
        width: 200,
        height: 100,
        fps: FPS,
        duration: 4,
        layers: [
          solidLayer(21, 'fading', [['ADBE Opacity', opacityKeys]]),
          layer(layerData({ id: 22, source: 3, flags39: 1, duration: 4 }), 'loop', []),
        ],
      }),
      // a composition that holds the one holding it: drawn to the depth guard, never forever
      comp({
        id: 3,
        name: 'Loop',
        width: 10,
        height: 10,
        fps: FPS,
        duration: 4,
        layers: [layer(layerData({ id: 31, source: 2, flags39: 1, duration: 4 }), 'back', [])],
      }),
      solidItem(50, 'Red Solid', 100, 50, [1, 0, 0]),
    ),
  );

  it('nests with the layer time offset, clips to the precomp, and stops at a cycle', () => {
    const list = evaluate(s, 1, 2);
    const inner = list.root.children[0] as DisplayGroup;
    assert.equal(inner.layer, 'inner');
    assert.deepEqual(inner.clip, { width: 200, height: 100 });
    assert.deepEqual(inner.matrix, [1, 0, 0, 1, 160 - 100, 90 - 50], 'anchor at the precomp centre');
    const fading = inner.children.find((c) => (c as DisplayGroup).layer === 'fading') as DisplayGroup;
    near(fading.opacity, 0.5, 1e-9); // outer 2 s = inner 1 s (without the offset it would be 1)
    const depthNote = list.approximations.find((a) => a.feature === 'precomp-depth');
    assert.match(
      depthNote?.detail ?? '',
      /\(in precomposition "(Inner|Loop)"\)$/,
      'a nested layer names its composition',
    );
    const depth = (n: DisplayNode): number => (n.kind === 'group' ? 1 + Math.max(0, ...n.children.map(depth)) : 0);
    assert.ok(depth(list.root) < 40);
  });
});

describe('scene model: trim paths below what they trim', () => {
  it("trims the strokes above it, in its group and in the groups above, as After Effects' default order has it", () => {
    const rect = ['ADBE Vector Shape - Rect', group([['ADBE Vector Rect Size', prop({ value: [100, 50] })]])] as [
      string,
      Buffer,
    ];
    const stroke = ['ADBE Vector Graphic - Stroke', group([])] as [string, Buffer];
    const trim = ['ADBE Vector Filter - Trim', group([['ADBE Vector Trim End', prop({ value: [30] })]])] as [
      string,
      Buffer,
    ];
    const s = oneComp(
      shapeLayer(1, 'shapes', [
        [
          'ADBE Vector Group',
          group([
            ['ADBE Vectors Group', group([rect, stroke])],
            ['ADBE Vector Transform Group', group([['ADBE Vector Scale', prop({ value: [200, 100] })]])],
          ]),
        ],
        trim,
      ]),
    );
    const g = (evaluate(s, 1, 0).root.children[0] as DisplayGroup).children[0] as DisplayGroup;
    const p = (g.children[0] as DisplayShape).paths;
    // scaled to 200x50 in the layer, 30 % of its 500 px measured there: from the top-right corner down 50 and left
    // 100, so x = 0 (measured in the group's own 300 px it would end at x = 10)
    assert.equal(p.length, 1);
    nearAll(p[0].v[0], [50, -25], 1e-6);
    nearAll(p[0].v[p[0].v.length - 1], [0, 25], 0.05);
  });
});

describe('scene model: shape paint order', () => {
  it('a stroke composited "above previous in same group" is painted over the fill listed before it', () => {
    const shapes = (composite: number) =>
      oneComp(
        shapeLayer(1, 'shapes', [
          ['ADBE Vector Shape - Ellipse', group([])],
          ['ADBE Vector Graphic - Fill', group([])],
          [
            'ADBE Vector Graphic - Stroke',
            group([
              ['ADBE Vector Composite Order', prop({ value: [composite] })],
              ['ADBE Vector Stroke Dashes', group([['ADBE Vector Stroke Dash 1', group([])]])],
            ]),
          ],
        ]),
      );
    const paint = (composite: number) =>
      ((evaluate(shapes(composite), 1, 0).root.children[0] as DisplayGroup).children as DisplayShape[]).map((n) =>
        n.fill ? 'fill' : 'stroke',
      );
    assert.deepEqual(paint(1), ['stroke', 'fill']);
    assert.deepEqual(paint(2), ['fill', 'stroke']);
    const stroke = (evaluate(shapes(1), 1, 0).root.children[0] as DisplayGroup).children[0] as DisplayShape;
    assert.deepEqual(stroke.stroke!.dashes, [10, 10], 'a dash left at its default is 10');
  });
});

describe('scene model: expressions evaluated when an evaluator is given', () => {
  it('draws what the expressions give, reads other layers, and lists only the ones that failed', async () => {
    const ev = await createExpressionEvaluator();
    try {
      const s = oneComp(
        solidLayer(1, 'child', [
          ['ADBE Anchor Point', prop({ value: [0, 0, 0] })],
          ['ADBE Position', prop({ value: [10, 20, 0], expression: 'value + [time * 100, 0, 0]' })],
          [
            'ADBE Opacity',
            prop({ value: [1], expression: 'thisComp.layer("leader").transform.opacity / 2 + thisLayer.width - 100' }),
          ],
          ['ADBE Rotate Z', prop({ value: [5], expression: '$.evalFile("/etc/passwd")' })],
        ]),
        solidLayer(2, 'leader', [['ADBE Opacity', prop({ value: [0.8] })]]),
        solidLayer(3, 'wiggler', [['ADBE Position', prop({ value: [50, 50, 0], expression: 'wiggle(2, 10)' })]]),
      );
      const list = evaluate(s, 1, 0.5, { expressions: ev });
      const child = list.root.children.find((c) => (c as DisplayGroup).layer === 'child') as DisplayGroup;
      // rotation keeps its own 5°, position moved by the expression: translate(60, 20) rotate(5°)
      const r = (5 * Math.PI) / 180;
      nearAll(child.matrix, [Math.cos(r), Math.sin(r), -Math.sin(r), Math.cos(r), 60, 20], 1e-9);
      near(child.opacity, 0.4, 1e-9);
      const notes = list.approximations.filter((a) => a.feature === 'expression');
      assert.equal(notes.length, 2, JSON.stringify(notes));
      const detail = (property: string) => notes.find((n) => n.detail.includes(`>${property}:`))?.detail ?? '';
      assert.match(
        detail('ADBE Rotate Z'),
        /^ADBE Transform Group>ADBE Rotate Z: .+; its own value is drawn: \$\.evalFile/,
      );
      // wiggle() is drawn (the layer leaves its own position) but with the preview's own noise, and says so
      const wiggler = list.root.children.find((c) => (c as DisplayGroup).layer === 'wiggler') as DisplayGroup;
      assert.notDeepEqual(wiggler.matrix.slice(4), [50, 50]);
      assert.match(
        detail('ADBE Position'),
        /^ADBE Transform Group>ADBE Position: draws the preview's own seeded noise/,
      );
      // without an evaluator every expression is listed and the own values drawn
      const plain = evaluate(s, 1, 0.5);
      assert.equal(plain.approximations.filter((a) => a.feature === 'expression').length, 4);
      // an expression switched off is neither run nor listed: After Effects does not run it either
      const off = oneComp(
        solidLayer(1, 'off', [['ADBE Opacity', prop({ value: [0.5], expression: 'time * 0', expressionOff: true })]]),
      );
      assert.deepEqual(off.compositions[0].layers[0].expressions, []);
      const offList = evaluate(off, 1, 1, { expressions: ev });
      assert.equal((offList.root.children[0] as DisplayGroup).opacity, 0.5);
      assert.deepEqual(offList.approximations, []);
    } finally {
      ev.dispose();
    }
  });
});

describe('scene model: animated source text', () => {
  it('shows the document of the last key at or before the time', () => {
    const s = oneComp(
      layer(layerData({ id: 1, type: 3, flags39: 1, duration: 4 }), 'counter', [
        [
          'ADBE Text Properties',
          tdgp([
            'ADBE Text Document',
            keyedTextDocument(
              [
                { t: 0, text: 'One\r', size: 20 },
                { t: 1, text: 'Two (2)\rlines\r', size: 40, justify: 2 },
              ],
              'Helvetica',
              FPS,
            ),
          ]),
        ],
      ]),
    );
    const text = (t: number) => (evaluate(s, 1, t).root.children[0] as DisplayGroup).children[0] as DisplayText;
    assert.deepEqual([text(0.99).text, text(0.99).size, text(0.99).justification], ['One', 20, 'left']);
    assert.deepEqual([text(1).text, text(1).size, text(1).justification], ['Two (2)\nlines', 40, 'center']);
    assert.equal(text(1).font, 'Helvetica');
    near(text(1).leading, 48, 1e-9, 'auto leading');
  });
});

describe('scene model: auto-orient', () => {
  it('turns the layer to the direction of its motion path', () => {
    const s = oneComp(
      solidLayer(
        1,
        'oriented',
        [
          ['ADBE Anchor Point', prop({ value: [0, 0, 0] })],
          [
            'ADBE Position',
            prop({
              keys: [
                { t: 0, v: [0, 0] },
                { t: 2, v: [100, 100] },
              ],
              fps: FPS,
              kind: 'spatial',
            }),
          ],
        ],
        [],
        { flags38: 0x01 },
      ),
    );
    assert.equal(s.compositions[0].layers[0].autoOrient, true);
    const m = (evaluate(s, 1, 1).root.children[0] as DisplayGroup).matrix;
    nearAll(m, [Math.SQRT1_2, Math.SQRT1_2, -Math.SQRT1_2, Math.SQRT1_2, 50, 50], 1e-9);
  });
});

describe('scene model: track mattes in time', () => {
  it('a matte past its out point hides an alpha-matted layer and leaves an inverted one whole', () => {
    const s = oneComp(
      solidLayer(1, 'short matte', [], [], { flags39: 0, duration: 1 }),
      solidLayer(2, 'alpha', [], [], { matte: 1 }),
      solidLayer(3, 'short matte 2', [], [], { flags39: 0, duration: 1 }),
      solidLayer(4, 'inverted', [], [], { matte: 2 }),
    );
    const names = (t: number) =>
      evaluate(s, 1, t).root.children.map((c) => {
        const g = c as DisplayGroup;
        return `${g.layer}${g.matte ? `<${g.matte.node.layer}` : ''}`;
      });
    assert.deepEqual(names(0.5), ['inverted<short matte 2', 'alpha<short matte']);
    assert.deepEqual(names(1.5), ['inverted']);
  });
});

describe('scene model: the layer limit', () => {
  it('stops drawing past maxLayers, precomps counted, and says so', () => {
    const solids = Array.from({ length: 5 }, (_, k) => solidLayer(100 + k, `s${k}`, []));
    const precomps = Array.from({ length: 5 }, (_, k) =>
      layer(layerData({ id: 10 + k, source: 2, flags39: 1, duration: 4 }), `p${k}`, []),
    );
    const s = decodeScene(
      project(
        comp({ id: 1, name: 'Outer', width: 100, height: 100, fps: FPS, duration: 4, layers: precomps }),
        comp({ id: 2, name: 'Inner', width: 100, height: 100, fps: FPS, duration: 4, layers: solids }),
        solidItem(50, 'Red Solid', 100, 50, [1, 0, 0]),
      ),
    );
    const count = (n: DisplayNode): number =>
      n.kind === 'group' ? (n.layer ? 1 : 0) + n.children.reduce((a, c) => a + count(c), 0) : 0;
    assert.equal(count(evaluate(s, 1, 0).root), 30);
    const limited = evaluate(s, 1, 0, { maxLayers: 10 });
    assert.equal(count(limited.root), 10);
    assert.ok(limited.approximations.some((a) => a.feature === 'layer-limit'));
  });
});

// keep the shape-path writer exercised on its own: a keyed path morphs vertex by vertex
describe('scene model: animated paths', () => {
  it('a keyed shape path blends its vertices between keys', () => {
    const s = oneComp(
      shapeLayer(1, 'morph', [
        [
          'ADBE Vector Shape - Group',
          group([
            [
              'ADBE Vector Shape',
              pathProp(
                [
                  {
                    v: [
                      [0, 0],
                      [10, 0],
                      [10, 10],
                    ],
                  },
                  {
                    v: [
                      [0, 0],
                      [30, 0],
                      [30, 30],
                    ],
                  },
                ],
                {
                  keys: [
                    { t: 0, v: [] },
                    { t: 2, v: [] },
                  ],
                },
              ),
            ],
          ]),
        ],
        ['ADBE Vector Graphic - Fill', group([])],
      ]),
    );
    const shape = (evaluate(s, 1, 1).root.children[0] as DisplayGroup).children[0] as DisplayShape;
    nearAll(shape.paths[0].v.flat(), [0, 0, 20, 0, 20, 20], 1e-4);
    assert.deepEqual(shape.fill!.color, [1, 0, 0, 1], 'the default fill is red');
  });
});
