import fsp from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { ProjectFormatError } from '../chunks.js';
import { decodeScene } from '../scene/decode.js';
import { createExpressionEvaluator, type ExpressionEvaluator } from '../scene/expressions.js';
import type { WorkerAnswer, WorkerTask } from './job.js';
import { writeLottie } from './write.js';

/** Decodes one project and writes one composition as Lottie JSON, off the event loop (job.ts starts it). */
const task = workerData as WorkerTask;
let evaluator: ExpressionEvaluator | undefined;
const answer = (m: WorkerAnswer) => parentPort!.postMessage(m);
try {
  const scene = decodeScene(await fsp.readFile(task.file));
  const shown = scene.compositions.some((c) => c.layers.some((l) => l.expressions.length));
  if (task.expressions === 'bake' && shown) evaluator = await createExpressionEvaluator();
  const written = writeLottie(scene, task.compositionId, {
    expressions: task.expressions,
    evaluator,
    images: new Map(task.images),
    ...(task.imageFolder ? { imageFolder: task.imageFolder } : {}),
    text: new Map(task.text),
    media: new Map(task.media),
  });
  answer({ json: JSON.stringify(written.lottie), frames: written.frames, approximations: written.approximations });
} catch (err) {
  if (err instanceof ProjectFormatError) answer({ formatError: err.message });
  else answer({ error: err instanceof Error ? err.message : String(err) });
} finally {
  evaluator?.dispose();
}
