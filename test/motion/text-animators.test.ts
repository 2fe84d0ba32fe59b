import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { startService, type TestService } from '../helpers/service.js';
import type { DisplayText } from '../../src/motion/scene/display.js';
import { textPage } from '../helpers/text-page.js';
import { decodeScene } from '../../src/motion/scene/decode.js';
import { evaluate } from '../../src/motion/scene/evaluate.js';
import { createExpressionEvaluator, type ExpressionEvaluator } from '../../src/motion/scene/expressions.js';
import type {
  Composition,
  Layer,
  NumProperty,
  SceneProject,
  ShapeItem,
  TextAnimator,
  TextDocument,
  TextRangeSelector,
  TextSelector,
} from '../../src/motion/scene/model.js';
import { sampleNum } from '../../src/motion/scene/sample.js';
import { contentBounds } from '../../src/motion/scene/place-3d.js';
import {
  animatorAmounts,
  characterChanges,
  offsetCharacter,
  rangeShape,
  textUnits,
  type AnimatorSampler,
} from '../../src/motion/scene/text-animators.js';

/**
 * Text animators as After Effects documents them (docs/motion.md "Text animators"): each selector's amount per
 * character computed by hand for every shape and basis, selectors combined by mode, expression selectors with
 * textIndex/textTotal/selectorValue, the corpus' text-animator project decoded and evaluated, Source Text expressions
 * and sourceRectAtTime(), and the glyphs drawn by the real preview page where they must be.
 */

const near = (a: number[], b: number[], eps = 1e-4, what = '') =>
  assert.ok(a.length === b.length && a.every((x, i) => Math.abs(x - b[i]) <= eps), `${what}: ${a} vs ${b}`);
const fixed = (v: number[]): NumProperty => ({ path: 'p', value: v });

function range(o: Partial<TextRangeSelector> & { s?: number; e?: number } = {}): TextRangeSelector {
  return {
    kind: 'range',
    name: 'Range Selector 1',
    enabled: true,
    units: 'percent',
    basedOn: 'characters',
    mode: 'add',
    start: fixed([o.s ?? 0]),
    end: fixed([o.e ?? 100]),
    offset: fixed([0]),
    amount: fixed([100]),
    shape: 'square',
    smoothness: fixed([100]),
    easeHigh: fixed([0]),
    easeLow: fixed([0]),
    randomize: false,
    seed: fixed([0]),
    ...o,
  };
}

const SAMPLER: AnimatorSampler = { num: (p) => sampleNum(p, 0), time: 0, expression: (p) => sampleNum(p, 0) };
const amounts = (text: string, sels: TextSelector[]) =>
  animatorAmounts(Array.from(text), sels, SAMPLER).map((a) => a[0]);

describe('text animators: selector amounts per character', () => {
  it('shapes a range over the units, each sampled at its middle (square: the part of it inside the range)', () => {
    // four units, the range over all of them: middles at 0.5, 1.5, 2.5, 3.5 -> t = 1/8, 3/8, 5/8, 7/8
    near(rangeShape('square', 1, 3, 4), [0, 1, 1, 0], 1e-9, 'square 25-75 %');
    near(rangeShape('square', 0.5, 2.25, 4), [0.5, 1, 0.25, 0], 1e-9, 'square over parts of units');
    near(rangeShape('ramp-up', 0, 4, 4), [0.125, 0.375, 0.625, 0.875], 1e-9, 'ramp up');
    near(rangeShape('ramp-down', 0, 4, 4), [0.875, 0.625, 0.375, 0.125], 1e-9, 'ramp down');
    near(rangeShape('triangle', 0, 4, 4), [0.25, 0.75, 0.75, 0.25], 1e-9, 'triangle');
    // round: sqrt(1 - (2t - 1)^2); smooth: (1 - cos 2 pi t) / 2
    const r1 = Math.sqrt(1 - 0.75 ** 2);
    const r2 = Math.sqrt(1 - 0.25 ** 2);
    near(rangeShape('round', 0, 4, 4), [r1, r2, r2, r1], 1e-9, 'round');
    const s1 = (1 - Math.cos(Math.PI / 4)) / 2;
    const s2 = (1 - Math.cos((3 * Math.PI) / 4)) / 2;
    near(rangeShape('smooth', 0, 4, 4), [s1, s2, s2, s1], 1e-9, 'smooth');
    // outside a ramp's range: before it 0, after it 1
    near(rangeShape('ramp-up', 1, 3, 4), [0, 0.25, 0.75, 1], 1e-9, 'ramp up inside 25-75 %');
    // ease high and low bend the shape symmetrically: the middle stays, the low end is pressed down
    const eased = rangeShape('ramp-up', 0, 4, 4, (x) => x, 100);
    near(eased, [0.125, 0.375, 0.625, 0.875], 1e-9, 'no ease');
  });

  it('counts characters, characters without spaces, words and lines as After Effects does', () => {
    const chars = Array.from('ab cd\nef');
    assert.deepEqual(textUnits(chars, 'characters'), { index: [0, 1, 2, 3, 4, -1, 5, 6], total: 7 });
    assert.deepEqual(textUnits(chars, 'characters-excluding-spaces'), { index: [0, 1, 2, 2, 3, -1, 4, 5], total: 6 });
    assert.deepEqual(textUnits(chars, 'words'), { index: [0, 0, 0, 1, 1, -1, 2, 2], total: 3 });
    assert.deepEqual(textUnits(chars, 'lines'), { index: [0, 0, 0, 0, 0, -1, 1, 1], total: 2 });
  });

  it('applies start, end, offset, units and amount per basis', () => {
    // percent of 4 characters: 50..100 % = characters 2 and 3
    near(amounts('abcd', [range({ s: 50 })]), [0, 0, 1, 1], 1e-9, 'start 50 %');
    // offset 25 %: 25..75 %
    near(amounts('abcd', [range({ e: 50, offset: fixed([25]) })]), [0, 1, 1, 0], 1e-9, 'offset');
    // index units: 1..3
    near(amounts('abcd', [range({ units: 'index', s: 1, e: 3 })]), [0, 1, 1, 0], 1e-9, 'index units');
    // amount 50 %, and -100 %
    near(amounts('abcd', [range({ amount: fixed([50]) })]), [0.5, 0.5, 0.5, 0.5], 1e-9, 'amount 50 %');
    near(amounts('abcd', [range({ amount: fixed([-100]) })]), [-1, -1, -1, -1], 1e-9, 'amount -100 %');
    // words: 50..100 % of two words selects the second one, its characters all at 1 (the space goes with "ab")
    near(amounts('ab cd', [range({ s: 50, basedOn: 'words' })]), [0, 0, 0, 1, 1], 1e-9, 'words');
    // lines: the second of two lines
    near(amounts('ab\ncd', [range({ s: 50, basedOn: 'lines' })]), [0, 0, 0, 1, 1], 1e-9, 'lines');
    // without spaces: 4 counted characters, 50..100 % = "cd" (the space goes with "c")
    near(
      amounts('ab cd', [range({ s: 50, basedOn: 'characters-excluding-spaces' })]),
      [0, 0, 1, 1, 1],
      1e-9,
      'no spaces',
    );
    // ramp up over words: middles of 2 words at 1/4, 3/4
    near(
      amounts('ab cd', [range({ shape: 'ramp-up', basedOn: 'words' })]),
      [0.25, 0.25, 0.25, 0.75, 0.75],
      1e-9,
      'ramp words',
    );
  });

  it('combines selectors by mode (the first in Subtract inverts), and randomizes the order with a seed', () => {
    const a = range({ e: 50 }); // 1 1 0 0
    const b = (mode: TextRangeSelector['mode']) => range({ s: 25, e: 75, mode }); // 0 1 1 0
    near(amounts('abcd', [a, b('add')]), [1, 1, 1, 0], 1e-9, 'add');
    near(amounts('abcd', [a, b('subtract')]), [1, 0, 0, 0], 1e-9, 'subtract');
    near(amounts('abcd', [a, b('intersect')]), [0, 1, 0, 0], 1e-9, 'intersect');
    near(amounts('abcd', [a, b('min')]), [0, 1, 0, 0], 1e-9, 'min');
    near(amounts('abcd', [a, b('max')]), [1, 1, 1, 0], 1e-9, 'max');
    near(amounts('abcd', [a, b('difference')]), [1, 0, 1, 0], 1e-9, 'difference');
    near(amounts('abcd', [range({ e: 50, mode: 'subtract' })]), [0, 0, 1, 1], 1e-9, 'subtract alone');
    near(amounts('abcd', []), [1, 1, 1, 1], 1e-9, 'no selector: every character');
    near(amounts('abcd', [{ ...a, enabled: false }]), [1, 1, 1, 1], 1e-9, 'a selector switched off');
    const shuffled = amounts('abcdefgh', [range({ e: 50, randomize: true, seed: fixed([0]) })]);
    assert.equal(shuffled.filter((x) => x === 1).length, 4, 'randomized: still half of them');
    assert.deepEqual(shuffled, amounts('abcdefgh', [range({ e: 50, randomize: true, seed: fixed([0]) })]), 'same seed');
    assert.notDeepEqual(shuffled, [1, 1, 1, 1, 0, 0, 0, 0], 'not the plain order');
  });

  it('wiggles between min and max amount, per dimension unless locked, the same on every run', () => {
    const wiggly: TextSelector = {
      kind: 'wiggly',
      name: 'Wiggly',
      enabled: true,
      basedOn: 'characters',
      mode: 'add',
      maxAmount: fixed([100]),
      minAmount: fixed([20]),
      wigglesPerSecond: fixed([2]),
      correlation: fixed([0]),
      temporalPhase: fixed([0]),
      spatialPhase: fixed([0]),
      lockDimensions: fixed([0]),
      seed: fixed([3]),
    };
    const at = (t: number, sel: TextSelector) => animatorAmounts(Array.from('abcdef'), [sel], { ...SAMPLER, time: t });
    const a = at(0.3, wiggly);
    for (const v of a.flat()) assert.ok(v >= 0.2 - 1e-9 && v <= 1 + 1e-9, `${v} within 20..100 %`);
    assert.deepEqual(a, at(0.3, wiggly), 'deterministic');
    assert.notDeepEqual(a, at(0.8, wiggly), 'moves in time');
    assert.ok(
      a.some((v) => v[0] !== v[1]),
      'dimensions wiggle apart',
    );
    assert.ok(
      at(0.3, { ...wiggly, lockDimensions: fixed([1]) }).every((v) => v[0] === v[1]),
      'locked',
    );
    const together = at(0.3, { ...wiggly, correlation: fixed([100]) });
    assert.ok(
      together.every((v) => Math.abs(v[0] - together[0][0]) < 1e-9),
      'correlation 100 %: all together',
    );
  });

  it('adds properties in proportion: position, scale about the anchor, opacity and colours mixed', () => {
    const anim: TextAnimator = {
      name: 'A',
      enabled: true,
      selectors: [range({ s: 50 })],
      properties: {
        position: fixed([10, 20, 0]),
        scale: fixed([200, 300, 100]),
        opacity: fixed([0]),
        fillColor: fixed([0, 0, 1, 1]),
        tracking: fixed([500]),
      },
      unsupported: [],
    };
    const half: TextAnimator = { ...anim, selectors: [range({ amount: fixed([50]) })] };
    const doc = { fill: [1, 1, 1, 1] as [number, number, number, number], strokeWidth: 0, size: 40 };
    const out = characterChanges('ab', doc, [anim], SAMPLER);
    assert.equal(out[0], null, 'unselected character unchanged');
    near(out[1]!.matrix!, [2, 0, 0, 3, 10, 20], 1e-9, 'scale then position');
    assert.equal(out[1]!.opacity, 0);
    near(out[1]!.fill!, [0, 0, 1, 1], 1e-9, 'fill');
    assert.equal(out[1]!.tracking, 20, '500/1000 em of 40 px');
    const h = characterChanges('a', doc, [half], SAMPLER)[0]!;
    near(h.matrix!, [1.5, 0, 0, 2, 5, 10], 1e-9, 'half: 1 + (s - 1) x 0.5, position x 0.5');
    assert.equal(h.opacity, 0.5);
    near(h.fill!, [0.5, 0.5, 1, 1], 1e-9, 'half-way colour');
  });
});

describe('text animators: character offset', () => {
  it('shifts characters within their group (wrapping), or by code point in full Unicode', () => {
    assert.equal(offsetCharacter('a', 1, true), 'b');
    assert.equal(offsetCharacter('z', 1, true), 'a');
    assert.equal(offsetCharacter('A', -1, true), 'Z');
    assert.equal(offsetCharacter('9', 2, true), '1');
    assert.equal(offsetCharacter('!', 5, true), '!', 'punctuation kept');
    assert.equal(offsetCharacter('z', 1, false), '{');
    const anim: TextAnimator = {
      name: 'Offset',
      enabled: true,
      selectors: [range({ s: 50 })],
      properties: { characterOffset: fixed([3]) },
      unsupported: [],
    };
    const out = characterChanges('abcd', { strokeWidth: 0, size: 10 }, [anim], SAMPLER);
    assert.deepEqual(
      out.map((c) => c?.text ?? null),
      [null, null, 'f', 'g'],
    );
    const half = characterChanges(
      'a',
      { strokeWidth: 0, size: 10 },
      [{ ...anim, selectors: [range({ amount: fixed([50]) })] }],
      SAMPLER,
    );
    assert.equal(half[0]?.text, 'c', '3 x 50 % rounds to 2');
  });
});

describe('text animators: expression selectors', () => {
  let ev: ExpressionEvaluator;
  before(async () => {
    ev = await createExpressionEvaluator();
  });
  after(() => ev.dispose());

  const expressionSampler = (): AnimatorSampler => ({
    num: (p) => sampleNum(p, 0),
    time: 0,
    expression: (p, index, total, selectorValue) => {
      const r = ev.evaluate(p.expression!, {
        time: 0,
        value: sampleNum(p, 0),
        sampleOwn: () => sampleNum(p, 0),
        keyframeTimes: [],
        propertyPath: p.path,
        layerIndex: 1,
        layer: () => undefined,
        comp: {
          name: 'C',
          width: 100,
          height: 100,
          pixelAspect: 1,
          duration: 1,
          frameDuration: 0.04,
          displayStartTime: 0,
          numLayers: 1,
        },
        text: { index, total, selectorValue },
      });
      assert.ok(r.ok, r.ok ? '' : r.reason);
      return r.value;
    },
  });
  const exprSel = (expression: string): TextSelector => ({
    kind: 'expression',
    name: 'Expression',
    enabled: true,
    basedOn: 'characters',
    amount: { path: 'amount', value: [100, 100, 100], expression },
  });

  it('runs per character with textIndex and textTotal (one number is every dimension)', () => {
    const a = animatorAmounts(Array.from('abcd'), [exprSel('textIndex / textTotal * 100')], expressionSampler());
    near(
      a.map((v) => v[0]),
      [0.25, 0.5, 0.75, 1],
      1e-9,
      'x',
    );
    near(
      a.map((v) => v[2]),
      [0.25, 0.5, 0.75, 1],
      1e-9,
      'z',
    );
  });

  it('reads the selectors above it as selectorValue', () => {
    const a = animatorAmounts(
      Array.from('abcd'),
      [range({ e: 50 }), exprSel('selectorValue * textIndex / textTotal')],
      expressionSampler(),
    );
    near(
      a.map((v) => v[0]),
      [0.25, 0.5, 0, 0],
      1e-9,
      'range 0..50 % times index / total',
    );
  });

  it('fails outside a selector, naming textIndex', () => {
    const r = ev.evaluate('textIndex', {
      ...expressionSamplerContext(),
    });
    assert.equal(r.ok, false);
    assert.match((r as { reason: string }).reason, /textIndex/);
  });
});

function expressionSamplerContext() {
  return {
    time: 0,
    value: [0],
    sampleOwn: () => [0],
    keyframeTimes: [],
    propertyPath: 'p',
    layerIndex: 1,
    layer: () => undefined,
    comp: {
      name: 'C',
      width: 100,
      height: 100,
      pixelAspect: 1,
      duration: 1,
      frameDuration: 0.04,
      displayStartTime: 0,
      numLayers: 1,
    },
  };
}

// ------------------------------------------------------------------------------------------------------------------
// A scene made in memory: Source Text expressions and sourceRectAtTime().

const DOC: TextDocument = {
  text: 'Hi',
  font: 'ArialMT',
  fontSize: 20,
  fillColor: [1, 1, 1, 1],
  strokeWidth: 0,
  strokeOverFill: false,
  tracking: 0,
  leading: 24,
  justification: 'left',
  allCaps: false,
  smallCaps: false,
  fauxBold: false,
  fauxItalic: false,
  baselineShift: 0,
  horizontalScale: 100,
  verticalScale: 100,
};

function sceneLayer(index: number, name: string, type: Layer['type'], o: Partial<Layer> = {}): Layer {
  const p = (path: string, value: number[], expression?: string): NumProperty =>
    expression ? { path, value, expression } : { path, value };
  return {
    index,
    id: index,
    name,
    type,
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
      anchor: p('ADBE Transform Group>ADBE Anchor Point', [0, 0, 0]),
      position: p('ADBE Transform Group>ADBE Position', [0, 0, 0]),
      scale: p('ADBE Transform Group>ADBE Scale', [100, 100, 100]),
      rotation: p('ADBE Transform Group>ADBE Rotate Z', [0]),
      opacity: p('ADBE Transform Group>ADBE Opacity', [100]),
    },
    masks: [],
    effects: [],
    layerStyles: [],
    expressions: [],
    ...o,
  };
}

function rectShape(x: number, y: number, w: number, h: number, stroke: number): ShapeItem[] {
  const base = { enabled: true, matchName: '', name: '' };
  return [
    {
      ...base,
      kind: 'group',
      blendMode: 'normal',
      transform: {
        anchor: fixed([0, 0]),
        position: fixed([0, 0]),
        scale: fixed([100, 100]),
        skew: fixed([0]),
        skewAxis: fixed([0]),
        rotation: fixed([0]),
        opacity: fixed([100]),
      },
      items: [
        {
          ...base,
          kind: 'rect',
          reversed: false,
          size: fixed([w, h]),
          position: fixed([x + w / 2, y + h / 2]),
          roundness: fixed([0]),
        },
        { ...base, kind: 'ellipse', reversed: false, size: fixed([20, 20]), position: fixed([x + w, y + h / 2]) },
        {
          ...base,
          kind: 'stroke',
          blendMode: 'normal',
          above: false,
          color: fixed([1, 1, 1, 1]),
          opacity: fixed([100]),
          width: fixed([stroke]),
          cap: 'butt',
          join: 'miter',
          miterLimit: fixed([4]),
          dashes: [],
        },
      ],
    },
  ];
}

describe('text expressions: Source Text and sourceRectAtTime()', () => {
  let ev: ExpressionEvaluator;
  before(async () => {
    ev = await createExpressionEvaluator();
  });
  after(() => ev.dispose());

  function scene(layers: Layer[]): SceneProject {
    const comp: Composition = {
      id: 1,
      name: 'Main',
      width: 200,
      height: 100,
      pixelAspect: 1,
      frameRate: 25,
      duration: 10,
      background: [0, 0, 0],
      workArea: { start: 0, end: 10 },
      displayStartTime: 0,
      hideShyLayers: false,
      motionBlur: false,
      layers,
    };
    return { aeVersion: 'test', compositions: [comp], footage: [] };
  }
  const SOURCE = 'ADBE Text Properties>ADBE Text Document';
  const textLayer = (expression: string) =>
    sceneLayer(1, 'Title', 'text', {
      text: { path: SOURCE, value: DOC, expression },
      expressions: [{ property: SOURCE, expression }],
    });
  const drawn = (s: SceneProject, t: number) => {
    const d = evaluate(s, 1, t, { expressions: ev });
    const g = d.root.children.find((n) => n.kind === 'group' && n.layer === 'Title');
    return { text: g && g.kind === 'group' ? (g.children[0] as DisplayText) : undefined, notes: d.approximations };
  };

  it('draws the text a Source Text expression gives, its own value as `value`, and lists nothing', () => {
    const s = scene([textLayer('value + " " + Math.floor(time * 10)')]);
    const r = drawn(s, 1.25);
    assert.equal(r.text?.text, 'Hi 12');
    assert.deepEqual(r.notes, []);
    assert.equal(drawn(scene([textLayer('text.sourceText.toUpperCase()')]), 0).text?.text, 'HI');
    assert.equal(drawn(scene([textLayer('"a\\rb"')]), 0).text?.text, 'a\nb', 'a return is a new paragraph');
    assert.equal(drawn(scene([textLayer('time * 2')]), 1.5).text?.text, '3', 'a number reads as text');
  });

  it("reads another text layer's text (after its own expression), and its own text in numeric expressions", () => {
    const copy = sceneLayer(2, 'Copy', 'text', {
      text: { path: SOURCE, value: DOC, expression: 'thisComp.layer("Title").text.sourceText + "!"' },
      expressions: [{ property: SOURCE, expression: 'thisComp.layer("Title").text.sourceText + "!"' }],
    });
    const d = evaluate(scene([textLayer('value + "?"'), copy]), 1, 0, { expressions: ev });
    const texts = d.root.children.map((g) => (g.kind === 'group' ? (g.children[0] as DisplayText).text : ''));
    assert.deepEqual(texts.sort(), ['Hi?', 'Hi?!']);
    assert.deepEqual(d.approximations, []);
    const ROT = 'ADBE Transform Group>ADBE Rotate Z';
    const l = sceneLayer(1, 'Title', 'text', { text: { path: SOURCE, value: DOC } });
    l.transform.rotation = { path: ROT, value: [0], expression: 'text.sourceText.length * 10' };
    l.expressions = [{ property: ROT, expression: 'text.sourceText.length * 10' }];
    const g = evaluate(scene([l]), 1, 0, { expressions: ev }).root.children[0];
    assert.ok(g.kind === 'group');
    near([Math.atan2(g.matrix[1], g.matrix[0]) * (180 / Math.PI)], [20], 1e-6, 'two characters: 20 degrees');
  });

  it('falls back to the document and lists a Source Text expression that fails', () => {
    const r = drawn(scene([textLayer('$.evalFile("x.js")')]), 0);
    assert.equal(r.text?.text, 'Hi');
    assert.equal(r.notes.length, 1);
    assert.equal(r.notes[0].feature, 'expression');
    assert.match(r.notes[0].detail, /ADBE Text Document/);
  });

  it("gives a shape layer's exact bounds to sourceRectAtTime(), with the stroke when asked", () => {
    const box = sceneLayer(2, 'Box', 'shape', { shapes: rectShape(10, 20, 60, 30, 4) });
    const POS = 'ADBE Transform Group>ADBE Position';
    const follower = (expression: string) => {
      const l = sceneLayer(1, 'Title', 'text', { text: { path: SOURCE, value: DOC } });
      l.transform.position = { path: POS, value: [0, 0, 0], expression };
      l.expressions = [{ property: POS, expression }];
      return l;
    };
    const at = (expression: string) => {
      const s = scene([follower(expression), box]);
      const d = evaluate(s, 1, 0, { expressions: ev });
      assert.deepEqual(d.approximations, []);
      const g = d.root.children.find((n) => n.kind === 'group' && n.layer === 'Title');
      return g && g.kind === 'group' ? [g.matrix[4], g.matrix[5]] : [];
    };
    // rect 10..70 x 20..50, the circle (radius 10) at (70, 35) reaches x = 80: its curve, not its handles
    near(at('var r = thisComp.layer("Box").sourceRectAtTime(); [r.left, r.top, 0]'), [10, 20], 1e-6, 'top left');
    near(
      at('var r = thisComp.layer("Box").sourceRectAtTime(time, false); [r.width, r.height, 0]'),
      [70, 30],
      1e-6,
      'size',
    );
    near(
      at('var r = thisComp.layer("Box").sourceRectAtTime(0, true); [r.width, r.height, 0]'),
      [74, 34],
      1e-6,
      'with stroke',
    );
  });

  it('lists sourceRectAtTime() of a text layer (its glyphs are measured only when drawn)', () => {
    const expression = 'sourceRectAtTime().width';
    const l = sceneLayer(1, 'Title', 'text', { text: { path: SOURCE, value: DOC } });
    l.transform.rotation = { path: 'ADBE Transform Group>ADBE Rotate Z', value: [0], expression };
    l.expressions = [{ property: 'ADBE Transform Group>ADBE Rotate Z', expression }];
    const d = evaluate(scene([l]), 1, 0, { expressions: ev });
    assert.equal(d.approximations.length, 1);
    assert.match(d.approximations[0].detail, /sourceRectAtTime\(\) of layer 1 is not known/);
  });
});

// ------------------------------------------------------------------------------------------------------------------
// The corpus' project with text animators (KraftyFX/aex layer_text.aep, comp "Text Animators": one text layer per
// selector kind, text "text", 24 fps).

const CORPUS = path.resolve('../shared/fixtures/after-effects/corpus');
const LAYER_TEXT = path.join(CORPUS, 'KraftyFX__aex/cep__test__assets__layer_text.aep');
const haveCorpus = fs.existsSync(LAYER_TEXT);

describe('text animators: the corpus project', { skip: haveCorpus ? false : `${CORPUS} is absent` }, () => {
  let ev: ExpressionEvaluator;
  let scene: SceneProject;
  let comp: Composition;
  before(async () => {
    ev = await createExpressionEvaluator();
    scene = decodeScene(fs.readFileSync(LAYER_TEXT));
    comp = scene.compositions.find((c) => c.name === 'Text Animators')!;
  });
  after(() => ev?.dispose());

  const chars = (t: number, layer: string) => {
    const d = evaluate(scene, comp.id, t, { expressions: ev });
    const g = d.root.children.find((n) => n.kind === 'group' && n.layer === layer);
    return {
      chars: g?.kind === 'group' ? (g.children[0] as DisplayText).characters : undefined,
      notes: d.approximations,
    };
  };

  it('decodes animators, selectors and their properties', () => {
    const layer = (name: string) => comp.layers.find((l) => l.name === name)!;
    const multi = layer('Multiple Animators').textAnimators!;
    assert.equal(multi.length, 2);
    const [s1, s2] = [multi[0].selectors[0], multi[1].selectors[0]] as TextRangeSelector[];
    assert.deepEqual([s1.start.value, s1.end.value, s1.amount.value], [[20], [100], [100]]);
    assert.deepEqual([s2.start.value, s2.end.value, s2.amount.value], [[0], [50], [50]]);
    assert.equal(multi[1].enabled, false, 'the second animator is switched off in the file');
    assert.deepEqual(multi[0].properties.position?.value, [100, 200, 0]);
    const sels = layer('Expression Selector').textAnimators![0].selectors;
    assert.deepEqual(
      sels.map((s) => s.kind),
      ['range', 'expression'],
    );
    assert.equal(
      sels[1].kind === 'expression' && sels[1].amount.expression,
      'timeToFrames(time * 10) * textIndex/textTotal',
    );
    const wiggly = layer('WiggleSelector').textAnimators![0];
    assert.equal(wiggly.selectors[0].kind, 'wiggly');
    assert.equal(wiggly.selectors[0].kind === 'wiggly' && wiggly.selectors[0].mode, 'intersect');
    assert.deepEqual(wiggly.properties.tracking?.value, [100]);
  });

  it('moves the characters a keyframed range start selects (2 s from 0 to 100 %)', () => {
    // at 1 s the start is at 50 %: "te" stay, "xt" are 100 px down
    const c = chars(1, 'Position Animator').chars!;
    assert.deepEqual(c.slice(0, 2), [null, null]);
    near(c[2]!.matrix!, [1, 0, 0, 1, 0, 100], 1e-9, 'x');
    near(c[3]!.matrix!, [1, 0, 0, 1, 0, 100], 1e-9, 't');
    // 20..100 % of 4 characters: the first one a fifth of the way in
    const m = chars(0, 'Multiple Animators').chars!;
    near(m[0]!.matrix!, [1, 0, 0, 1, 20, 40], 1e-9, 'partly selected');
    near(m[1]!.matrix!, [1, 0, 0, 1, 100, 200], 1e-9, 'whole');
  });

  it('colours each character by the expression selector (textIndex / textTotal)', () => {
    // timeToFrames(1 s x 10) = 240 frames x i/4 %: past 100 % from the second character; the first at 60 %
    const c = chars(1, 'Expression Selector').chars!;
    near(c[0]!.fill!, [1, 0.4, 0.4, 1], 1e-9, 'first: 60 % red');
    near(c[3]!.fill!, [1, 0, 0, 1], 1e-9, 'last: red');
  });

  it('lists only the wiggly selector (not After Effects’ own noise) over the whole composition', () => {
    const notes = new Set<string>();
    for (let f = 0; f < comp.duration * comp.frameRate; f += 6)
      for (const a of chars(f / comp.frameRate, 'WiggleSelector').notes)
        if (a.feature === 'text-animator' || a.feature === 'expression') notes.add(`${a.layer}: ${a.detail}`);
    assert.deepEqual(
      [...notes],
      [
        'WiggleSelector: animator "Tracking Animator": wiggly selector "A Wiggly Selector" wiggles with the preview\'s own seeded noise, not After Effects\' random sequence',
      ],
    );
  });
});

// ------------------------------------------------------------------------------------------------------------------
// Drawn by the preview page: glyphs where their animators put them.

const W = 400;
const H = 200;
const textNode = (t: string, characters: DisplayText['characters']): DisplayText => ({
  kind: 'text',
  text: t,
  font: 'Given-Ascent',
  size: 40,
  fill: [1, 1, 1, 1],
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
  characters,
});

const page = (nodes: [number, number, DisplayText][]) => textPage(W, H, nodes);

describe('text animators: drawn glyph by glyph by the preview page', () => {
  let t: TestService;
  let board: string;
  before(async () => {
    t = await startService();
    board = await t.createBoard('text-animators');
  });
  after(() => t.close());

  it('puts each glyph where its animator moves, paints, hides and tracks it', async () => {
    const doc = { fill: [1, 1, 1, 1] as [number, number, number, number], strokeWidth: 0, size: 40 };
    const anim = (selector: TextSelector, properties: TextAnimator['properties']): TextAnimator => ({
      name: 'A',
      enabled: true,
      selectors: [selector],
      properties,
      unsupported: [],
    });
    const changes = (text: string, a: TextAnimator) => characterChanges(text, doc, [a], SAMPLER);
    const res = await t.api('POST', '/api/html/render-frame', {
      html: page([
        // baseline at y = 50: "HH" stay, the last two 60 px lower (range 50..100 %)
        [10, 50, textNode('HHHH', changes('HHHH', anim(range({ s: 50 }), { position: fixed([0, 60, 0]) })))],
        // the first glyph red, the last hidden (index units 0..1 and 3..4, two animators)
        [
          210,
          50,
          textNode('HHHH', [
            ...characterChanges(
              'HHHH',
              doc,
              [anim(range({ units: 'index', e: 1 }), { fillColor: fixed([1, 0, 0, 1]) })],
              SAMPLER,
            ).slice(0, 3),
            ...characterChanges(
              'HHHH',
              doc,
              [anim(range({ units: 'index', s: 3, e: 4 }), { opacity: fixed([0]) })],
              SAMPLER,
            ).slice(3),
          ]),
        ],
      ]),
      board_id: board,
      width: W,
      height: H,
      fps: 25,
    });
    assert.equal(res.status, 200, res.text);
    const png = Buffer.from(await (await fetch(t.baseUrl + res.body.url)).arrayBuffer());
    const { data } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const columns = (x0: number, x1: number, y0: number, y1: number, channel = 1) => {
      const cols: number[] = [];
      for (let x = x0; x < x1; x++) {
        let lit = false;
        for (let y = y0; y < y1 && !lit; y++) lit = data[(y * W + x) * 3 + channel] > 128;
        if (lit) cols.push(x);
      }
      return cols;
    };
    // the glyphs' columns on the baseline row band (capitals of 40 px stand 20 to 30 px tall) and 60 px lower
    const top = columns(0, 200, 20, 51);
    const low = columns(0, 200, 80, 111);
    assert.ok(top.length > 20 && low.length > 20, `both rows drawn (${top.length}, ${low.length} columns)`);
    assert.ok(Math.max(...top) < Math.min(...low), 'the moved glyphs are the right-hand ones, after the staying ones');
    assert.equal(columns(0, 200, 51, 79).length, 0, 'nothing between the rows');
    // second node: red first glyph (red lit, green not), white middle, nothing where the hidden last one is
    const red = columns(210, 400, 20, 51, 0);
    const green = columns(210, 400, 20, 51, 1);
    assert.ok(
      red.length > green.length + 10,
      `the first glyph is red (${red.length} red, ${green.length} green columns)`,
    );
    const plain = columns(10, 200, 20, 51).length;
    assert.ok(
      Math.abs(red.length - (plain + columns(10, 200, 80, 111).length) * 0.75) < 8,
      'three of four glyphs drawn',
    );
    assert.ok(Math.min(...green) > Math.min(...red) + 10, 'the red glyph is the first');
  });

  it("grows a 3D layer's drawing bounds by how far its glyphs are moved", () => {
    const moved = textNode('HH', [null, { matrix: [1, 0, 0, 1, 0, 300] }]);
    const plain = contentBounds([textNode('HH', undefined)]);
    const grown = contentBounds([moved]);
    assert.ok(grown[3] >= 300 && grown[3] - plain[3] >= 300, `bottom ${plain[3]} -> ${grown[3]}`);
  });

  it('spreads the line by tracking animators after the characters they select', async () => {
    const doc = { fill: [1, 1, 1, 1] as [number, number, number, number], strokeWidth: 0, size: 40 };
    const tracked = characterChanges(
      'HHHH',
      doc,
      [
        {
          name: 'T',
          enabled: true,
          selectors: [range({ units: 'index', e: 1 })],
          properties: { tracking: fixed([1000]) },
          unsupported: [],
        },
      ],
      SAMPLER,
    );
    const res = await t.api('POST', '/api/html/render-frame', {
      html: page([
        [10, 50, textNode('HHHH', undefined)],
        [10, 130, textNode('HHHH', tracked)],
        [
          10,
          190,
          textNode(
            'HHHH',
            Array.from('HHHH', () => ({ text: 'I' })),
          ),
        ],
      ]),
      board_id: board,
      width: W,
      height: H,
      fps: 25,
    });
    assert.equal(res.status, 200, res.text);
    const png = Buffer.from(await (await fetch(t.baseUrl + res.body.url)).arrayBuffer());
    const { data } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const extent = (y0: number, y1: number) => {
      const xs: number[] = [];
      for (let x = 0; x < W; x++) for (let y = y0; y < y1; y++) if (data[(y * W + x) * 3] > 128) xs.push(x);
      return [Math.min(...xs), Math.max(...xs)];
    };
    const [a0, a1] = extent(20, 51);
    const [b0, b1] = extent(100, 131);
    assert.ok(Math.abs(a0 - b0) <= 1, 'the first glyph stays');
    assert.ok(Math.abs(b1 - a1 - 40) <= 1, `the rest moves one em (40 px) right: ${b1 - a1}`);
    // "HHHH" offset by one character is laid out as "IIII": narrower
    const [c0, c1] = extent(165, 191);
    assert.ok(Math.abs(c0 - a0) <= 3 && c1 - c0 < (a1 - a0) / 2, `"IIII" ${c0}..${c1} vs "HHHH" ${a0}..${a1}`);
  });
});

describe('text animators: the corpus project over HTTP', { skip: haveCorpus ? false : `${CORPUS} is absent` }, () => {
  let t: TestService;
  let board: string;
  before(async () => {
    t = await startService({ AERENDER_PATH: '/nonexistent/aerender' });
    board = await t.createBoard('text-animators-corpus');
  });
  after(() => t?.close());

  it('inspect lists only the wiggly selector; the preview moves the characters a keyframed range selects', async () => {
    const up = await t.upload(board, { name: 'layer_text.aep', data: fs.readFileSync(LAYER_TEXT) });
    assert.equal(up.status, 200, up.text);
    const inspected = await t.api('POST', '/api/motion/projects/inspect', { board_id: board, url: up.body.url });
    assert.equal(inspected.status, 200, inspected.text);
    const listed = (
      inspected.body.approximations as { composition: string; approximations: { feature: string; detail: string }[] }[]
    ).find((c) => c.composition === 'Text Animators')!.approximations;
    assert.deepEqual(
      listed.map((a) => a.feature),
      ['text-animator'],
      JSON.stringify(listed),
    );
    assert.match(listed[0].detail, /wiggly selector/);
    // every layer writes "text" at the centre (960, 540), drawn at half size; Position Animator's selected characters
    // are 100 px lower (50 px here): all four at 0 s, the last two ("xt") at 1 s, when its start is at 50 %
    const band = async (time: number) => {
      const res = await t.api('POST', '/api/motion/projects/preview', {
        board_id: board,
        url: up.body.url,
        composition: 'Text Animators',
        time,
        width: 960,
      });
      assert.equal(res.status, 200, res.text);
      assert.ok(!res.body.approximations.some((a: { feature: string }) => a.feature === 'expression'));
      const png = Buffer.from(await (await fetch(t.baseUrl + res.body.url)).arrayBuffer());
      const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      const xs: number[] = [];
      for (let y = 300; y < 324; y++)
        for (let x = 0; x < info.width; x++) if (data[3 * (y * info.width + x)] > 128) xs.push(x);
      return [Math.min(...xs), Math.max(...xs)];
    };
    const [a0, a1] = await band(0);
    const [b0, b1] = await band(1);
    assert.ok(a0 < 480 && a1 > 480, `the four characters across the centre at 0 s: ${a0}..${a1}`);
    assert.ok(b0 - a0 > 6, `"te" left the lower row at 1 s: ${a0} -> ${b0}`);
    assert.ok(Math.abs(b1 - a1) <= 2, `"xt" stayed: ${a1} -> ${b1}`);
  });
});
