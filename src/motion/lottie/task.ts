import fsp from 'node:fs/promises';
import type { Approximation } from '../schemas.js';
import { decodeScene } from '../scene/decode.js';
import { createExpressionEvaluator, type ExpressionEvaluator } from '../scene/expressions.js';
import type { Footage } from '../scene/model.js';
import { writeLottie, type ImageSource } from './write.js';

/** What writing an export needs besides the pictures' bytes: plain data, so it crosses to a worker thread. */
export interface WorkerTask {
  file: string;
  compositionId: number;
  expressions: 'bake' | 'keep';
  images: [number, ImageSource][];
  imageFolder?: string;
  text: [number, string][];
  media: [number, Footage][];
}
export type WorkerAnswer =
  | { json: string; frames: number; approximations: Approximation[] }
  | { formatError: string }
  | { error: string };

/** Decodes the project and writes the composition (with a sandbox of its own when expressions are baked). */
export async function runTask(task: WorkerTask): Promise<Extract<WorkerAnswer, { json: string }>> {
  const scene = decodeScene(await fsp.readFile(task.file));
  let evaluator: ExpressionEvaluator | undefined;
  if (task.expressions === 'bake' && scene.compositions.some((c) => c.layers.some((l) => l.expressions.length)))
    evaluator = await createExpressionEvaluator();
  try {
    const written = writeLottie(scene, task.compositionId, {
      expressions: task.expressions,
      evaluator,
      images: new Map(task.images),
      ...(task.imageFolder ? { imageFolder: task.imageFolder } : {}),
      text: new Map(task.text),
      media: new Map(task.media),
    });
    return { json: JSON.stringify(written.lottie), frames: written.frames, approximations: written.approximations };
  } finally {
    evaluator?.dispose();
  }
}
