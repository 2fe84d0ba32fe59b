import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { tempDir } from '../helpers/fixtures.js';
import { RUN_TS } from '../helpers/service.js';
import { comp, layer, layerData, project, solidItem } from './scene-builder.js';

const run = promisify(execFile);
const POOL = new URL('../../src/motion/preview/display-list-pool.ts', import.meta.url).href;

/**
 * The motion threads (display-list-pool.ts) keep a process alive while they work and never after: an idle thread
 * lingers 60 s for the next request, and a process that is done must not wait for it (every test file that
 * previewed a composition waited those 60 s before it ended).
 */
describe('motion threads and the life of the process', () => {
  let dir: string;
  let file: string;
  before(async () => {
    dir = await tempDir();
    file = path.join(dir, 'one.aep');
    await fsp.writeFile(
      file,
      project(
        comp({
          id: 1,
          name: 'One',
          width: 64,
          height: 32,
          fps: 10,
          duration: 1,
          layers: [layer(layerData({ id: 2, source: 3 }), 'Solid', [])],
        }),
        solidItem(3, 'Red', 64, 32, [1, 0, 0]),
      ),
    );
  });
  after(() => fsp.rm(dir, { recursive: true, force: true }));

  it('a process holding nothing else gets its answer, then ends at once rather than at the idle timer', async () => {
    // No top-level await: only the thread's task keeps this process alive until the answer.
    const script =
      `import { inThread } from ${JSON.stringify(POOL)};` +
      `inThread({ kind: 'inspect', file: ${JSON.stringify(file)} }, new AbortController().signal)` +
      `.then((p) => console.log(JSON.stringify(p.compositions.map((c) => c.name))));`;
    const { stdout } = await run(process.execPath, [...RUN_TS, '--input-type=module', '-e', script], {
      timeout: 50_000,
    });
    // An idle thread that held the process would keep it 60 s: the timeout kills it at 50 s, and execFile rejects.
    assert.deepEqual(JSON.parse(stdout), ['One']);
  });
});
