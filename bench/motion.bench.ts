/**
 * Motion-editor inspect benchmark: time to read each After Effects fixture (../shared/fixtures/after-effects) into
 * the inspect answer, in process: CPU time per read (median of 30 after 5 warm-ups; the target, under 50 ms for files
 * under 1 MB, is checked on it because wall time on a shared machine measures the other tenants) and wall time
 * (median, max); then the same over HTTP (POST /api/motion/projects/inspect, wall median of 10), and one 8 MiB file
 * our writer builds, which goes through the worker thread.
 *
 *   npx tsx bench/motion.bench.ts
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { inspectFile } from '../src/motion/inspect.js';
import { parseProject } from '../src/motion/read.js';
import { startService } from '../test/helpers/service.js';
import { chunk } from '../test/motion/rifx-writer.js';
import { sampleProject } from '../test/motion/project-builder.js';

const FIXTURES = path.resolve('../shared/fixtures/after-effects');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number) => `${x.toFixed(1)} ms`;

const files = fs.existsSync(FIXTURES)
  ? fs
      .readdirSync(FIXTURES)
      .filter((f) => /\.aepx?$/i.test(f))
      .sort()
  : [];
if (files.length === 0) console.log(`${FIXTURES} is absent: only the built file is measured`);

console.log(
  'file'.padEnd(34),
  'size'.padStart(9),
  'CPU med'.padStart(10),
  'wall med'.padStart(10),
  'wall max'.padStart(10),
  'HTTP med'.padStart(10),
  ' target',
);
const t = await startService({ AERENDER_PATH: '/nonexistent' });
const board = await t.createBoard('bench');
for (const f of files) {
  const buf = fs.readFileSync(path.join(FIXTURES, f));
  for (let i = 0; i < 5; i++) parseProject(buf);
  const times: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < 30; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    parseProject(buf);
    times.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  const up = await t.upload(board, { name: f, data: buf }, { addToBoard: true });
  const http: number[] = [];
  for (let i = 0; i < 10; i++) {
    const t0 = performance.now();
    const res = await t.api('POST', '/api/motion/projects/inspect', {
      board_id: board,
      element_id: up.body.element.id,
    });
    http.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`${f}: ${res.status} ${res.text}`);
  }
  const ok = buf.length >= 1024 * 1024 || median(cpu) < 50;
  console.log(
    f.padEnd(34),
    `${(buf.length / 1024).toFixed(0)} KiB`.padStart(9),
    ms(median(cpu)).padStart(10),
    ms(median(times)).padStart(10),
    ms(Math.max(...times)).padStart(10),
    ms(median(http)).padStart(10),
    ok ? ' ok' : ' OVER 50 ms',
  );
}
await t.close();

const big = sampleProject({ extra: [chunk('bulk', Buffer.alloc(8 * 1024 * 1024, 0x41))] });
const tmp = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bms-bench-')), 'big.aep');
fs.writeFileSync(tmp, big);
const worker: number[] = [];
for (let i = 0; i < 5; i++) {
  const t0 = performance.now();
  await inspectFile({ path: tmp, name: 'big.aep', size: big.length });
  worker.push(performance.now() - t0);
}
console.log(
  'built 8 MiB .aep (worker thread)'.padEnd(34),
  `${(big.length / 1024).toFixed(0)} KiB`.padStart(9),
  '-'.padStart(10),
  ms(median(worker)).padStart(10),
  ms(Math.max(...worker)).padStart(10),
);
console.log(
  `load average while measuring: ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} on ${os.cpus().length} cores`,
);
fs.rmSync(path.dirname(tmp), { recursive: true, force: true });
