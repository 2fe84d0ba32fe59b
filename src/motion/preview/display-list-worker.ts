import fsp from 'node:fs/promises';
import { parentPort } from 'node:worker_threads';
import { decodeScene } from '../scene/decode.js';
import type { SceneProject } from '../scene/model.js';
import { sampleFrames, withExpressions, type SampleInput } from './display-lists.js';

/** Decoded projects this thread keeps, by path, size and modification time: previews of one template follow each other. */
const KEEP = 2;
const decoded = new Map<string, SceneProject>();

async function scene(file: string): Promise<SceneProject> {
  const stat = await fsp.stat(file);
  const key = `${file}\u0000${stat.size}\u0000${stat.mtimeMs}`;
  let found = decoded.get(key);
  if (found) decoded.delete(key);
  else found = decodeScene(await fsp.readFile(file));
  decoded.set(key, found);
  for (const old of decoded.keys()) if (decoded.size > KEEP) decoded.delete(old);
  return found;
}

/**
 * A sampling thread (sampling.ts): samples one preview at a time off the event loop, posting {id, progress} messages,
 * then {id, sampled} or {id, error}; stops between frames once the request's `cancel` flag is set. Sampling never
 * changes a decoded project (sample.ts copies what the edits touch), so it is kept for the next preview.
 */
parentPort!.on(
  'message',
  async (m: { id: number; file: string; input: SampleInput; work: string; cancel: SharedArrayBuffer }) => {
    const flag = new Int32Array(m.cancel);
    try {
      const decoded = await scene(m.file);
      const sampled = await withExpressions((expressions) =>
        sampleFrames(
          decoded,
          m.input,
          m.work,
          (progress) => parentPort!.postMessage({ id: m.id, progress }),
          () => Atomics.load(flag, 0) === 1,
          expressions,
        ),
      );
      parentPort!.postMessage({ id: m.id, sampled });
    } catch (err) {
      parentPort!.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) });
    }
  },
);
