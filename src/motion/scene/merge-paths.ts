import type { DisplayShape, Matrix } from './display.js';
import { applyToPath, IDENTITY } from './geometry.js';
import type { BezierPath } from './model.js';

/** Merge Paths' modes past plain "Merge" (which only joins the paths into one compound path). */
export type MergeMode = 'add' | 'subtract' | 'intersect' | 'exclude';

/** After Effects' Merge Type popup: 1 merge, 2 add, 3 subtract, 4 intersect, 5 exclude intersections. */
export const MERGE_MODES: (MergeMode | 'merge' | undefined)[] = [
  undefined,
  'merge',
  'add',
  'subtract',
  'intersect',
  'exclude',
];

/** A shape's paths as evaluate.ts carries them, with the boolean merge its paths stand for, if any. */
export interface MergeEntry {
  paths: BezierPath[];
  merge?: DisplayShape['merge'];
}

/**
 * Merge Paths over the shapes above it in its group (After Effects' manual, "Merge Paths options"): their paths, in
 * the group's coordinates, become one shape; each input shape (top first) is one operand of the mode. The inputs'
 * own entries are emptied: "the input paths are essentially removed from the rendering", so the paints above the
 * operation draw nothing. An input that was itself merged with a boolean mode joins with its paths as they are, its
 * own boolean lost (`approximated`, listed by the caller).
 */
export function mergePaths(
  refs: { entry: MergeEntry; m: Matrix }[],
  mode: MergeMode | 'merge',
): { entry: MergeEntry; m: Matrix; approximated: boolean } {
  const operands = refs.map((r) => r.entry.paths.map((p) => applyToPath(r.m, p)));
  const approximated = refs.some((r) => r.entry.merge);
  for (const r of refs) {
    r.entry.paths = [];
    delete r.entry.merge;
  }
  const entry: MergeEntry = { paths: operands.flat() };
  if (mode !== 'merge') entry.merge = { mode, operands: operands.map((o) => o.length) };
  return { entry, m: IDENTITY, approximated };
}
