import type { DisplayGroup } from './display.js';
import type { Composition } from './model.js';

/**
 * Motion blur as After Effects' composition settings give it: a layer with its motion blur switch, in a composition
 * with motion blur on, shows the average of what it draws while the shutter is open, from phase to phase + angle
 * (degrees of one frame; Composition Settings > Advanced, defaults 180 and -90). After Effects samples a 2D layer
 * adaptively, between its samples per frame (16) and its adaptive sample limit (128), more for more motion: here the
 * count is the largest distance a corner of the layer travels while the shutter is open (one sample per pixel, so the
 * samples join into a smear), held between the two. Samples sit at the middles of equal slices of the open shutter.
 */
export const SHUTTER_DEFAULTS = { angle: 180, phase: -90, samples: 16, limit: 128 };

/** The instants [open, close] in composition seconds the shutter is open for the frame at `t`. */
export function shutterSpan(comp: Composition, t: number): [number, number] {
  const s = comp.shutter ?? SHUTTER_DEFAULTS;
  const frame = 1 / comp.frameRate;
  const open = t + (s.phase / 360) * frame;
  return [open, open + (Math.max(0, Math.min(720, s.angle)) / 360) * frame];
}

/**
 * The layer blurred over the shutter: `at(time)` draws the layer at a composition time (undefined: nothing there).
 * A layer that draws the same at the shutter's open, middle and close is drawn once; otherwise a group whose
 * children are the samples, averaged by the page (`motionBlur`), with the layer's blending mode on the average.
 */
export function motionBlurred(
  comp: Composition,
  t: number,
  at: (time: number) => DisplayGroup | undefined,
): DisplayGroup | undefined {
  const [open, close] = shutterSpan(comp, t);
  const s = comp.shutter ?? SHUTTER_DEFAULTS;
  const ends = [at(open), at((open + close) / 2), at(close)];
  const same = JSON.stringify(ends[0]);
  if (close <= open || ends.every((e) => JSON.stringify(e) === same)) return ends[1];
  const travel = Math.max(cornerTravel(comp, ends[0], ends[1]), cornerTravel(comp, ends[1], ends[2])) * 2;
  const n = Math.max(1, Math.round(Math.min(s.limit, Math.max(s.samples, Math.ceil(travel - 1e-9)))));
  const samples: DisplayGroup[] = [];
  let blend: DisplayGroup['blend'] = 'normal';
  for (let k = 0; k < n; k++) {
    const g = at(open + ((k + 0.5) / n) * (close - open));
    // an instant outside the layer's time adds nothing to the average
    if (!g) continue;
    blend = g.blend;
    samples.push({ ...g, blend: 'normal' });
  }
  return {
    kind: 'group',
    layer_index: samples[0]?.layer_index,
    layer: samples[0]?.layer,
    composition_id: samples[0]?.composition_id,
    matrix: [1, 0, 0, 1, 0, 0],
    opacity: 1,
    blend,
    motionBlur: n,
    children: samples,
  };
}

/**
 * The largest distance a corner of the layer's rectangle moves between two of its groups (pixels of the parent); a
 * layer without a known rectangle (shapes, text) is taken as large as its composition, which counts more, not less.
 */
function cornerTravel(comp: Composition, a: DisplayGroup | undefined, b: DisplayGroup | undefined): number {
  if (!a || !b) return 0;
  const size = a.layerSize ?? a.clip ?? { width: comp.width, height: comp.height };
  let most = 0;
  for (const [x, y] of [
    [0, 0],
    [size.width, 0],
    [0, size.height],
    [size.width, size.height],
  ]) {
    const p = (m: number[]) => [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];
    const [ax, ay] = p(a.matrix);
    const [bx, by] = p(b.matrix);
    most = Math.max(most, Math.hypot(bx - ax, by - ay));
  }
  return most;
}
