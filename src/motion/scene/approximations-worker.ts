import fsp from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { decodeScene } from './decode.js';
import { createExpressionEvaluator } from './expressions.js';
import { projectApproximations } from './approximations.js';

/** Lists a project file's approximations off the event loop, with an expression sandbox; answers {list} or {error}. */
const file = (workerData as { file: string }).file;
try {
  const scene = decodeScene(await fsp.readFile(file));
  const expressions = await createExpressionEvaluator();
  try {
    parentPort!.postMessage({ list: projectApproximations(scene, expressions) });
  } finally {
    expressions.dispose();
  }
} catch (err) {
  parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) });
}
