import type { Approximation, DisplayList } from '../scene/display.js';
import { decodeScene } from '../scene/decode.js';
import { evaluate } from '../scene/evaluate.js';
import type { Footage } from '../scene/model.js';
import type { PreviewParams } from './job.js';
import { PREVIEW_LIMITS as L } from './limits.js';

/** What sampling needs (the project's bytes are read by whoever runs it, here or in a worker thread). */
export type SampleInput = Pick<PreviewParams, 'format' | 'fps' | 'time' | 'start' | 'duration' | 'text'> & {
  compositionId: number;
  /** Media edits: the footage item (probed on the service side) that replaces each layer's source. */
  media: { layer: number; footage: Footage }[];
};

/** Every output frame's display list, deduplicated. */
export interface Sampled {
  /** Composition time of each output frame. */
  times: number[];
  /** Output frame → index into `distinct`. */
  frames: number[];
  distinct: DisplayList[];
  approximations: Approximation[];
  composition: { width: number; height: number; background: [number, number, number] };
  /** The project's footage items and the media edits' (for still/video and frame rates). */
  footage: Footage[];
}

/** The output frames' composition times: one at floor(time x fps), or a video's from start. */
function frameTimes(
  input: SampleInput,
  comp: { duration: number; workArea: { start: number; end: number } },
): number[] {
  if (input.format === 'png') return [Math.floor((input.time ?? 0) * input.fps + 1e-9) / input.fps];
  const start = input.start ?? 0;
  const workLength = comp.workArea.end - comp.workArea.start || comp.duration;
  const duration = input.duration ?? Math.min(L.defaultMaxDuration, workLength, comp.duration - start);
  const count = Math.max(1, Math.round(duration * input.fps));
  return Array.from({ length: count }, (_, f) => start + f / input.fps);
}

/**
 * Decodes a project, applies the text and media edits and samples the display list of every output frame; identical
 * lists are kept once (a still composition is drawn once). Synchronous: run on the event loop only for small work
 * (sampling.ts decides), else in a worker thread.
 */
export function sampleFrames(bytes: Uint8Array, input: SampleInput, progress?: (fraction: number) => void): Sampled {
  const scene = decodeScene(bytes);
  const comp = scene.compositions.find((c) => c.id === input.compositionId);
  if (!comp) throw new Error(`composition ${input.compositionId} is not in the decoded project`);
  for (const e of input.text) {
    const layer = comp.layers.find((l) => l.index === e.layer);
    if (!layer?.text) continue;
    // As a render's script does: the edit replaces every keyframe and switches off the Source Text expression.
    layer.text = {
      ...layer.text,
      value: { ...layer.text.value, text: e.text },
      keyframes: undefined,
      expression: undefined,
    };
    layer.expressions = layer.expressions.filter((x) => !x.property.endsWith('ADBE Text Document'));
  }
  for (const e of input.media) {
    const layer = comp.layers.find((l) => l.index === e.layer);
    if (!layer) continue;
    scene.footage.push(e.footage);
    layer.sourceId = e.footage.id;
    layer.type = 'footage';
  }
  const times = frameTimes(input, comp);
  const distinct: DisplayList[] = [];
  const byJson = new Map<string, number>();
  const frames: number[] = [];
  const notes = new Map<string, Approximation>();
  for (const [f, t] of times.entries()) {
    const list = evaluate(scene, comp.id, t);
    for (const a of list.approximations) notes.set(`${a.layer_index}|${a.layer}|${a.feature}|${a.detail}`, a);
    const key = JSON.stringify(list.root);
    let index = byJson.get(key);
    if (index === undefined) {
      index = distinct.push(list) - 1;
      byJson.set(key, index);
    }
    frames.push(index);
    if (progress && (f % 30 === 29 || f === times.length - 1)) progress((f + 1) / times.length);
  }
  return {
    times,
    frames,
    distinct,
    approximations: [...notes.values()],
    composition: { width: comp.width, height: comp.height, background: comp.background },
    footage: scene.footage,
  };
}
