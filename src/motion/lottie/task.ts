import fsp from 'node:fs/promises';
import type { Approximation } from '../schemas.js';
import { decodeScene } from '../scene/decode.js';
import { createExpressionEvaluator, type ExpressionEvaluator } from '../scene/expressions.js';
import type { Footage, SceneProject } from '../scene/model.js';
import { loadGlyphFonts } from './glyphs.js';
import { writeLottie, type ImageSource } from './write.js';

/** What writing an export needs besides the pictures' bytes: plain data, so it crosses to a motion thread. */
export interface WorkerTask {
  file: string;
  compositionId: number;
  expressions: 'bake' | 'keep';
  images: [number, ImageSource][];
  imageFolder?: string;
  text: [number, string][];
  media: [number, Footage][];
  /** Camera layers as cameras (ty 13). */
  cameras?: boolean;
  /** Glyph outlines (`chars`) for the text, from these font files (PostScript name, path) or the machine's. */
  glyphs?: { own: [string, string][] };
}
/** What writing an export hands back. */
export interface WrittenTask {
  json: string;
  frames: number;
  approximations: Approximation[];
}

/**
 * Writes the composition of the project (decoded here unless the caller has it decoded), with a sandbox of its own
 * when expressions are baked; `cancelled` is asked between layers and baked frames.
 */
export async function runTask(
  task: WorkerTask,
  decoded?: SceneProject,
  cancelled?: () => boolean,
): Promise<WrittenTask> {
  const scene = decoded ?? decodeScene(await fsp.readFile(task.file));
  const glyphs = task.glyphs ? await loadGlyphFonts(scene, task.glyphs.own, cancelled) : undefined;
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
      ...(cancelled ? { cancelled } : {}),
      ...(glyphs ? { glyphs: glyphs.fonts } : {}),
      ...(task.cameras ? { cameras: true } : {}),
    });
    return {
      json: JSON.stringify(written.lottie),
      frames: written.frames,
      approximations: [...(glyphs?.notes ?? []), ...written.approximations],
    };
  } finally {
    evaluator?.dispose();
  }
}
