import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { decodeScene } from '../../src/motion/scene/decode.js';
import { evaluate } from '../../src/motion/scene/evaluate.js';
import { createExpressionEvaluator, type ExpressionEvaluator } from '../../src/motion/scene/expressions.js';
import type { DisplayGroup } from '../../src/motion/scene/display.js';
import type {
  Composition,
  Effect,
  EffectParam,
  Layer,
  NumProperty,
  SceneProject,
} from '../../src/motion/scene/model.js';
import { shutterSpan } from '../../src/motion/scene/motion-blur.js';

/**
 * Effects in the scene model (and motion blur's samples, at the end): parameters decoded from real projects (values, the project's shared definitions,
 * defaults), the display list's effects, expression controls drawing nothing and listing nothing, and effect
 * parameters read by expressions (`effect("Slider Control")("Slider")`, another layer's effect, expressions on
 * effect parameters).
 */
const FIXTURES = path.resolve('../shared/fixtures/after-effects');
const have = fs.existsSync(path.join(FIXTURES, 'corpus', 'INDEX.md'));
if (!have) console.log(`# motion scene effects: ${FIXTURES} is absent, the real projects are skipped`);

const num = (p: string, value: number[], o: Partial<NumProperty> = {}): NumProperty => ({ path: p, value, ...o });
const param = (effect: string, k: number, name: string, type: EffectParam['type'], v: NumProperty): EffectParam => ({
  matchName: `${effect}-000${k}`,
  name,
  type,
  value: v,
});

function solid(index: number, name: string, o: Partial<Layer> = {}): Layer {
  return {
    index,
    id: index * 10,
    name,
    type: 'solid',
    sourceId: 1,
    startTime: 0,
    inPoint: 0,
    outPoint: 10,
    stretch: 1,
    enabled: true,
    solo: false,
    shy: false,
    guide: false,
    threeD: false,
    adjustment: false,
    collapse: false,
    autoOrient: false,
    motionBlur: false,
    blendMode: 'normal',
    preserveTransparency: false,
    isMatte: false,
    transform: {
      anchor: num('ADBE Transform Group>ADBE Anchor Point', [50, 50, 0]),
      position: num('ADBE Transform Group>ADBE Position', [100, 100, 0]),
      scale: num('ADBE Transform Group>ADBE Scale', [100, 100, 100]),
      rotation: num('ADBE Transform Group>ADBE Rotate Z', [0]),
      opacity: num('ADBE Transform Group>ADBE Opacity', [100]),
    },
    masks: [],
    effects: [],
    layerStyles: [],
    expressions: [],
    ...o,
  };
}

const SLIDER = 'ADBE Slider Control';
const slider: Effect = {
  matchName: SLIDER,
  name: 'Size',
  enabled: true,
  params: [
    param(SLIDER, 1, 'Slider', 'slider', {
      path: `ADBE Effect Parade>${SLIDER}>${SLIDER}-0001`,
      value: [10],
      keyframes: [
        { time: 0, value: [10], inInterpolation: 'linear', outInterpolation: 'linear' },
        { time: 2, value: [30], inInterpolation: 'linear', outInterpolation: 'linear' },
      ],
    }),
  ],
};
const BLUR = 'ADBE Gaussian Blur 2';
const blurExpr = 'thisComp.layer("Controls").effect("Size")("Slider") * 2';
const blur: Effect = {
  matchName: BLUR,
  name: 'Gaussian Blur',
  enabled: true,
  params: [
    param(BLUR, 1, 'Blurriness', 'slider', {
      path: `ADBE Effect Parade>${BLUR}>${BLUR}-0001`,
      value: [0],
      expression: blurExpr,
    }),
    param(BLUR, 2, 'Blur Dimensions', 'popup', num(`ADBE Effect Parade>${BLUR}>${BLUR}-0002`, [1])),
  ],
};
const posExpr = '[effect("Size")("Slider"), effect(1)(1).valueAtTime(2)]';

const scene: SceneProject = {
  aeVersion: '23.0',
  footage: [
    {
      id: 1,
      name: 'S',
      kind: 'solid',
      width: 100,
      height: 100,
      color: [1, 0, 0, 1],
      duration: 0,
      frameRate: 0,
      still: true,
    },
  ],
  compositions: [
    {
      id: 2,
      name: 'Main',
      width: 400,
      height: 300,
      pixelAspect: 1,
      frameRate: 30,
      duration: 10,
      background: [0, 0, 0],
      workArea: { start: 0, end: 10 },
      displayStartTime: 0,
      hideShyLayers: false,
      motionBlur: false,
      layers: [
        solid(1, 'Controls', {
          effects: [slider],
          transform: {
            ...solid(1, '').transform,
            position: num('ADBE Transform Group>ADBE Position', [0, 0, 0], { expression: posExpr }),
          },
          expressions: [{ property: 'ADBE Transform Group>ADBE Position', expression: posExpr }],
        }),
        solid(2, 'Blurred', {
          effects: [blur],
          expressions: [{ property: `ADBE Effect Parade>${BLUR}>${BLUR}-0001`, expression: blurExpr }],
        }),
      ],
    },
  ],
};

describe('scene: effects in the display list and in expressions', () => {
  let ev: ExpressionEvaluator;
  before(async () => {
    ev = await createExpressionEvaluator();
  });
  after(() => ev.dispose());

  it('expression controls draw nothing and are not listed; a drawn effect carries its parameters by name', () => {
    const list = evaluate(scene, 2, 1, { expressions: ev });
    assert.deepEqual(list.approximations, []);
    const [blurred, controls] = list.root.children as { layer?: string; effects?: unknown[]; matrix: number[] }[];
    assert.equal(controls.layer, 'Controls');
    assert.equal(controls.effects, undefined);
    // the slider is 20 at 1 s: the blur's expression reads it through another layer and doubles it
    assert.equal(blurred.layer, 'Blurred');
    assert.deepEqual(blurred.effects, [
      { kind: 'gaussian-blur', match_name: BLUR, params: { Blurriness: 40, 'Blur Dimensions': 1 }, time: 1 },
    ]);
    // position [effect("Size")("Slider"), effect(1)(1).valueAtTime(2)] = [20, 30]; anchor 50,50
    assert.deepEqual(controls.matrix.slice(4), [20 - 50, 30 - 50]);
  });

  it('comp("name") reads another composition and its layers\' effects; a missing one fails with a reason', () => {
    const expr = '[comp("Other").layer("Ctrl").effect("Size")("Slider"), comp("Other").width]';
    const other = {
      ...scene.compositions[0],
      id: 3,
      name: 'Other',
      width: 640,
      layers: [solid(1, 'Ctrl', { effects: [slider] })],
    };
    const reader = (e: string) =>
      solid(1, 'Reader', {
        transform: {
          ...solid(1, '').transform,
          position: num('ADBE Transform Group>ADBE Position', [0, 0, 0], { expression: e }),
        },
        expressions: [{ property: 'ADBE Transform Group>ADBE Position', expression: e }],
      });
    const s = (e: string): SceneProject => ({
      ...scene,
      compositions: [{ ...scene.compositions[0], layers: [reader(e)] }, other],
    });
    const list = evaluate(s(expr), 2, 2, { expressions: ev });
    assert.deepEqual(list.approximations, []);
    // the slider is 30 at 2 s; anchor 50,50
    assert.deepEqual((list.root.children[0] as { matrix: number[] }).matrix.slice(4), [30 - 50, 640 - 50]);
    const missing = evaluate(s('comp("Nope").width'), 2, 2, { expressions: ev });
    assert.match(missing.approximations[0].detail, /comp\("Nope"\): there is no composition of that name/);
  });

  it("marker: numKeys, key(i) and nearestKey(t) of the layer's markers, in composition time", () => {
    const e = '[marker.numKeys * 10 + marker.key(1).time, marker.nearestKey(time).time * 100]';
    const l = solid(1, 'Marked', {
      // starting at 1 s: its markers at layer times 0.5 and 1.5 are at 1.5 s and 2.5 s of the composition
      startTime: 1,
      markers: [
        { time: 0.5, comment: 'in' },
        { time: 1.5, comment: 'out' },
      ],
      transform: {
        ...solid(1, '').transform,
        position: num('ADBE Transform Group>ADBE Position', [0, 0, 0], { expression: e }),
      },
      expressions: [{ property: 'ADBE Transform Group>ADBE Position', expression: e }],
    });
    const list = evaluate({ ...scene, compositions: [{ ...scene.compositions[0], layers: [l] }] }, 2, 2.2, {
      expressions: ev,
    });
    assert.deepEqual(list.approximations, []);
    assert.deepEqual((list.root.children[0] as { matrix: number[] }).matrix.slice(4), [21.5 - 50, 250 - 50]);
  });

  it('without the sandbox the effect parameter expression is listed and its own value drawn', () => {
    const list = evaluate(scene, 2, 1);
    const blurred = list.root.children[0] as { effects?: { params: Record<string, unknown> }[] };
    assert.equal(blurred.effects?.[0].params.Blurriness, 0);
    assert.ok(list.approximations.some((a) => a.feature === 'expression' && a.detail.includes('Gaussian Blur 2-0001')));
  });

  it('an effect the page does not draw is listed, the expression control beside it is not', () => {
    const liquify: Effect = { matchName: 'ADBE LIQUIFY', name: 'Liquify', enabled: true };
    const s: SceneProject = {
      ...scene,
      compositions: [{ ...scene.compositions[0], layers: [solid(1, 'A', { effects: [liquify, slider] })] }],
    };
    assert.deepEqual(
      evaluate(s, 2, 0).approximations.map((a) => a.detail),
      ['ADBE LIQUIFY (Liquify) is not drawn'],
    );
  });

  it('an adjustment layer with a drawn effect: its source as coverage, its effects; one in 3D is listed', () => {
    const inv: Effect = { matchName: 'ADBE Invert', name: 'Invert', enabled: true };
    const adj = (o: Partial<Layer>) => solid(1, 'Adj', { type: 'adjustment', adjustment: true, ...o });
    const run = (l: Layer) => evaluate({ ...scene, compositions: [{ ...scene.compositions[0], layers: [l] }] }, 2, 0);
    const list = run(adj({ effects: [inv] }));
    assert.deepEqual(list.approximations, []);
    const g = list.root.children[0] as DisplayGroup;
    assert.equal(g.adjustment, true);
    assert.deepEqual(g.children, [{ kind: 'solid', width: 100, height: 100, color: [1, 0, 0, 1] }]);
    assert.deepEqual(
      g.effects?.map((e) => e.kind),
      ['invert'],
    );
    // without an effect the page draws, it draws nothing (an adjustment layer shows nothing of its own)
    assert.deepEqual(run(adj({})).root.children, []);
    const flat = run(adj({ effects: [inv], threeD: true }));
    assert.deepEqual(flat.root.children, []);
    assert.deepEqual(
      flat.approximations.map((a) => a.detail),
      ['effects of a 3D adjustment layer are not applied'],
    );
  });

  it('a Liquify never brushed moves no pixel: nothing drawn, nothing listed; a brushed one is listed', () => {
    const LQ = 'ADBE LIQUIFY';
    const mesh = (arbitrary: EffectParam['arbitrary'], o: Partial<NumProperty> = {}): Effect => ({
      matchName: LQ,
      name: 'Liquify',
      enabled: true,
      params: [
        {
          ...param(LQ, 0, 'Distortion Mesh', 'curve', num(`ADBE Effect Parade>${LQ}>${LQ}-0014`, [0], o)),
          matchName: `${LQ}-0014`,
          arbitrary,
        },
      ],
    });
    const run = (e: Effect) => {
      const s = { ...scene, compositions: [{ ...scene.compositions[0], layers: [solid(1, 'A', { effects: [e] })] }] };
      const list = evaluate(s, 2, 0);
      return [list.approximations.map((a) => a.detail), (list.root.children[0] as { effects?: unknown }).effects];
    };
    assert.deepEqual(run(mesh('default')), [[], undefined]);
    assert.deepEqual(run(mesh('edited')), [['ADBE LIQUIFY (Liquify) is not drawn'], undefined]);
    const keyed = mesh('default', {
      keyframes: [{ time: 0, value: [0], inInterpolation: 'hold', outInterpolation: 'hold' }],
    });
    assert.deepEqual(run(keyed)[0], ['ADBE LIQUIFY (Liquify) is not drawn']);
  });
});

describe('scene: effect parameters of real projects', { skip: have ? false : `${FIXTURES} is absent` }, () => {
  it('BlurOverlap: each Gaussian Blur with its blurriness; instances without definitions use the shared ones', () => {
    const s = decodeScene(
      fs.readFileSync(path.join(FIXTURES, 'ae-renders/CommunityToolkit__Lottie-Windows/BlurOverlap/AfterEffects.aep')),
    );
    const main = s.compositions.find((c) => c.name === 'Main')!;
    const blurs = main.layers.map((l) => l.effects[0]?.params?.map((p) => [p.name, p.value.value[0]]));
    // as the project's bodymovin export (Lottie.json) has them: 10, 40, 0; dimensions 1; repeat edge pixels on
    assert.deepEqual(blurs.slice(0, 3), [
      [
        ['Blurriness', 10],
        ['Blur Dimensions', 1],
        ['Repeat Edge Pixels', 1],
      ],
      [
        ['Blurriness', 40],
        ['Blur Dimensions', 1],
        ['Repeat Edge Pixels', 1],
      ],
      [
        ['Blurriness', 0],
        ['Blur Dimensions', 1],
        ['Repeat Edge Pixels', 1],
      ],
    ]);
  });

  it('layer markers: their times and comments (as aex reports the same markers on its composition)', () => {
    const s = decodeScene(
      fs.readFileSync(path.join(FIXTURES, 'corpus/KraftyFX__aex/cep__test__assets__layer_markers.aep')),
    );
    const l = s.compositions.flatMap((c) => c.layers).find((x) => x.name === 'DetailedMarkers')!;
    assert.deepEqual(
      l.markers!.map((m) => [Math.round(m.time * 1e4) / 1e4, m.comment]),
      [
        [0.1667, ''],
        [0.4667, 'Some Comment'],
        [0.7833, ''],
        [1.8333, 'banana'],
        [3.55, ''],
      ],
    );
  });

  it("each composition's motion blur settings from cdta (angle, phase, samples per frame, adaptive limit)", () => {
    const shutters = (f: string) =>
      decodeScene(fs.readFileSync(path.join(FIXTURES, 'corpus', f))).compositions.map((c) => c.shutter);
    // After Effects 2021's default (-90) and an older project's 220 degrees with phase 0
    assert.deepEqual(shutters('KraftyFX__aex/cep__test__assets__layer_effects.aep')[0], {
      angle: 180,
      phase: -90,
      samples: 16,
      limit: 128,
    });
    assert.ok(
      shutters('airbnb__lottie-web/build__old_parser__helperProject.aep').some(
        (s) => s?.angle === 220 && s.phase === 0 && s.samples === 16 && s.limit === 128,
      ),
    );
    assert.ok(
      shutters('tinogithub__aftereffects-version-check/aftereffects_projects__2022_22-5-0_build53.aep')
        .concat(shutters('tinogithub__aftereffects-version-check/aftereffects_projects__2023_23-3-0_build53.aep'))
        .some((s) => s?.samples === 10),
    );
  });

  it('Roto Brush and Puppet: their name and parameters past what they keep between tdmn and sspc', () => {
    const fx = decodeScene(
      fs.readFileSync(path.join(FIXTURES, 'corpus/KraftyFX__aex/cep__test__assets__layer_effects.aep')),
    );
    const effect = (mn: string) =>
      fx.compositions
        .flatMap((c) => c.layers)
        .flatMap((l) => l.effects)
        .find((e) => e.matchName === mn)!;
    const roto = effect('ADBE Samurai');
    assert.equal(roto.name, 'Roto Brush & Refine Edge');
    assert.deepEqual(roto.params?.find((p) => p.matchName === '/propagation_method')?.options, [
      '1.0 (Classic)',
      '2.0',
    ]);
    assert.equal(effect('ADBE FreePin3').name, 'Puppet');
  });

  it("Liquify's distortion mesh: the same data as its definition (never brushed) in both projects that use it", () => {
    for (const f of ['actumn__aepx.js/test__aepx__testProject.aepx', 'seco__ae-to-json/test__ae__testProject.aepx']) {
      const s = decodeScene(fs.readFileSync(path.join(FIXTURES, 'corpus', f)));
      const lq = s.compositions
        .flatMap((c) => c.layers)
        .flatMap((l) => l.effects)
        .find((e) => e.matchName === 'ADBE LIQUIFY')!;
      const meshParam = lq.params!.find((p) => p.name === 'Distortion Mesh')!;
      assert.deepEqual([meshParam.type, meshParam.arbitrary], ['curve', 'default'], f);
    }
  });

  it('Fill in display order with its colour; Change To Color with its popup choices and colours', () => {
    const fx = decodeScene(
      fs.readFileSync(path.join(FIXTURES, 'corpus/KraftyFX__aex/cep__test__assets__layer_effects.aep')),
    );
    const fill = fx.compositions.flatMap((c) => c.layers).find((l) => l.effects[0]?.matchName === 'ADBE Fill')!;
    const p = fill.effects[0].params!;
    assert.deepEqual(
      p.map((x) => x.matchName.slice(-4)),
      ['0001', '0007', '0002', '0006', '0003', '0004', '0005'],
    );
    assert.deepEqual(p.find((x) => x.name === 'Color')!.value.value, [1, 0, 0, 1]);
    const nm05 = decodeScene(
      fs.readFileSync(path.join(FIXTURES, 'corpus/actumn__aepx.js/examples__input__nm05ae15_movedtime.aepx')),
    );
    const ctc = nm05.compositions
      .flatMap((c) => c.layers)
      .flatMap((l) => l.effects)
      .find((e) => e.matchName === 'ADBE Change To Color')!;
    const change = ctc.params!.find((x) => x.name === 'Change')!;
    assert.deepEqual(change.options, ['Hue', 'Hue & Lightness', 'Hue & Saturation', 'Hue, Lightness & Saturation']);
    assert.deepEqual(change.value.value, [4]);
    const from = ctc.params!.find((x) => x.name === 'From')!.value.value.map((v) => Math.round(v * 255));
    assert.deepEqual(from, [66, 79, 254, 255]);
  });
});

const linear = (a: number[], b: number[], t1: number) => ({
  keyframes: [
    { time: 0, value: a, inInterpolation: 'linear' as const, outInterpolation: 'linear' as const },
    { time: t1, value: b, inInterpolation: 'linear' as const, outInterpolation: 'linear' as const },
  ],
});
/** A solid moving right at `speed` px/s from x 0 (anchor 0), with its motion blur switch on. */
const mover = (o: Partial<Layer> = {}, speed = 600): Layer =>
  solid(1, 'Bar', {
    motionBlur: true,
    transform: {
      ...solid(1, '').transform,
      anchor: num('ADBE Transform Group>ADBE Anchor Point', [0, 0, 0]),
      position: num('ADBE Transform Group>ADBE Position', [0, 50, 0], linear([0, 50, 0], [speed, 50, 0], 1)),
    },
    ...o,
  });
const blurScene = (layer: Layer, c: Partial<Composition> = {}): SceneProject => ({
  ...scene,
  compositions: [{ ...scene.compositions[0], motionBlur: true, layers: [layer], ...c }],
});

const xs = (g: DisplayGroup) => g.children.map((c) => (c as DisplayGroup).matrix[4]);

describe('scene: motion blur over the shutter (motion-blur.ts)', () => {
  it('phase -90, angle 180: a quarter frame either side; one sample per pixel travelled, at least 16', () => {
    const list = evaluate(blurScene(mover()), 2, 0.5);
    assert.deepEqual(list.approximations, []);
    const g = list.root.children[0] as DisplayGroup;
    // 600 px/s over half a frame at 30 fps: 10 px, so the 16 samples per frame (the default shutter: none stored)
    assert.equal(g.motionBlur, 16);
    const [open, close] = shutterSpan(blurScene(mover()).compositions[0], 0.5);
    assert.ok(Math.abs(open - (0.5 - 1 / 120)) < 1e-12 && Math.abs(close - (0.5 + 1 / 120)) < 1e-12);
    // the middles of 16 equal slices of 295..305
    xs(g).forEach((x, k) => assert.ok(Math.abs(x - (295 + (10 * (k + 0.5)) / 16)) < 1e-9, `${k}: ${x}`));
    assert.ok(g.children.every((c) => (c as DisplayGroup).blend === 'normal'));
  });

  it("the composition's angle, phase and limit: 360 from phase 0 over 40 px gives 40 samples; the limit caps", () => {
    const shutter = { angle: 360, phase: 0, samples: 16, limit: 128 };
    // 1200 px/s: a whole frame travels 40 px
    const fast = mover({}, 1200);
    const g = evaluate(blurScene(fast, { shutter }), 2, 0.1).root.children[0] as DisplayGroup;
    assert.equal(g.motionBlur, 40);
    assert.ok(Math.abs(xs(g)[0] - (120 + 0.5)) < 1e-9);
    const capped = evaluate(blurScene(fast, { shutter: { ...shutter, limit: 20 } }), 2, 0.1).root
      .children[0] as DisplayGroup;
    assert.equal(capped.motionBlur, 20);
  });

  it('a layer at rest is drawn once; the switch off in the composition draws it sharp; 3D is listed', () => {
    const still = mover({
      transform: { ...mover().transform, position: num('ADBE Transform Group>ADBE Position', [5, 50, 0]) },
    });
    const g = evaluate(blurScene(still), 2, 0.5).root.children[0] as DisplayGroup;
    assert.equal(g.motionBlur, undefined);
    assert.equal(g.matrix[4], 5);
    const off = evaluate(blurScene(mover(), { motionBlur: false }), 2, 0.5).root.children[0] as DisplayGroup;
    // inspect's list needs no samples: the layer once, at the instant itself
    const once = evaluate(blurScene(mover()), 2, 0.5, { motionBlur: false }).root.children[0] as DisplayGroup;
    assert.deepEqual([once.motionBlur, once.matrix[4]], [undefined, 300]);
    assert.deepEqual([off.motionBlur, off.matrix[4]], [undefined, 300]);
    const flat = evaluate(blurScene(mover({ threeD: true })), 2, 0.5);
    assert.deepEqual(
      flat.approximations.map((a) => a.detail),
      ['motion blur of a 3D layer is not drawn'],
    );
  });

  it('instants before the in point count as empty samples', () => {
    // in at 0.5 s: at 0.5 the shutter opens a quarter frame earlier, so half the samples find nothing
    const g = evaluate(blurScene(mover({ inPoint: 0.5 })), 2, 0.5).root.children[0] as DisplayGroup;
    assert.deepEqual([g.motionBlur, g.children.length], [16, 8]);
  });
});
