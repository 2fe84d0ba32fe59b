import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parseProject } from '../../src/motion/read.js';
import {
  createExpressionEvaluator,
  type ExpressionContext,
  type ExpressionEvaluator,
  type ExpressionResult,
} from '../../src/motion/scene/expressions.js';
import type { NumProperty } from '../../src/motion/scene/model.js';
import { sampleNum } from '../../src/motion/scene/sample.js';
import { COMP, context, keyed, staticProp, type TestLayer } from './expression-context.js';

const near = (actual: number, expected: number, eps = 1e-6, what = '') =>
  assert.ok(Math.abs(actual - expected) <= eps, `${what} ${actual} is not ${expected} (±${eps})`);

const ROTATION = 'ADBE Transform Group>ADBE Rotate Z';
const POSITION = 'ADBE Transform Group>ADBE Position';
const LAYERS: TestLayer[] = [
  {
    name: 'Title',
    size: [400, 100],
    transform: { rotation: staticProp(ROTATION, [0]), position: staticProp(POSITION, [10, 20]) },
  },
  {
    name: 'Ball',
    transform: {
      position: keyed(POSITION, [
        [0, [0, 100]],
        [2, [200, 300]],
      ]),
      rotation: keyed(ROTATION, [
        [0, [0]],
        [1, [90]],
      ]),
      opacity: staticProp('ADBE Transform Group>ADBE Opacity', [50]),
    },
  },
];

function ok(r: ExpressionResult): number[] {
  assert.ok(r.ok, `expected a value, got: ${r.ok ? '' : r.reason}`);
  return r.value;
}
function failed(r: ExpressionResult, pattern: RegExp): void {
  assert.equal(r.ok, false, `expected a failure, got ${JSON.stringify(r)}`);
  if (!r.ok) assert.match(r.reason, pattern);
}

describe('expressions: evaluated in the QuickJS sandbox', () => {
  let ev: ExpressionEvaluator;
  before(async () => {
    ev = await createExpressionEvaluator();
  });
  after(() => ev.dispose());

  const rotation = staticProp(ROTATION, [30]);
  const position = staticProp(POSITION, [10, 20]);
  const colour = staticProp('ADBE Effect Parade>ADBE Fill>ADBE Fill-0002', [1, 0, 0, 1]);
  const at = (expr: string, prop: NumProperty, time: number, layer = 1) =>
    ev.evaluate(expr, context(LAYERS, layer, prop, time));

  it('time arithmetic, value, Math and both engines’ syntax', () => {
    assert.deepEqual(ok(at('time*100', rotation, 1.5)), [150]);
    assert.deepEqual(ok(at('[value[0], time*50]', position, 1.5)), [10, 75]);
    assert.deepEqual(ok(at('value + time', rotation, 2)), [32]);
    near(ok(at('Math.sin(time * Math.PI) * 100', rotation, 0.5))[0], 100);
    // legacy ExtendScript: the last statement's value, an if/else included
    assert.deepEqual(ok(at('x = time * 2;\nif (x > 2) { x } else { 0 }', rotation, 1.5)), [3]);
    assert.deepEqual(ok(at('if (time > 1) { 100 } else { 0 }', rotation, 0.5)), [0]);
    assert.deepEqual(ok(at('var v = value;\nif (time < 1) v; else [0, 0];', position, 0.5)), [10, 20]);
    // the JavaScript engine: let/const, arrows, template literals
    assert.deepEqual(ok(at('const f = (t) => t * 2;\nlet s = `${f(time)}`;\nNumber(s)', rotation, 2)), [4]);
    // legacy snake_case names
    assert.deepEqual(ok(at('this_comp.width / 10', rotation, 0)), [192]);
  });

  it('a shorter array keeps the property’s own value for the rest; a longer one is cut', () => {
    const pos3 = staticProp(POSITION, [10, 20, 30]);
    assert.deepEqual(ok(at('[time, time]', pos3, 2)), [2, 2, 30]);
    assert.deepEqual(ok(at('[1, 2, 3]', position, 0)), [1, 2]);
  });

  it('vector arithmetic with operators, as After Effects does it', () => {
    assert.deepEqual(ok(at('value + [10, 10]', position, 0)), [20, 30]);
    assert.deepEqual(ok(at('[1, 2, 3] + value', position, 0)), [11, 22]);
    assert.deepEqual(ok(at('thisComp.layer("Ball").position - [0, 50]', position, 2)), [200, 250]);
    assert.deepEqual(ok(at('value * 2', position, 0)), [20, 40]);
    assert.deepEqual(ok(at('0.5 * value / 5', position, 0)), [1, 2]);
    assert.deepEqual(ok(at('-value', position, 0)), [-10, -20]);
    assert.deepEqual(ok(at('x = value;\nx += [1, 1];\nx -= [0, 2];\nx', position, 0)), [11, 19]);
    // an array and a number: + and - change the first element only
    assert.deepEqual(ok(at('value + 5', position, 0)), [15, 20]);
    assert.deepEqual(ok(at('value - 5', position, 0)), [5, 20]);
    // numbers and strings as in JavaScript; a property's Number object is a number
    assert.deepEqual(ok(at('time * 100 - -2 + "1".length', rotation, 1)), [103]);
    assert.deepEqual(ok(at('thisComp.layer("Ball").rotation + 10', rotation, 1)), [100]);
    assert.deepEqual(ok(at('var o = {a: 1, b: [2, 3]}; var {a} = o; o.b * a + [a, 0]', position, 0)), [3, 3]);
    // comments, template literals and regular expressions survive the rewriting
    assert.deepEqual(ok(at('// a - b\nvalue /* * 2 */ + [1, 1] // end', position, 0)), [11, 21]);
    assert.deepEqual(ok(at('`${time * 2}-${-time}`.length + (/a-b/.test("a-b") ? 1 : 0)', rotation, 1)), [5]);
    failed(at('value * [1, 2]', position, 0), /array times an array/);
  });

  it('linear, ease, easeIn and easeOut with After Effects’ semantics', () => {
    assert.deepEqual(ok(at('linear(time, 1, 3, 0, 100)', rotation, 2.5)), [75]);
    assert.deepEqual(ok(at('linear(time, 1, 3, 0, 100)', rotation, 0)), [0]);
    assert.deepEqual(ok(at('linear(time, 1, 3, 0, 100)', rotation, 5)), [100]);
    assert.deepEqual(ok(at('linear(time, 1, 3, [0, 0], [100, 200])', position, 2)), [50, 100]);
    assert.deepEqual(ok(at('linear(0.25, 0, 100)', rotation, 0)), [25]);
    // tMin > tMax: the ranges are swapped
    assert.deepEqual(ok(at('linear(time, 3, 1, 100, 0)', rotation, 2.5)), [75]);
    // ease is an Easy Ease segment (speed 0, influence 1/3 on both sides): x(s) = s, y(s) = 3s² - 2s³
    near(ok(at('ease(time, 0, 1, 0, 100)', rotation, 0.25))[0], 100 * (3 / 16 - 2 / 64));
    near(ok(at('ease(time, 0, 1, 0, 100)', rotation, 0.5))[0], 50);
    assert.deepEqual(ok(at('ease(time, 0, 1, 0, 100)', rotation, 2)), [100]);
    // easeIn eases at tMin only, easeOut at tMax only: each is the other turned half round
    const easeIn = ok(at('easeIn(time, 0, 1, 0, 100)', rotation, 0.3))[0];
    const easeOut = ok(at('easeOut(time, 0, 1, 0, 100)', rotation, 0.7))[0];
    near(easeIn + easeOut, 100, 1e-6, 'easeIn(0.3) + easeOut(0.7)');
    assert.ok(easeIn < 30, `easeIn starts slower than linear (${easeIn})`);
  });

  it('loopOut and loopIn on a keyframed property: cycle, pingpong, offset, continue', () => {
    const p = keyed(ROTATION, [
      [0, [0]],
      [1, [100]],
    ]);
    assert.deepEqual(ok(at('loopOut()', p, 0.5)), [50]);
    near(ok(at('loopOut()', p, 1.25))[0], 25);
    near(ok(at('loopOut("cycle")', p, 3.75))[0], 75);
    near(ok(at('loopOut("pingpong")', p, 1.25))[0], 75);
    near(ok(at('loopOut("pingpong")', p, 2.25))[0], 25);
    near(ok(at('loopOut("offset")', p, 1.25))[0], 125);
    near(ok(at('loopOut("offset")', p, 3.5))[0], 350);
    near(ok(at('loopOut("continue")', p, 1.5))[0], 150, 1e-6);
    near(ok(at('loopIn("cycle")', p, -0.25))[0], 75);
    near(ok(at('loopIn("pingpong")', p, -0.25))[0], 25);
    near(ok(at('loopIn("offset")', p, -0.25))[0], -25);
    near(ok(at('loopIn("continue")', p, -0.5))[0], -50, 1e-6);
    // numKeyframes: loop only the last segment (100 -> 50 between 1 s and 2 s)
    const three = keyed(ROTATION, [
      [0, [0]],
      [1, [100]],
      [2, [50]],
    ]);
    near(ok(at('loopOut("cycle", 1)', three, 2.25))[0], 87.5);
    near(ok(at('loopOut("cycle")', three, 2.5))[0], 50);
    near(ok(at('loopOutDuration("cycle", 1)', three, 2.25))[0], 87.5);
    // a 2D property loops each dimension
    const pos = keyed(POSITION, [
      [0, [0, 0]],
      [1, [100, 10]],
    ]);
    const v = ok(at('loopOut("pingpong")', pos, 1.5));
    near(v[0], 50);
    near(v[1], 5);
    failed(at('loopOut("bounce")', p, 2), /loop type "bounce"/);
  });

  it('valueAtTime, key(), numKeys and velocity of the property’s own curve', () => {
    const p = keyed(ROTATION, [
      [0, [0]],
      [2, [100]],
    ]);
    assert.deepEqual(ok(at('valueAtTime(time - 0.5)', p, 1.5)), [50]);
    assert.deepEqual(ok(at('thisProperty.valueAtTime(2)', p, 0)), [100]);
    assert.deepEqual(ok(at('numKeys * 10 + key(2).time', p, 0)), [22]);
    assert.deepEqual(ok(at('key(2).value - key(1).value', p, 0)), [100]);
    near(ok(at('velocity', p, 1))[0], 50, 1e-6);
    failed(at('key(3).time', p, 0), /key\(3\): the property has 2 keyframes/);
  });

  it('references to layers of the composition: thisComp.layer, thisLayer, index', () => {
    const ball = LAYERS[1].transform;
    assert.deepEqual(ok(at('thisComp.layer("Ball").transform.position', position, 1)), sampleNum(ball.position!, 1));
    assert.deepEqual(ok(at('thisComp.layer("Ball").transform.position[0] + 10', rotation, 1)), [110]);
    assert.deepEqual(ok(at('thisComp.layer(2).transform.rotation * 2', rotation, 0.5)), [90]);
    assert.deepEqual(ok(at('thisComp.layer("Ball").transform.rotation.valueAtTime(1)', rotation, 0)), [90]);
    assert.deepEqual(ok(at('thisComp.layer("Ball").opacity + thisComp.layer("Ball").index', rotation, 0)), [52]);
    assert.deepEqual(ok(at('thisComp.layer("Title").position', position, 0)), [10, 20]);
    assert.deepEqual(ok(at('[thisLayer.index, index]', position, 0, 2)), [2, 2]);
    assert.deepEqual(ok(at('thisLayer.transform.position', position, 1, 2)), sampleNum(ball.position!, 1));
    assert.deepEqual(ok(at('rotation + 1', rotation, 0.5, 2)), [46]);
    assert.deepEqual(
      ok(at('[thisComp.height, thisComp.duration, thisComp.numLayers, 1 / thisComp.frameDuration]', colour, 0)),
      [1080, 10, 2, 30],
    );
    failed(at('thisComp.layer("Nobody").position', position, 0), /layer "Nobody" is missing/);
    // the layer's size, when the scene knows it (centring the anchor point is a common use)
    assert.deepEqual(ok(at('[width / 2, thisLayer.height / 2]', position, 0)), [200, 50]);
    failed(at('thisComp.layer("Ball").width', rotation, 0), /size of layer "Ball" is not known/);
  });

  it('vector helpers, framesToTime/timeToFrames', () => {
    assert.deepEqual(ok(at('add(value, [1, 2])', position, 0)), [11, 22]);
    assert.deepEqual(ok(at('sub([5, 5], value)', position, 0)), [-5, -15]);
    assert.deepEqual(ok(at('mul(value, 2)', position, 0)), [20, 40]);
    assert.deepEqual(ok(at('div(value, 2)', position, 0)), [5, 10]);
    assert.deepEqual(ok(at('length([3, 4])', rotation, 0)), [5]);
    assert.deepEqual(ok(at('length([1, 1], [4, 5])', rotation, 0)), [5]);
    assert.deepEqual(ok(at('normalize([3, 4])', position, 0)), [0.6, 0.8]);
    assert.deepEqual(ok(at('clamp(value, 0, 15)', position, 0)), [10, 15]);
    assert.deepEqual(ok(at('clamp(time * 100, 0, 50)', rotation, 2)), [50]);
    assert.deepEqual(ok(at('framesToTime(15)', rotation, 0)), [0.5]);
    assert.deepEqual(ok(at('timeToFrames()', rotation, 0.1)), [3]);
    assert.deepEqual(ok(at('timeToFrames(1.5, 24)', rotation, 0)), [36]);
    assert.deepEqual(ok(at('posterizeTime(2); time', rotation, 1.3)), [1]);
  });

  it('colour conversions', () => {
    const colour = staticProp('ADBE Effect Parade>ADBE Fill>ADBE Fill-0002', [1, 0, 0, 1]);
    assert.deepEqual(ok(at('hexToRgb("#FF8000")', colour, 0)), [1, 128 / 255, 0, 1]);
    assert.deepEqual(ok(at('hexToRgb("0x0000ff")', colour, 0)), [0, 0, 1, 1]);
    // pure red is hue 0, saturation 1, lightness 0.5; and back
    assert.deepEqual(ok(at('rgbToHsl([1, 0, 0, 0.5])', colour, 0)), [0, 1, 0.5, 0.5]);
    assert.deepEqual(ok(at('rgbToHsl([0.5, 0.5, 0.5, 1])', colour, 0)), [0, 0, 0.5, 1]);
    assert.deepEqual(ok(at('hslToRgb([1 / 3, 1, 0.5, 1])', colour, 0)), [0, 1, 0, 1]);
    const back = ok(at('hslToRgb(rgbToHsl([0.2, 0.4, 0.9, 1]))', colour, 0));
    [0.2, 0.4, 0.9, 1].forEach((v, i) => near(back[i], v, 1e-12, `channel ${i}`));
    failed(at('hexToRgb("red")', colour, 0), /hex triplet/);
  });

  it('wiggle, random and noise are deterministic and seeded per property', async () => {
    const w1 = ok(at('wiggle(5, 10)', position, 1.2));
    assert.deepEqual(ok(at('wiggle(5, 10)', position, 1.2)), w1);
    const other = await createExpressionEvaluator();
    try {
      assert.deepEqual(ok(other.evaluate('wiggle(5, 10)', context(LAYERS, 1, position, 1.2))), w1);
    } finally {
      other.dispose();
    }
    assert.notDeepEqual(ok(at('wiggle(5, 10)', position, 1.3)), w1);
    assert.notDeepEqual(
      ok(at('wiggle(5, 10)', staticProp('ADBE Transform Group>ADBE Anchor Point', [10, 20]), 1.2)),
      w1,
    );
    for (let t = 0; t < 3; t += 0.05) {
      const v = ok(at('wiggle(3, 10)', position, t));
      assert.ok(Math.abs(v[0] - 10) <= 10 && Math.abs(v[1] - 20) <= 10, `wiggle stays within amp: ${v.join()}`);
      const two = ok(at('wiggle(3, 10, 2, 0.5)', position, t));
      assert.ok(Math.abs(two[0] - 10) <= 15, `two octaves stay within 1.5 amp: ${two.join()}`);
    }
    // timeless seedRandom: the same numbers on every frame; without it they change
    const r = ok(at('seedRandom(7, true); random(10)', rotation, 0))[0];
    assert.ok(r >= 0 && r < 10);
    assert.deepEqual(ok(at('seedRandom(7, true); random(10)', rotation, 3)), [r]);
    assert.notDeepEqual(ok(at('random()', rotation, 0)), ok(at('random()', rotation, 1)));
    assert.deepEqual(ok(at('random()', rotation, 1)), ok(at('random()', rotation, 1)));
    assert.deepEqual(ok(at('Math.random()', rotation, 1)), ok(at('random()', rotation, 1)));
    const n = ok(at('noise(time)', rotation, 0.37))[0];
    assert.ok(n >= -1 && n <= 1);
  });

  it('an expression reads another property’s expression through the caller, and a loop of them stops', () => {
    // the scene evaluates other layers' expressions when an expression reads them: the evaluator is re-entrant
    const layers = (expr: string): ExpressionContext => {
      const base = context(LAYERS, 1, rotation, 1);
      return {
        ...base,
        layer: (ref) => {
          const l = base.layer(ref);
          if (!l) return l;
          return {
            ...l,
            transform: (name, t) => {
              const r = ev.evaluate(expr, { ...context(LAYERS, l.index, rotation, t), layer: layers(expr).layer });
              return r.ok ? r.value : [0];
            },
          };
        },
      };
    };
    assert.deepEqual(ok(ev.evaluate('thisComp.layer(2).rotation + 1', layers('time * 10'))), [11]);
    // an expression that reads itself through the other layer: nesting stops at maxDepth, and the outer one still ends
    assert.deepEqual(ok(ev.evaluate('thisComp.layer(2).rotation + 1', layers('thisComp.layer(2).rotation + 1'))), [8]);
  });

  it('fails with a reason on what reaches outside or is not supported', () => {
    failed(at('$.evalFile("/Users/x/data.js"); getTime(time)', rotation, 0), /\$ is not available/);
    failed(at('app.project.item(1)', rotation, 0), /app is not available/);
    failed(at('system.callSystem("ls")', rotation, 0), /system is not available/);
    failed(at('footage("data.json").sourceData', rotation, 0), /footage\(\) is not available/);
    failed(at('comp("Other").layer(1).position', position, 0), /comp\("Other"\)/);
    failed(
      at('effect("Slider Control")("Slider")', rotation, 0),
      /effect\("Slider Control"\)\("Slider"\) is not on layer 1/,
    );
    failed(at('timeToFrames(time * 10) * textIndex/textTotal', rotation, 0), /textIndex/);
    failed(at('"some text"', rotation, 0), /gave string/);
    failed(at('0 / 0', rotation, 0), /not a finite number/);
    failed(at('time', position, 0), /1 number; the property has 2 dimensions/);
    failed(at('1 +', rotation, 0), /^SyntaxError/);
    failed(at('throw new Error("mine")', rotation, 0), /^Error: mine/);
    // nothing of the host is there
    assert.deepEqual(
      ok(
        at(
          ['require', 'process', 'fetch', 'globalThis.__host', 'globalThis.__exec', 'std', 'os']
            .map((n) => `(typeof ${n} === 'undefined')`)
            .join(' + '),
          rotation,
          0,
        ),
      ),
      [7],
    );
  });

  it('one expression cannot change what the next sees', () => {
    assert.deepEqual(ok(at('leak = 5; Math.sin = null; value', rotation, 0)), [30]);
    assert.deepEqual(
      ok(at('[typeof leak === "undefined" ? 1 : 0, typeof Math.sin === "function" ? 1 : 0]', position, 0)),
      [1, 1],
    );
    assert.deepEqual(ok(at('var mine = 3; mine', rotation, 0)), [3]);
    assert.deepEqual(ok(at('typeof mine === "undefined" ? 1 : 0', rotation, 0)), [1]);
  });

  it('an endless loop is interrupted, a huge allocation stopped by the memory limit, and the sandbox goes on', async () => {
    const small = await createExpressionEvaluator({ timeLimitMs: 30, memoryLimitBytes: 8 * 1024 * 1024 });
    try {
      const ctx = context(LAYERS, 1, rotation, 0);
      // sampleOwn counts the runs: a second stop, then no more runs
      let runs = 0;
      const counted = { ...ctx, sampleOwn: (t: number) => (runs++, ctx.sampleOwn(t)) };
      const endless = 'valueAtTime(1); while (true) {}';
      const loop = small.evaluate(endless, counted);
      failed(loop, /ran longer than 30 ms/);
      assert.deepEqual(small.evaluate(endless, counted), loop);
      assert.equal(runs, 2);
      assert.deepEqual(small.evaluate(endless, counted), loop);
      assert.equal(runs, 2, 'not run a third time');
      assert.deepEqual(ok(small.evaluate('time + 1', ctx)), [1]);
      failed(small.evaluate('"x".repeat(1 << 28).length', ctx), /used more than 8 MiB/);
      assert.deepEqual(ok(small.evaluate('time + 2', ctx)), [2]);
      failed(small.evaluate('new Float64Array(1 << 22)[0]', ctx), /used more than 8 MiB/);
      failed(small.evaluate('function f(n) { return f(n + 1) + 1; } f(0)', ctx), /stack overflow/);
      // deep nesting stops in QuickJS's own stack check, before V8's (which would kill the WebAssembly instance)
      failed(small.evaluate('('.repeat(30_000) + '1' + ')'.repeat(30_000), ctx), /stack overflow/);
      failed(small.evaluate(`var a = ${'['.repeat(5000)}${']'.repeat(5000)}; 1`, ctx), /stack overflow/);
      assert.deepEqual(ok(small.evaluate('time + 3', ctx)), [3]);
    } finally {
      small.dispose();
    }
    // memory filled bit by bit: stopped by the limit, not by the clock (a time limit no busy machine reaches)
    const patient = await createExpressionEvaluator({ timeLimitMs: 60_000, memoryLimitBytes: 8 * 1024 * 1024 });
    try {
      const ctx = context(LAYERS, 1, rotation, 0);
      failed(patient.evaluate('var a = []; for (;;) a.push([time, time, time]); 0', ctx), /used more than 8 MiB/);
      assert.deepEqual(ok(patient.evaluate('time + 4', ctx)), [4]);
    } finally {
      patient.dispose();
    }
  });
});

const CORPUS = path.resolve('../shared/fixtures/after-effects/corpus');
const haveCorpus = fs.existsSync(path.join(CORPUS, 'INDEX.md'));

describe(
  'expressions of real projects (../shared corpus)',
  { skip: haveCorpus ? false : `${CORPUS} is absent` },
  () => {
    it('each one evaluates or fails with a reason; the ones reaching outside ($.evalFile) fail as such', async () => {
      const ev = await createExpressionEvaluator();
      try {
        const files = fs
          .readdirSync(CORPUS, { recursive: true })
          .map(String)
          .filter((f) => /\.aepx?$/.test(f));
        let count = 0;
        let evaluated = 0;
        for (const file of files) {
          const project = parseProject(fs.readFileSync(path.join(CORPUS, file)));
          for (const comp of project.compositions) {
            for (const l of comp.layers) {
              for (const e of l.expressions) {
                count++;
                const layers: TestLayer[] = comp.layers.map((x) => ({ name: x.name, transform: {} }));
                const ctx = {
                  ...context(layers, l.index, staticProp(e.property, [0, 0]), 0),
                  comp: { ...COMP, name: comp.name, width: comp.width, height: comp.height, numLayers: layers.length },
                };
                const r = ev.evaluate(e.expression, ctx);
                if (r.ok) evaluated++;
                else assert.ok(r.reason.length > 0, `${file} ${l.name} ${e.property}: a reason`);
                if (e.expression.includes('$.evalFile')) failed(r, /\$ is not available/);
              }
            }
          }
        }
        // 8 expressions when this was written: 7 load a data file ($.evalFile), 1 is a text animator selector (textIndex)
        assert.ok(count >= 8, `${count} expressions`);
        console.log(`# corpus expressions: ${evaluated} of ${count} evaluated, the others fail with a reason`);
      } finally {
        ev.dispose();
      }
    });
  },
);
