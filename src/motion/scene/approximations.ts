import type { Approximation } from './display.js';
import { evaluate } from './evaluate.js';
import type { ExpressionEvaluator } from './expressions.js';
import type { Composition, SceneProject } from './model.js';

/** Instants evaluated per composition besides its layers' in points: every frame up to this many, else this many. */
const MAX_SAMPLES = 120;

export interface CompositionApproximations {
  composition_id: number;
  composition: string;
  approximations: Approximation[];
}

/**
 * What a preview of each composition would list over its whole duration, computed without drawing: the display
 * lists' approximations at every frame (evenly spread ones past MAX_SAMPLES frames) and at each of its layers' in
 * points, deduplicated; a motion-blurred layer at each instant itself, not at every sample of its shutter (up to 128
 * times the work for notes the instant already gives). Fonts and footage are not here: they depend on the machine
 * and the board a preview runs on.
 */
export function projectApproximations(
  scene: SceneProject,
  expressions?: ExpressionEvaluator,
): CompositionApproximations[] {
  return scene.compositions.map((c) => ({
    composition_id: c.id,
    composition: c.name,
    approximations: compositionApproximations(scene, c, expressions),
  }));
}

function compositionApproximations(
  scene: SceneProject,
  comp: Composition,
  expressions?: ExpressionEvaluator,
): Approximation[] {
  const frames = Math.max(1, Math.round(comp.duration * comp.frameRate));
  const times = new Set<number>();
  const n = Math.min(frames, MAX_SAMPLES);
  for (let k = 0; k < n; k++) times.add(Math.floor((k * frames) / n) / comp.frameRate);
  for (const l of comp.layers) if (l.inPoint > 0 && l.inPoint < comp.duration) times.add(l.inPoint);
  const seen = new Map<string, Approximation>();
  for (const t of [...times].sort((a, b) => a - b))
    for (const a of evaluate(scene, comp.id, t, { expressions, motionBlur: false }).approximations)
      seen.set(`${a.layer_index}|${a.layer}|${a.feature}|${a.detail}`, a);
  return [...seen.values()];
}
