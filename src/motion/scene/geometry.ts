import type { Matrix } from './display.js';
import type { BezierPath } from './model.js';

/** Geometry of shape-layer primitives and affine matrices, in After Effects' conventions. */

/** Handle length of a quarter circle as a cubic bezier. */
const KAPPA = 0.5522847498307936;

export const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0];

/** m x n (n applied first), in Canvas' setTransform order. */
export function multiply(m: Matrix, n: Matrix): Matrix {
  return [
    m[0] * n[0] + m[2] * n[1],
    m[1] * n[0] + m[3] * n[1],
    m[0] * n[2] + m[2] * n[3],
    m[1] * n[2] + m[3] * n[3],
    m[0] * n[4] + m[2] * n[5] + m[4],
    m[1] * n[4] + m[3] * n[5] + m[5],
  ];
}

/**
 * After Effects' transform: translate(position) x rotate x skew x scale x translate(-anchor). Skew (shape groups) is
 * a shear of `skew` degrees along the axis at `skewAxis` degrees.
 */
export function transformMatrix(
  anchor: number[],
  position: number[],
  scale: number[],
  rotationDeg: number,
  skewDeg = 0,
  skewAxisDeg = 0,
): Matrix {
  const r = (rotationDeg * Math.PI) / 180;
  const [cos, sin] = [Math.cos(r), Math.sin(r)];
  let m: Matrix = [cos, sin, -sin, cos, position[0], position[1]];
  if (skewDeg) {
    const a = (skewAxisDeg * Math.PI) / 180;
    const k = Math.tan((-skewDeg * Math.PI) / 180);
    const [ca, sa] = [Math.cos(a), Math.sin(a)];
    m = multiply(m, [ca, sa, -sa, ca, 0, 0]);
    m = multiply(m, [1, 0, k, 1, 0, 0]);
    m = multiply(m, [ca, -sa, sa, ca, 0, 0]);
  }
  const sx = scale[0] / 100;
  const sy = (scale[1] ?? scale[0]) / 100;
  m = multiply(m, [sx, 0, 0, sy, 0, 0]);
  return multiply(m, [1, 0, 0, 1, -anchor[0], -(anchor[1] ?? 0)]);
}

/** The inverse of an affine matrix, or undefined when it flattens the plane (a scale of 0). */
export function invert(m: Matrix): Matrix | undefined {
  const det = m[0] * m[3] - m[1] * m[2];
  if (Math.abs(det) < 1e-12) return undefined;
  const [a, b, c, d] = [m[3] / det, -m[1] / det, -m[2] / det, m[0] / det];
  return [a, b, c, d, -(a * m[4] + c * m[5]), -(b * m[4] + d * m[5])];
}

export function applyToPath(m: Matrix, p: BezierPath): BezierPath {
  const pt = (x: number, y: number): [number, number] => [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];
  const vec = (x: number, y: number): [number, number] => [m[0] * x + m[2] * y, m[1] * x + m[3] * y];
  return {
    closed: p.closed,
    v: p.v.map(([x, y]) => pt(x, y)),
    i: p.i.map(([x, y]) => vec(x, y)),
    o: p.o.map(([x, y]) => vec(x, y)),
  };
}

/** The same path drawn the other way (a shape's "reversed" direction). */
export function reversePath(p: BezierPath): BezierPath {
  if (p.v.length < 2) return p;
  // closed paths keep their first vertex, open ones run from the last
  const order = p.closed
    ? [0, ...p.v.map((_, k) => p.v.length - 1 - k).slice(0, -1)]
    : p.v.map((_, k) => p.v.length - 1 - k);
  return { closed: p.closed, v: order.map((k) => p.v[k]), i: order.map((k) => p.o[k]), o: order.map((k) => p.i[k]) };
}

/** Rectangle centred on `pos`, from its top-right corner clockwise (After Effects' start point), corners rounded. */
export function rectPath(pos: number[], size: number[], roundness: number): BezierPath {
  const [cx, cy] = pos;
  const w = Math.abs(size[0]) / 2;
  const h = Math.abs(size[1]) / 2;
  const r = Math.max(0, Math.min(roundness, w, h));
  if (r === 0) {
    const v: [number, number][] = [
      [cx + w, cy - h],
      [cx + w, cy + h],
      [cx - w, cy + h],
      [cx - w, cy - h],
    ];
    return { closed: true, v, i: v.map(() => [0, 0]), o: v.map(() => [0, 0]) };
  }
  const k = r * KAPPA;
  const v: [number, number][] = [
    [cx + w, cy - h + r],
    [cx + w, cy + h - r],
    [cx + w - r, cy + h],
    [cx - w + r, cy + h],
    [cx - w, cy + h - r],
    [cx - w, cy - h + r],
    [cx - w + r, cy - h],
    [cx + w - r, cy - h],
  ];
  const i: [number, number][] = [
    [0, -k],
    [0, 0],
    [k, 0],
    [0, 0],
    [0, k],
    [0, 0],
    [-k, 0],
    [0, 0],
  ];
  const o: [number, number][] = [
    [0, 0],
    [0, k],
    [0, 0],
    [-k, 0],
    [0, 0],
    [0, -k],
    [0, 0],
    [k, 0],
  ];
  return { closed: true, v, i, o };
}

/** Ellipse centred on `pos`, four vertices from the top, clockwise. */
export function ellipsePath(pos: number[], size: number[]): BezierPath {
  const [cx, cy] = pos;
  const rx = size[0] / 2;
  const ry = size[1] / 2;
  const kx = rx * KAPPA;
  const ky = ry * KAPPA;
  return {
    closed: true,
    v: [
      [cx, cy - ry],
      [cx + rx, cy],
      [cx, cy + ry],
      [cx - rx, cy],
    ],
    i: [
      [-kx, 0],
      [0, -ky],
      [kx, 0],
      [0, ky],
    ],
    o: [
      [kx, 0],
      [0, ky],
      [-kx, 0],
      [0, -ky],
    ],
  };
}

/**
 * Star or polygon: `points` tips from the top (turned by `rotation` degrees), clockwise; roundness (percent) gives each
 * vertex tangents perpendicular to its radius, a quarter of the vertex's share of the circumference long.
 */
export function starPath(
  star: boolean,
  pos: number[],
  points: number,
  rotation: number,
  outerR: number,
  innerR: number,
  outerRound: number,
  innerRound: number,
): BezierPath {
  const n = Math.max(3, Math.min(1000, Math.floor(points)));
  const count = star ? n * 2 : n;
  const step = (2 * Math.PI) / count;
  const v: [number, number][] = [];
  const i: [number, number][] = [];
  const o: [number, number][] = [];
  for (let k = 0; k < count; k++) {
    const outer = !star || k % 2 === 0;
    const r = outer ? outerR : innerR;
    const round = (outer ? outerRound : innerRound) / 100;
    const a = ((rotation - 90) * Math.PI) / 180 + k * step;
    const [x, y] = [Math.cos(a), Math.sin(a)];
    v.push([pos[0] + r * x, pos[1] + r * y]);
    const len = ((2 * Math.PI * r) / (n * 4)) * round;
    // tangent direction: perpendicular to the radius, along the clockwise direction
    i.push([len * y, -len * x]);
    o.push([-len * y, len * x]);
  }
  return { closed: true, v, i, o };
}

// ------------------------------------------------------------------------------------------------------------
// Trim paths: cut paths to a fraction of their length.

type Seg = [[number, number], [number, number], [number, number], [number, number]];

function segments(p: BezierPath): Seg[] {
  const out: Seg[] = [];
  const n = p.v.length;
  const last = p.closed ? n : n - 1;
  for (let k = 0; k < last; k++) {
    const a = p.v[k];
    const b = p.v[(k + 1) % n];
    out.push([a, [a[0] + p.o[k][0], a[1] + p.o[k][1]], [b[0] + p.i[(k + 1) % n][0], b[1] + p.i[(k + 1) % n][1]], b]);
  }
  return out;
}

/** Lengths along a segment at `steps` even parameter steps (cumulative; scalar maths: trims run every frame). */
function lengthTable(s: Seg, steps: number): Float64Array {
  const out = new Float64Array(steps + 1);
  let [px, py] = s[0];
  for (let k = 1; k <= steps; k++) {
    const t = k / steps;
    const u = 1 - t;
    const a = u * u * u;
    const b = 3 * u * u * t;
    const c = 3 * u * t * t;
    const d = t * t * t;
    const x = a * s[0][0] + b * s[1][0] + c * s[2][0] + d * s[3][0];
    const y = a * s[0][1] + b * s[1][1] + c * s[2][1] + d * s[3][1];
    out[k] = out[k - 1] + Math.hypot(x - px, y - py);
    px = x;
    py = y;
  }
  return out;
}

const STEPS = 32;

/** The part of a segment between parameters t0 and t1 (de Casteljau twice). */
function subSeg(s: Seg, t0: number, t1: number): Seg {
  const split = (q: Seg, t: number): [Seg, Seg] => {
    const l = (a: [number, number], b: [number, number]): [number, number] => [
      a[0] + (b[0] - a[0]) * t,
      a[1] + (b[1] - a[1]) * t,
    ];
    const ab = l(q[0], q[1]);
    const bc = l(q[1], q[2]);
    const cd = l(q[2], q[3]);
    const abc = l(ab, bc);
    const bcd = l(bc, cd);
    const m = l(abc, bcd);
    return [
      [q[0], ab, abc, m],
      [m, bcd, cd, q[3]],
    ];
  };
  const right = t0 > 0 ? split(s, t0)[1] : s;
  const t = t0 < 1 ? (t1 - t0) / (1 - t0) : 1;
  return t < 1 ? split(right, t)[0] : right;
}

/** Parameter at a fraction of a segment's length, from its length table. */
function paramAt(table: Float64Array, frac: number): number {
  if (frac <= 0) return 0;
  if (frac >= 1) return 1;
  const target = frac * table[STEPS];
  let k = 1;
  while (k < STEPS && table[k] < target) k++;
  const span = table[k] - table[k - 1];
  return (k - 1 + (span > 0 ? (target - table[k - 1]) / span : 0)) / STEPS;
}

function toPath(segs: Seg[]): BezierPath {
  const p: BezierPath = { closed: false, v: [], i: [], o: [] };
  segs.forEach((s, k) => {
    if (k === 0) {
      p.v.push(s[0]);
      p.i.push([0, 0]);
    }
    p.o[p.o.length] = [s[1][0] - s[0][0], s[1][1] - s[0][1]];
    p.v.push(s[3]);
    p.i.push([s[2][0] - s[3][0], s[2][1] - s[3][1]]);
  });
  if (p.v.length) p.o.push([0, 0]);
  return p;
}

/** The stretch [from, to] (lengths along the joined segments) of a segment list, as open paths. */
function cut(segs: Seg[], tables: Float64Array[], from: number, to: number): BezierPath[] {
  const out: Seg[] = [];
  let acc = 0;
  for (let k = 0; k < segs.length; k++) {
    const len = tables[k][STEPS];
    const a = acc;
    const b = acc + len;
    acc = b;
    if (b <= from || a >= to || len === 0) continue;
    const t0 = paramAt(tables[k], (Math.max(from, a) - a) / len);
    const t1 = paramAt(tables[k], (Math.min(to, b) - a) / len);
    out.push(subSeg(segs[k], t0, t1));
  }
  return out.length ? [toPath(out)] : [];
}

/**
 * Trim paths (start, end in percent; offset in degrees, 360 = a whole length), each path's kept pieces in the order
 * given. `individually` trims each path alone, else the paths count as one length in order. The kept part wraps
 * around the end when the offset pushes it past.
 */
export function trimPaths(
  paths: BezierPath[],
  start: number,
  end: number,
  offset: number,
  individually: boolean,
): BezierPath[][] {
  let s = Math.min(start, end) / 100;
  let e = Math.max(start, end) / 100;
  if (e - s >= 1) return paths.map((p) => [p]);
  if (e - s <= 0) return paths.map(() => []);
  const shift = offset / 360 - Math.floor(offset / 360);
  s += shift;
  e += shift;
  const pieces = (list: BezierPath[]): BezierPath[][] => {
    const parts = list.map((p) => {
      const segs = segments(p);
      const tables = segs.map((sg) => lengthTable(sg, STEPS));
      return { segs, tables, len: tables.reduce((a, t) => a + t[STEPS], 0) };
    });
    const total = parts.reduce((x, p) => x + p.len, 0);
    if (total === 0) return list.map(() => []);
    // each path cuts its own share of the kept lengths, so no piece joins two paths
    let at = 0;
    return parts.map(({ segs, tables, len }) => {
      const out: BezierPath[] = [];
      const keep = (from: number, to: number) => {
        const a = Math.max(from, at);
        const b = Math.min(to, at + len);
        if (b > a) out.push(...cut(segs, tables, a - at, b - at));
      };
      keep(s * total, Math.min(e, 1) * total);
      if (e > 1) keep(0, (e - 1) * total);
      at += len;
      return out;
    });
  };
  if (!individually) return pieces(paths);
  return paths.map((p) => pieces([p])[0]);
}
