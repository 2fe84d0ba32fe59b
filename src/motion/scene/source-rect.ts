import type { BezierPath, DisplayNode, Matrix } from './display.js';
import { multiply } from './geometry.js';

/** `sourceRectAtTime()`'s answer: the layer's content rectangle in its own coordinates. */
export interface SourceRect {
  top: number;
  left: number;
  width: number;
  height: number;
}

/** The extremes of a cubic from a to d (controls b, c) along one axis: its ends and where its slope is zero. */
function cubicRange(a: number, b: number, c: number, d: number): [number, number] {
  let lo = Math.min(a, d);
  let hi = Math.max(a, d);
  // derivative / 3 = qa t^2 + qb t + qc
  const qa = -a + 3 * b - 3 * c + d;
  const qb = 2 * (a - 2 * b + c);
  const qc = b - a;
  const roots: number[] = [];
  if (Math.abs(qa) < 1e-12) {
    if (Math.abs(qb) > 1e-12) roots.push(-qc / qb);
  } else {
    const disc = qb * qb - 4 * qa * qc;
    if (disc >= 0) {
      const r = Math.sqrt(disc);
      roots.push((-qb + r) / (2 * qa), (-qb - r) / (2 * qa));
    }
  }
  for (const t of roots) {
    if (t <= 0 || t >= 1) continue;
    const u = 1 - t;
    const v = u * u * u * a + 3 * u * u * t * b + 3 * u * t * t * c + t * t * t * d;
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  return [lo, hi];
}

/**
 * The exact bounds of shape content as After Effects' `sourceRectAtTime(t, includeExtents)` gives them for a shape
 * layer: the painted paths' curves (not their control points) in the layer's coordinates, grown by half of each
 * stroke's width when `extents` is true (miters and caps are not added). Undefined when nothing is painted.
 */
export function shapeSourceRect(nodes: DisplayNode[], extents: boolean): SourceRect | undefined {
  const box = [Infinity, Infinity, -Infinity, -Infinity];
  const walk = (list: DisplayNode[], m: Matrix) => {
    for (const n of list) {
      if (n.kind === 'group') walk(n.children, multiply(m, n.matrix));
      if (n.kind !== 'shape') continue;
      const pad = extents && n.stroke ? (n.stroke.width / 2) * Math.sqrt(Math.abs(m[0] * m[3] - m[1] * m[2])) : 0;
      for (const p of n.paths) addPath(p, m, pad, box);
    }
  };
  walk(nodes, [1, 0, 0, 1, 0, 0]);
  if (box[0] > box[2]) return undefined;
  return { top: box[1], left: box[0], width: box[2] - box[0], height: box[3] - box[1] };
}

function addPath(p: BezierPath, m: Matrix, pad: number, box: number[]): void {
  const at = (x: number, y: number): [number, number] => [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];
  const n = p.v.length;
  const segments = p.closed ? n : n - 1;
  const grow = (axis: 0 | 1, lo: number, hi: number) => {
    box[axis] = Math.min(box[axis], lo - pad);
    box[axis + 2] = Math.max(box[axis + 2], hi + pad);
  };
  if (n === 1) {
    const [x, y] = at(p.v[0][0], p.v[0][1]);
    grow(0, x, x);
    grow(1, y, y);
  }
  for (let k = 0; k < segments; k++) {
    const j = (k + 1) % n;
    const a = at(p.v[k][0], p.v[k][1]);
    const b = at(p.v[k][0] + p.o[k][0], p.v[k][1] + p.o[k][1]);
    const c = at(p.v[j][0] + p.i[j][0], p.v[j][1] + p.i[j][1]);
    const d = at(p.v[j][0], p.v[j][1]);
    for (const axis of [0, 1] as const) grow(axis, ...cubicRange(a[axis], b[axis], c[axis], d[axis]));
  }
}
