import fsp from 'node:fs/promises';
import { parentPort } from 'node:worker_threads';
import { ProjectFormatError } from '../chunks.js';
import { runTask } from '../lottie/task.js';
import { parseProject } from '../read.js';
import { decodeScene } from '../scene/decode.js';
import type { SceneProject } from '../scene/model.js';
import type { ThreadAnswer, ThreadMessage } from './display-list-pool.js';
import { sampleFrames, withExpressions } from './display-lists.js';

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
 * A motion thread (display-list-pool.ts): one request at a time off the event loop. `sample` samples a preview,
 * posting {id, progress} messages; `export` writes a Lottie export (lottie/task.ts); `inspect` reads a project (read.ts).
 * Then {id, result} or {id, error}.
 * Either stops at its next check once the request's `cancel` flag is set. Neither changes a decoded project (sample.ts
 * copies what the edits touch; the writer only reads), so it is kept for the next request.
 */
parentPort!.on('message', async (m: ThreadMessage) => {
  const flag = new Int32Array(m.cancel);
  const cancelled = () => Atomics.load(flag, 0) === 1;
  const answer = (a: ThreadAnswer) => parentPort!.postMessage(a);
  try {
    if (m.kind === 'inspect') return answer({ id: m.id, result: parseProject(await fsp.readFile(m.file)) });
    if (m.kind === 'export')
      return answer({ id: m.id, result: await runTask(m.task, await scene(m.task.file), cancelled) });
    const decoded = await scene(m.file);
    const sampled = await withExpressions((expressions) =>
      sampleFrames(decoded, m.input, m.work, (progress) => answer({ id: m.id, progress }), cancelled, expressions),
    );
    answer({ id: m.id, result: sampled });
  } catch (err) {
    answer({
      id: m.id,
      error: err instanceof Error ? err.message : String(err),
      ...(err instanceof ProjectFormatError ? { formatError: true } : {}),
    });
  }
});
