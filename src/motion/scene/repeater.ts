import type { DisplayNode, Matrix } from './display.js';
import { transformMatrix } from './geometry.js';

/** A repeater's values at one instant, in After Effects' units (scale and opacities in percent, degrees). */
export interface RepeaterValues {
  copies: number;
  offset: number;
  anchor: number[];
  position: number[];
  scale: number[];
  rotation: number;
  startOpacity: number;
  endOpacity: number;
}

export interface RepeaterCopy {
  /** From the copy's coordinates into the group's. */
  matrix: Matrix;
  /** 0..1. */
  opacity: number;
}

/** A repeater's copies past which the rest are not drawn (a keyframed count can ask for millions). */
export const MAX_COPIES = 1000;

/**
 * Display nodes and paths all the repeaters of a layer may make (nested repeaters multiply each other): past it the
 * copies are cut, so one layer cannot make a frame's display list grow without bound.
 */
export const MAX_REPEATED = 20_000;

/** How many copies of `nodes` and `paths` paths stay within MAX_REPEATED (at least one). */
export function copiesWithin(nodes: DisplayNode[], paths: number): number {
  const count = (list: DisplayNode[]): number =>
    list.reduce((n, x) => n + 1 + (x.kind === 'group' ? count(x.children) : 0), 0);
  return Math.max(1, Math.floor(MAX_REPEATED / Math.max(1, count(nodes) + paths)));
}

/**
 * Each copy of a repeater, first copy first. Copy k is transformed n = k + offset times: moved n times the position,
 * turned n times the rotation and scaled by scale^n about the anchor point (After Effects' transform order: scale,
 * then rotation, then position). A fractional part of n scales by the straight mix from 100 % to the scale, as
 * lottie-web draws bodymovin's repeaters; a negative n undoes the steps. A fractional count of copies is rounded up
 * (lottie-web too). The opacity goes straight from the start opacity (first copy) to the end opacity (last).
 */
export function repeaterCopies(v: RepeaterValues): RepeaterCopy[] {
  const count = Math.min(MAX_COPIES, Math.max(0, Math.ceil(v.copies - 1e-9)));
  const out: RepeaterCopy[] = [];
  const anchor = [v.anchor[0] ?? 0, v.anchor[1] ?? 0];
  for (let k = 0; k < count; k++) {
    const n = k + v.offset;
    const whole = Math.trunc(n);
    const part = Math.abs(n - whole);
    const factor = (s: number) => {
      const f = s / 100;
      const step = Math.pow(f, Math.abs(whole)) * (1 + (f - 1) * part);
      return n < 0 ? (step === 0 ? 0 : 1 / step) : step;
    };
    const scale = [factor(v.scale[0] ?? 100) * 100, factor(v.scale[1] ?? v.scale[0] ?? 100) * 100];
    const position = [anchor[0] + (v.position[0] ?? 0) * n, anchor[1] + (v.position[1] ?? 0) * n];
    out.push({
      matrix: transformMatrix(anchor, position, scale, v.rotation * n),
      opacity: Math.min(
        1,
        Math.max(0, (v.startOpacity + (v.endOpacity - v.startOpacity) * (count > 1 ? k / (count - 1) : 0)) / 100),
      ),
    });
  }
  return out;
}
