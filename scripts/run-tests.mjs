// Runs every test file under test/ with Node's own test runner (TypeScript through scripts/ts-hooks.mjs).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

function find(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'helpers' ? [] : find(full);
    return e.name.endsWith('.test.ts') ? [full] : [];
  });
}

// node:sqlite without a flag, and the statement option the stores use, arrived in 22.15 (docs/platforms.md).
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 15)) {
  console.error(
    `The tests need Node.js 22.15 or later, or 24; this is ${process.version}. ` +
      'On this machine: PATH="$(.ci/node 24):$PATH" npm ci && npm test',
  );
  process.exit(1);
}

// The runner (test-runner.mjs) starts files in the order given, two at a time: the slowest go first, longest first (each
// file's whole seconds in the last full run on 2 cores, as test-runner.mjs prints them, 2026-11-28), so that the end of
// a run is short files on both slots rather than one long file running alone. The rest keep their alphabetical order.
const SLOWEST_FIRST = [
  'test/motion/preview-corpus.test.ts', // 160
  'test/motion/preview-render.test.ts', // 139
  'test/html/ranges.test.ts', // 133
  'test/motion/lottie-corpus.test.ts', // 126
  'test/workers/html-on-workers.test.ts', // 105
  'test/workers/motion-on-queue.test.ts', // 83
  'test/mockups/render.test.ts', // 72
  'test/client/package.test.ts', // 70
  'test/workers/queue.test.ts', // 65
  'test/motion/preview-effects.test.ts', // 59
  'test/html/render.test.ts', // 48
  'test/foundation/refused-bodies.test.ts', // 48
  'test/motion/preview-workers.test.ts', // 42
  'test/html/render-job.test.ts', // 34
  'test/html/bands.test.ts', // 34
  'test/motion/ae-renders.test.ts', // 32
  'test/motion/lottie-bodymovin.test.ts', // 32
];
const rank = (file) => {
  const i = SLOWEST_FIRST.indexOf(file.split(path.sep).join('/'));
  return i < 0 ? SLOWEST_FIRST.length : i;
};
const only = process.argv.slice(2);
const files = (only.length ? only : find('test')).sort().sort((a, b) => rank(a) - rank(b));
const result = spawnSync(
  process.execPath,
  [
    '--import',
    new URL('ts-hooks.mjs', import.meta.url).href,
    path.join(import.meta.dirname, 'test-runner.mjs'),
    ...files,
  ],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
);
process.exit(result.status ?? 1);
