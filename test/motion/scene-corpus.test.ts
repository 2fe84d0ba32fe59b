import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { decodeScene } from '../../src/motion/scene/decode.js';
import { evaluate } from '../../src/motion/scene/evaluate.js';
import type { Layer, NumProperty } from '../../src/motion/scene/model.js';
import { sampleNum } from '../../src/motion/scene/sample.js';
import { assertPlainJson } from './scene-builder.js';

/**
 * The scene decoder on real projects (../shared/fixtures/after-effects/corpus, INDEX.md): every composition decodes
 * and evaluates, and the keyframes of seco/ae-to-json's test project match what After Effects' own scripting reported
 * for it (example__example.json).
 */
const CORPUS = path.resolve('../shared/fixtures/after-effects/corpus');
const haveCorpus = fs.existsSync(path.join(CORPUS, 'INDEX.md'));
if (!haveCorpus) console.log(`# motion scene: ${CORPUS} is absent, the real After Effects projects are skipped`);
const skip = haveCorpus ? false : `${CORPUS} is absent`;
const nearAll = (actual: number[], expected: number[], eps: number) =>
  expected.forEach((e, k) => assert.ok(Math.abs(actual[k] - e) <= eps, `[${k}] ${actual[k]} is not ${e}`));

const projects = haveCorpus
  ? fs
      .readdirSync(CORPUS, { recursive: true })
      .map(String)
      .filter((f) => /\.aepx?$/.test(f))
      .sort()
  : [];

describe('scene model on real projects', { skip }, () => {
  it('has the corpus', () => assert.ok(projects.length >= 40, `${projects.length} projects`));

  for (const file of projects) {
    it(`${file}: every composition evaluates at its start, middle and last frame as plain JSON`, () => {
      const scene = decodeScene(fs.readFileSync(path.join(CORPUS, file)));
      for (const comp of scene.compositions) {
        assert.ok(comp.frameRate > 0 && comp.width > 0 && comp.height > 0, `${comp.name}: size and rate`);
        for (const t of [0, comp.duration / 2, Math.max(0, comp.duration - 1 / comp.frameRate)]) {
          const list = evaluate(scene, comp.id, t);
          assert.equal(list.composition.name, comp.name);
          assert.ok(
            list.root.children.length <= comp.layers.length,
            `${comp.name} at ${t}: no more groups than layers`,
          );
          assertPlainJson(list, `${file} ${comp.name} at ${t}`);
        }
      }
    });
  }
});

describe('scene model: text documents of real projects', { skip }, () => {
  it('reads point text and the box of paragraph text', () => {
    const scene = decodeScene(
      fs.readFileSync(path.join(CORPUS, 'KraftyFX__aex/cep__test__assets__prescan_1_flat_project.aep')),
    );
    const texts = scene.compositions.find((c) => c.name === '5) Text Layers')!.layers;
    const point = texts.find((l) => l.name === 'Simple text')!.text!.value;
    assert.equal(point.text, 'Simple text');
    assert.equal(point.box, undefined);
    const para = texts.find((l) => l.name.startsWith('Lots and lots'))!.text!.value;
    assert.deepEqual(para.box, { position: [0, -25.01971], size: [856, 590] });
    const list = evaluate(scene, scene.compositions.find((c) => c.name === '5) Text Layers')!.id, 0);
    const boxes = JSON.stringify(list).match(/"box":\{[^}]*\}/g);
    assert.deepEqual(boxes, ['"box":{"x":0,"y":-25.01971,"width":856,"height":590}']);
  });
});

describe('scene model: gradients of real projects', { skip }, () => {
  it('reads colour and opacity stops from the gradient XML and merges them for the page', () => {
    const scene = decodeScene(
      fs.readFileSync(path.join(CORPUS, 'KraftyFX__aex/cep__test__assets__prescan_1_flat_project.aep')),
    );
    const comp = scene.compositions.find((c) => c.name === '3) Unsupported Properties')!;
    const layer = comp.layers.find((l) => l.name === 'Modified unsupported properties')!;
    const group = layer.shapes!.find((i) => i.kind === 'group')!;
    const grad = (group.kind === 'group' ? group.items : []).find((i) => i.kind === 'gradient-fill')!;
    assert.equal(grad.kind === 'gradient-fill' && grad.gradientType, 'linear');
    const stops = grad.kind === 'gradient-fill' ? grad.stops.value : undefined;
    assert.deepEqual(stops?.opacities, [
      [0, 1],
      [1, 1],
    ]);
    assert.deepEqual(stops?.colors[0], [0, 1, 0, 0]);
    assert.equal(stops?.colors.length, 2);
    const list = JSON.stringify(evaluate(scene, comp.id, 0));
    assert.match(list, /"stops":\[\{"offset":0,"color":\[1,0,0,1\]\},\{"offset":1,"color":\[0\.827/);
    // the next composition's twists are drawn with a falloff of this project's choosing, listed once per layer
    // (pucker & bloat and round corners are drawn as After Effects draws them)
    const shapes = scene.compositions.find((c) => c.name === '4) Shape Layers')!;
    const ops = evaluate(scene, shapes.id, 0)
      .approximations.filter((a) => a.feature === 'shape-operator')
      .map((a) => `${a.layer_index} ${a.detail.split(' (')[0]}`);
    assert.deepEqual(ops.sort(), [
      '2 twist "Twist 1": the angle falls off linearly from the centre to the farthest point',
      '4 twist "Twist 1": the angle falls off linearly from the centre to the farthest point',
    ]);
  });
});

describe('scene model: masks of real projects', { skip }, () => {
  it('scales mask points by the layer: fractions of a solid, pixels on text and shape layers', () => {
    const bbox = (file: string, layerName: string) => {
      const scene = decodeScene(fs.readFileSync(path.join(CORPUS, file)));
      const l = scene.compositions.flatMap((c) => c.layers).find((x) => x.name === layerName)!;
      const v = l.masks[0].path.value.v;
      return [
        ...[0, 1].map((d) => Math.min(...v.map((p) => p[d]))),
        ...[0, 1].map((d) => Math.max(...v.map((p) => p[d]))),
      ];
    };
    // a 100x100 rectangle masked by a square just around it, on a shape layer
    nearAll(bbox('KraftyFX__aex/cep__test__assets__layer_effects.aep', 'Simple Effect'), [-50, -50, 50, 50], 0.5);
    // a text layer's line of text (its baseline at y = 0) masked by a box around it
    const text = bbox('actumn__aepx.js/examples__input__nm05ae15_movedtime.aepx', 'artist');
    assert.ok(text[0] > -50 && text[2] < 1280 && text[1] > -150 && text[3] < 50, String(text));
    // masks on a full-frame solid, inside the frame
    const solid = bbox('KraftyFX__aex/cep__test__assets__layer_masks.aep', 'Detailed');
    assert.ok(solid[0] > 0 && solid[2] < 1920 && solid[1] > 0 && solid[3] < 1080, String(solid));
  });

  it('reads feather: the values, variable feather points with a radius, and lists what it does not draw', () => {
    // KraftyFX/aex's tests read these masks through ExtendScript: "Attributes" feathered 33 x 33 without feather
    // points, "Feather" with points of radii 74.28, 0, 54.67, "Mask 1" with radii -1e-8, 0 then -70.0, 66.9
    const scene = decodeScene(fs.readFileSync(path.join(CORPUS, 'KraftyFX__aex/cep__test__assets__layer_masks.aep')));
    const masks = scene.compositions.flatMap((c) => c.layers).flatMap((l) => l.masks);
    const byName = (n: string) => masks.find((m) => m.name === n)!;
    assert.deepEqual(byName('Attributes').feather.value, [33, 33]);
    assert.equal(byName('Attributes').variableFeather, undefined);
    assert.equal(byName('Basic').variableFeather, undefined);
    assert.equal(byName('Feather').variableFeather, true);
    assert.equal(byName('Mask 1').variableFeather, true);
    assert.ok(masks.every((m) => m.featherFalloff === undefined));
    const comp = scene.compositions.find((c) => c.name === 'Comp 1')!;
    const notes = evaluate(scene, comp.id, 0)
      .approximations.filter((a) => a.feature === 'mask-feather')
      .map((a) => a.detail);
    assert.deepEqual(notes.sort(), [
      'mask "Attributes": feather drawn as a Gaussian centred on the path, sigma 0.38 x the feather (After Effects ' +
        "documents the Gaussian and where it lies, not its spread: skottie's factor)",
      'mask "Feather": variable feather points are not drawn',
      'mask "Mask 1": variable feather points are not drawn',
    ]);
  });
});

interface AeKey {
  0: number;
  1: number | number[];
  2?: {
    easeIn: { type: string; temporalEase: { speed: number; influence: number }[]; spatialTangent?: number[] };
    easeOut: { type: string; temporalEase: { speed: number; influence: number }[]; spatialTangent?: number[] };
  };
}

describe('scene model against After Effects scripting (seco/ae-to-json)', { skip }, () => {
  const dir = path.join(CORPUS, 'seco__ae-to-json');
  const scene = haveCorpus ? decodeScene(fs.readFileSync(path.join(dir, 'test__ae__testProject.aepx'))) : undefined;
  const ae = haveCorpus
    ? (JSON.parse(fs.readFileSync(path.join(dir, 'example__example.json'), 'utf8')) as {
        project: { items: { typeName: string; name: string; layers?: Record<string, any>[] }[] };
      })
    : undefined;
  const comps = ae?.project.items.filter((i) => i.typeName === 'Composition') ?? [];
  const PROPS: Record<string, keyof Layer['transform']> = {
    'Anchor Point': 'anchor',
    Position: 'position',
    'X Position': 'positionX',
    'Y Position': 'positionY',
    Scale: 'scale',
    Rotation: 'rotation',
    'Z Rotation': 'rotation',
    Opacity: 'opacity',
  };
  const close = (a: number, b: number, eps: number, what: string) =>
    assert.ok(Math.abs(a - b) <= eps * Math.max(1, Math.abs(b)), `${what}: ${a} is not ${b}`);
  const vec = (v: number | number[]) => (Array.isArray(v) ? v : [v]);

  it('reads the same layers, blending modes and static transforms', () => {
    let checked = 0;
    for (const c of comps) {
      const mine = scene!.compositions.find((x) => x.name === c.name)!;
      for (const l of c.layers ?? []) {
        const m = mine.layers[l.index - 1];
        assert.equal(m.name, l.name);
        if (m.type === 'camera' || m.type === 'light') continue;
        assert.equal(m.blendMode, String(l.blendingMode).toLowerCase().replace(/_/g, '-'), `${l.name} blending mode`);
        for (const [name, p] of Object.entries<any>(l.properties.Transform)) {
          const key = PROPS[name];
          const prop = key ? (m.transform[key] as NumProperty | undefined) : undefined;
          if (!prop || (name === 'Opacity' && m.type === 'null') || (p.keyframes?.length ?? 0) > 1) continue;
          const expected = vec(p.value ?? p.keyframes[0][1]);
          expected.forEach((v: number, k: number) =>
            close(prop.value[k], v, 1e-6, `${c.name}/${l.name} ${name}[${k}]`),
          );
          checked++;
        }
      }
    }
    assert.ok(checked >= 40, `${checked} static values compared`);
  });

  it("between keys a spatial property stays on the motion path the file's tangents draw", () => {
    const comp = scene!.compositions.find((c) => c.name === 'Test-Comp-Animated')!;
    const pos = comp.layers.find((l) => l.name === 'animatedLogoBezier')!.transform.position!;
    const keys = pos.keyframes!;
    assert.equal(keys.length, 4);
    for (let k = 0; k < keys.length - 1; k++) {
      const [a, b] = [keys[k], keys[k + 1]];
      const p1 = a.value.map((v, d) => v + a.outTangent![d]);
      const p2 = b.value.map((v, d) => v + b.inTangent![d]);
      const curve = (u: number) =>
        a.value.map(
          (v, d) => (1 - u) ** 3 * v + 3 * (1 - u) ** 2 * u * p1[d] + 3 * (1 - u) * u * u * p2[d] + u ** 3 * b.value[d],
        );
      const onCurve = Array.from({ length: 4001 }, (_, i) => curve(i / 4000));
      for (const f of [0.1, 0.3, 0.5, 0.7, 0.9]) {
        const p = sampleNum(pos, a.time + f * (b.time - a.time));
        const miss = Math.min(...onCurve.map((q) => Math.hypot(...q.map((v, d) => v - p[d]))));
        assert.ok(miss < 0.5, `segment ${k} at ${f}: ${miss.toFixed(3)} px off the path`);
      }
    }
  });

  it('reads every keyframe: time, value, interpolation, speed, influence and spatial tangents, and samples them exactly', () => {
    let keys = 0;
    for (const c of comps) {
      const mine = scene!.compositions.find((x) => x.name === c.name)!;
      for (const l of c.layers ?? []) {
        const m = mine.layers[l.index - 1];
        for (const [name, p] of Object.entries<any>(l.properties.Transform)) {
          const aeKeys = (p.keyframes ?? []) as AeKey[];
          if (aeKeys.length < 2) continue;
          const prop = m.transform[PROPS[name]] as NumProperty | undefined;
          // with dimensions separated After Effects still lists the leader's keys; this model keeps X and Y only
          if (!prop && m.transform.positionX) continue;
          assert.ok(prop, `${c.name}/${l.name} ${name} is decoded`);
          const where = `${c.name}/${l.name} ${name}`;
          assert.equal(prop.keyframes?.length, aeKeys.length, `${where}: key count`);
          aeKeys.forEach((k, i) => {
            const kf = prop.keyframes![i];
            close(kf.time + m.startTime, k[0], 1e-9, `${where} key ${i} time`);
            vec(k[1]).forEach((v, d) => close(kf.value[d], v, 1e-9, `${where} key ${i} value[${d}]`));
            assert.equal(kf.inInterpolation, k[2]!.easeIn.type, `${where} key ${i} in`);
            assert.equal(kf.outInterpolation, k[2]!.easeOut.type, `${where} key ${i} out`);
            // eases of a side without a segment (before the first key, after the last) and of linear sides are
            // not stored: After Effects computes what it reports for them
            if (i > 0 && kf.inInterpolation === 'bezier')
              k[2]!.easeIn.temporalEase.forEach((e, d) => {
                close(kf.inEase![d].speed, e.speed, 1e-6, `${where} key ${i} in speed`);
                close(kf.inEase![d].influence * 100, e.influence, 1e-6, `${where} key ${i} in influence`);
              });
            if (i < aeKeys.length - 1 && kf.outInterpolation === 'bezier')
              k[2]!.easeOut.temporalEase.forEach((e, d) => {
                close(kf.outEase![d].speed, e.speed, 1e-6, `${where} key ${i} out speed`);
                close(kf.outEase![d].influence * 100, e.influence, 1e-6, `${where} key ${i} out influence`);
              });
            if (k[2]!.easeIn.spatialTangent && prop.spatial) {
              k[2]!.easeIn.spatialTangent.forEach((v, d) => close(kf.inTangent![d], v, 1e-5, `${where} in tangent`));
              k[2]!.easeOut.spatialTangent!.forEach((v, d) =>
                close(kf.outTangent![d], v, 1e-5, `${where} out tangent`),
              );
            }
            const sampled = sampleNum(prop, kf.time);
            vec(k[1]).forEach((v, d) => close(sampled[d], v, 1e-9, `${where} sampled at key ${i}`));
            keys++;
          });
        }
      }
    }
    assert.ok(keys >= 12, `${keys} keyframes compared`);
  });
});
