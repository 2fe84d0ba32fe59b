// Node's test runner over the files given, in the order given (`node --test` sorts them by name, which would leave
// the slowest files for the end: scripts/run-tests.mjs orders them). Started by run-tests.mjs with
// `--import ./scripts/ts-hooks.mjs`, which the runner passes on to each file's process.
import { run } from 'node:test';
import { spec } from 'node:test/reporters';

// Two files at a time (CI has 2 cores, and a whole run keeps both 97.6 % busy: docs/architecture.md); TEST_FILES_AT_ONCE
// tries another number.
const concurrency = Number(process.env.TEST_FILES_AT_ONCE) || 2;
const files = process.argv.slice(2);
const stream = run({ files, concurrency });
// Each file's whole time (its process's start, imports and teardown included), for the slowest-first order.
const fileSeconds = new Map();
stream.on('test:complete', (data) => {
  if (data.nesting === 0 && files.includes(data.name)) fileSeconds.set(data.name, data.details.duration_ms / 1000);
});
stream.on('test:fail', (data) => {
  if (!data.todo) process.exitCode = 1;
});
stream.compose(spec).pipe(process.stdout);
stream.on('end', () => {
  const slowest = [...fileSeconds].sort((a, b) => b[1] - a[1]).slice(0, 20);
  if (slowest.length > 1)
    console.log(`# slowest files (s): ${slowest.map(([f, s]) => `${f} ${s.toFixed(0)}`).join(', ')}`);
});
