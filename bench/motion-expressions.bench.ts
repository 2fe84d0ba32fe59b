/**
 * Expression sandbox benchmark (issue 25; runs with `npm run bench -- motion`): what one evaluation costs, per
 * property per frame, in the QuickJS sandbox (src/motion/scene/expressions.ts), for the common forms, on keyframed
 * properties sampled by the scene's own sampler. CPU microseconds per evaluation (median of 5 rounds of 5,000 after
 * a warm-up; CPU time, because wall time on a shared machine measures the other tenants; the aim is tens of
 * microseconds), then the one-off costs: loading the sandbox, the first evaluation, an endless loop stopped by the
 * time limit and a heap filled up to the memory limit.
 *
 *   npx tsx bench/motion-expressions.bench.ts
 */
import { performance } from 'node:perf_hooks';
import { createExpressionEvaluator } from '../src/motion/scene/expressions.js';
import type { NumProperty } from '../src/motion/scene/model.js';
import { context, keyed, type TestLayer } from '../test/motion/expression-context.js';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

const position = keyed(
  'ADBE Transform Group>ADBE Position',
  [
    [0, [100, 100]],
    [1, [900, 500]],
    [2, [100, 100]],
  ],
  'bezier',
);
const rotation = keyed(
  'ADBE Transform Group>ADBE Rotate Z',
  [
    [0, [0]],
    [2, [360]],
  ],
  'bezier',
);
const layers: TestLayer[] = [
  { name: 'Title', transform: {} },
  { name: 'Ball', transform: { position, rotation } },
];
const at = (prop: NumProperty, time: number) => context(layers, 1, prop, time);

const cases: [string, NumProperty][] = [
  ['time * 100', rotation],
  ['[value[0], time * 50]', position],
  ['value', position],
  ['wiggle(5, 20)', position],
  ['loopOut("cycle")', position],
  ['loopOut("pingpong")', rotation],
  ['linear(time, 0, 2, 0, 360)', rotation],
  ['ease(time, 0, 2, [0, 0], [1920, 1080])', position],
  ['thisComp.layer("Ball").transform.rotation * 2', rotation],
  ['thisComp.layer("Ball").transform.position.valueAtTime(time - 0.2)', position],
  ['valueAtTime(time - 0.5)', position],
  ['x = time * 2;\nif (x > 2) { [x, x] } else { value }', position],
  ['seedRandom(index, true); value + random(-10, 10)', rotation],
];

let t0 = performance.now();
const ev = await createExpressionEvaluator();
const load = performance.now() - t0;
t0 = performance.now();
ev.evaluate('time', at(rotation, 0));
const first = performance.now() - t0;

const ROUNDS = 5;
const N = 5000;
console.log('expression'.padEnd(70), 'CPU µs/eval'.padStart(12), 'wall µs/eval'.padStart(13));
for (const [expr, prop] of cases) {
  const ctxs = Array.from({ length: 300 }, (_, i) => at(prop, i / 30));
  const check = ev.evaluate(expr, ctxs[45]);
  if (!check.ok) throw new Error(`${expr}: ${check.reason}`);
  for (let i = 0; i < 1000; i++) ev.evaluate(expr, ctxs[i % 300]);
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const c = cpuUs();
    const w = performance.now();
    for (let i = 0; i < N; i++) ev.evaluate(expr, ctxs[i % 300]);
    wall.push(((performance.now() - w) * 1000) / N);
    cpu.push((cpuUs() - c) / N);
  }
  const last = ev.evaluate(expr, ctxs[45]);
  if (!last.ok) throw new Error(`${expr} failed during the rounds: ${last.reason}`);
  console.log(
    JSON.stringify(expr).slice(0, 70).padEnd(70),
    median(cpu).toFixed(1).padStart(12),
    median(wall).toFixed(1).padStart(13),
  );
}
ev.dispose();

const limited = await createExpressionEvaluator();
t0 = performance.now();
const loop = limited.evaluate('while (true) {}', at(rotation, 0));
const loopMs = performance.now() - t0;
limited.dispose();
// the clock set far off, so that the memory limit is what stops it
const patient = await createExpressionEvaluator({ timeLimitMs: 60_000 });
t0 = performance.now();
const fill = patient.evaluate('var a = []; for (;;) a.push([time, time, time]); 0', at(rotation, 0));
const fillMs = performance.now() - t0;
patient.dispose();

console.log(`\nloading a sandbox (WebAssembly instance, runtime, prelude): ${load.toFixed(1)} ms`);
console.log(`first evaluation (runtime and prelude built, compiled): ${first.toFixed(1)} ms`);
console.log(`endless loop, 100 ms limit: ${loopMs.toFixed(1)} ms (${loop.ok ? 'not stopped!' : loop.reason})`);
console.log(`heap filled to the 16 MiB limit: ${fillMs.toFixed(1)} ms (${fill.ok ? 'not stopped!' : fill.reason})`);
