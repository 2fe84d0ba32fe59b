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

// ------------------------------------------------------------------------------------------------------------
// Path operators of shape layers (pucker & bloat, round corners, zig zag, offset paths), as After Effects' manual
// describes them ("Shape attributes, paint operations, and path operations"); the constants are measured on After
// Effects' own renders (ae-renders' shape-modifiers projects).

type Pt = [number, number];
const add = (a: Pt, b: Pt): Pt => [a[0] + b[0], a[1] + b[1]];
const sub = (a: Pt, b: Pt): Pt => [a[0] - b[0], a[1] - b[1]];
const scale = (a: Pt, k: number): Pt => [a[0] * k, a[1] * k];
const zero = (h: Pt | undefined) => !h || (Math.abs(h[0]) < 1e-9 && Math.abs(h[1]) < 1e-9);

/**
 * Pucker & bloat: every vertex moves `amount` percent of the way to the path's centre (the mean of its vertices)
 * and every tangent's end as far the other way, so bloat (positive) pulls the corners in and bows the sides out, and
 * pucker (negative) pushes the corners out and the sides in.
 */
export function puckerBloat(p: BezierPath, amount: number): BezierPath {
  const n = p.v.length;
  if (!n || !amount) return p;
  const k = amount / 100;
  const c: Pt = [p.v.reduce((s, q) => s + q[0], 0) / n, p.v.reduce((s, q) => s + q[1], 0) / n];
  const v = p.v.map((q): Pt => add(q, scale(sub(c, q), k)));
  const handle = (j: number, h: Pt): Pt => {
    const end = add(p.v[j], h);
    return sub(sub(end, scale(sub(c, end), k)), v[j]);
  };
  return { closed: p.closed, v, i: p.i.map((h, j) => handle(j, h)), o: p.o.map((h, j) => handle(j, h)) };
}

/** Share of a rounded corner's cut its tangents reach towards the corner (a quarter circle's, 0.5519...). */
const ROUND = 0.5519;

/**
 * Round corners: each sharp vertex (no tangents) is cut at `radius` along both its sides (at most half of each side)
 * and the cut joined by a curve whose tangents reach towards the old corner.
 */
export function roundCorners(p: BezierPath, radius: number): BezierPath {
  const n = p.v.length;
  if (n < 2 || radius <= 0) return p;
  const out: BezierPath = { closed: p.closed, v: [], i: [], o: [] };
  const push = (v: Pt, i: Pt, o: Pt) => {
    out.v.push(v);
    out.i.push(i);
    out.o.push(o);
  };
  for (let j = 0; j < n; j++) {
    const v = p.v[j];
    const end = !p.closed && (j === 0 || j === n - 1);
    if (end || !zero(p.i[j]) || !zero(p.o[j])) {
      push(v, p.i[j], p.o[j]);
      continue;
    }
    const prev = p.v[(j - 1 + n) % n];
    const next = p.v[(j + 1) % n];
    const cut = (to: Pt): Pt => {
      const d = Math.hypot(to[0] - v[0], to[1] - v[1]);
      return d ? add(v, scale(sub(to, v), Math.min(d / 2, radius) / d)) : v;
    };
    const a = cut(prev);
    const b = cut(next);
    push(a, [0, 0], scale(sub(v, a), ROUND));
    push(b, scale(sub(v, b), ROUND), [0, 0]);
  }
  return out;
}

/** The point and unit direction of segment `s` at parameter t. */
function pointAt(s: Seg, t: number): { p: Pt; d: Pt } {
  const u = 1 - t;
  const p: Pt = [
    u * u * u * s[0][0] + 3 * u * u * t * s[1][0] + 3 * u * t * t * s[2][0] + t * t * t * s[3][0],
    u * u * u * s[0][1] + 3 * u * u * t * s[1][1] + 3 * u * t * t * s[2][1] + t * t * t * s[3][1],
  ];
  let d: Pt = [
    3 * u * u * (s[1][0] - s[0][0]) + 6 * u * t * (s[2][0] - s[1][0]) + 3 * t * t * (s[3][0] - s[2][0]),
    3 * u * u * (s[1][1] - s[0][1]) + 6 * u * t * (s[2][1] - s[1][1]) + 3 * t * t * (s[3][1] - s[2][1]),
  ];
  if (zero(d)) d = sub(s[3], s[0]);
  const l = Math.hypot(d[0], d[1]) || 1;
  return { p, d: [d[0] / l, d[1] / l] };
}

/**
 * Zig zag: `ridges` points evenly spread (by length) on each segment besides its vertices, each pushed `size` off
 * the path (crest to trough: twice the size, as lottie-web draws bodymovin's `s`), alternately to either side, the first vertex inwards on a clockwise path (a vertex along the
 * bisector of its corner); corner points are joined by straight lines, smooth points by curves along the path.
 * Measured: ae-renders' zig-zag (size 5 as bodymovin exports it, 5 ridges) within 0.5.
 */
export function zigZag(p: BezierPath, size: number, ridges: number, smooth: boolean): BezierPath {
  const segs = segments(p);
  if (!segs.length || !size) return p;
  const r = Math.max(0, Math.min(1000, Math.round(ridges)));
  const pts: { p: Pt; d: Pt }[] = [];
  segs.forEach((s, k) => {
    // the vertex this segment starts at: its direction is the mean of the sides meeting there
    const before = k > 0 ? pointAt(segs[k - 1], 1).d : p.closed ? pointAt(segs[segs.length - 1], 1).d : undefined;
    const after = pointAt(s, 0).d;
    const d = before ? add(before, after) : after;
    const l = Math.hypot(d[0], d[1]) || 1;
    pts.push({ p: s[0], d: [d[0] / l, d[1] / l] });
    const table = lengthTable(s, STEPS);
    for (let j = 1; j <= r; j++) pts.push(pointAt(s, paramAt(table, j / (r + 1))));
  });
  if (!p.closed) pts.push(pointAt(segs[segs.length - 1], 1));
  const spacing =
    pts.length > 1 ? segs.reduce((t, s) => t + Math.hypot(s[3][0] - s[0][0], s[3][1] - s[0][1]), 0) / pts.length : 0;
  const out: BezierPath = { closed: p.closed, v: [], i: [], o: [] };
  pts.forEach(({ p: q, d }, k) => {
    // normal to the right of the direction of travel (y down): inwards for a clockwise path
    const side = k % 2 === 0 ? 1 : -1;
    out.v.push([q[0] - d[1] * size * side, q[1] + d[0] * size * side]);
    const h = smooth ? scale(d, spacing / 2) : ([0, 0] as Pt);
    out.i.push(scale(h, -1));
    out.o.push(h);
  });
  return out;
}

/** A path flattened to points (curves in 16 steps), without its last vertex (a closed path's first). */
function polyline(p: BezierPath): Pt[] {
  const pts: Pt[] = [];
  for (const s of segments(p)) {
    pts.push(s[0]);
    if (zero(sub(s[1], s[0])) && zero(sub(s[2], s[3]))) continue;
    for (let j = 1; j < 16; j++) pts.push(pointAt(s, j / 16).p);
  }
  return pts;
}

/**
 * Offset paths: a closed path moved `amount` pixels outwards (inwards when negative) along its normals, its corners
 * joined as a stroke's are (miter up to `miterLimit` x the amount, else bevel; round; bevel). Curves are flattened.
 * An open path becomes the outline around it (a stroke of twice the amount, square ends).
 */
export function offsetPath(
  p: BezierPath,
  amount: number,
  join: 'miter' | 'round' | 'bevel',
  miterLimit: number,
): BezierPath {
  if (!amount || p.v.length < 2) return p;
  // an open path is offset as the outline around it: along it and back, its ends cut square
  const line = polyline(p);
  if (!p.closed) line.push(p.v[p.v.length - 1]);
  const pts = (p.closed ? line : [...line, ...line.slice(1, -1).reverse()]).filter(
    (q, k, a) => k === 0 || !zero(sub(q, a[k - 1])),
  );
  const n = pts.length;
  if (n < 2) return p;
  let area = 0;
  for (let k = 0; k < n; k++) area += pts[k][0] * pts[(k + 1) % n][1] - pts[(k + 1) % n][0] * pts[k][1];
  // outward normal of an edge: to the left of travel for a clockwise path (y down: positive area)
  const sign = area > 0 || !p.closed ? -1 : 1;
  const normal = (a: Pt, b: Pt): Pt => {
    const d = sub(b, a);
    const l = Math.hypot(d[0], d[1]) || 1;
    return [(-d[1] / l) * sign, (d[0] / l) * sign];
  };
  const out: Pt[] = [];
  for (let k = 0; k < n; k++) {
    const prev = pts[(k - 1 + n) % n];
    const q = pts[k];
    const next = pts[(k + 1) % n];
    const n0 = normal(prev, q);
    const n1 = normal(q, next);
    const a = add(q, scale(n0, amount));
    const b = add(q, scale(n1, amount));
    const cross = n0[0] * n1[1] - n0[1] * n1[0];
    const dot = n0[0] * n1[0] + n0[1] * n1[1];
    // the offset lines part (a corner on the outside of the offset) when the turn goes the amount's way
    const outside = -cross * sign * amount > 1e-12;
    const half = Math.acos(Math.max(-1, Math.min(1, dot))) / 2;
    const m =
      Math.cos(half) > 1e-9
        ? add(q, scale(scale(add(n0, n1), 1 / Math.hypot(...add(n0, n1)) || 0), amount / Math.cos(half)))
        : a;
    const arc = (sweep: number) => {
      const a0 = Math.atan2(n0[1], n0[0]);
      const steps = Math.max(2, Math.ceil(Math.abs(sweep) / (Math.PI / 16)));
      for (let j = 0; j <= steps; j++) {
        const t = a0 + (sweep * j) / steps;
        out.push(add(q, [Math.cos(t) * amount, Math.sin(t) * amount]));
      }
    };
    if (dot < -0.9999) {
      // a U-turn (an open path's end): cut square, or a half circle round the end, away from where the path came from
      const mid = Math.atan2(n0[1], n0[0]) + Math.PI / 2;
      const away = sub(q, prev);
      if (join === 'round') arc((Math.cos(mid) * away[0] + Math.sin(mid) * away[1]) * amount >= 0 ? Math.PI : -Math.PI);
      else out.push(a, b);
    } else if (!outside || dot > 0.9999) out.push(m);
    else if (join === 'miter' && 1 / Math.cos(half) <= miterLimit) out.push(m);
    else if (join === 'round') {
      let sweep = Math.atan2(n1[1], n1[0]) - Math.atan2(n0[1], n0[0]);
      if (sweep > Math.PI) sweep -= 2 * Math.PI;
      if (sweep < -Math.PI) sweep += 2 * Math.PI;
      arc(sweep);
    } else out.push(a, b);
  }
  return { closed: true, v: out, i: out.map(() => [0, 0]), o: out.map(() => [0, 0]) };
}

/** The farthest any point of the paths lies from `c` (curves sampled in 16 steps): where a twist stops turning. */
export function twistRadius(paths: BezierPath[], c: Pt): number {
  let r = 0;
  for (const p of paths) {
    for (const q of p.v) r = Math.max(r, Math.hypot(q[0] - c[0], q[1] - c[1]));
    for (const s of segments(p))
      for (let j = 1; j < 16; j++) {
        const q = pointAt(s, j / 16).p;
        r = Math.max(r, Math.hypot(q[0] - c[0], q[1] - c[1]));
      }
  }
  return r;
}

/**
 * Twist: every point turns about `center` by `angle` degrees (positive clockwise on screen, y down) times
 * 1 - d / radius, its distance d to the centre over the farthest distance: the full angle at the centre, none at the
 * edge ("rotates a path more sharply in the center than at the edges", After Effects' manual; the linear falloff is
 * this project's choice, After Effects does not publish its own). Each segment is cut in pieces short enough that
 * the angle changes by at most 3 degrees along one, so a straight side bends; a piece's handles are turned by the
 * map's derivative at its ends.
 */
export function twist(p: BezierPath, angle: number, center: Pt, radius: number): BezierPath {
  const a = (angle * Math.PI) / 180;
  if (!a || !(radius > 0) || p.v.length < 1) return p;
  const turn = (q: Pt) => {
    const d = sub(q, center);
    const r = Math.hypot(d[0], d[1]);
    const th = a * Math.max(0, 1 - r / radius);
    return { d, r, th, cos: Math.cos(th), sin: Math.sin(th) };
  };
  const move = (q: Pt): Pt => {
    const { d, cos, sin } = turn(q);
    return add(center, [d[0] * cos - d[1] * sin, d[0] * sin + d[1] * cos]);
  };
  // the map's derivative applied to a handle h at q: the rotation of h, plus the turn's change along h
  const handle = (q: Pt, h: Pt): Pt => {
    const { d, r, cos, sin } = turn(q);
    const rot: Pt = [h[0] * cos - h[1] * sin, h[0] * sin + h[1] * cos];
    if (r === 0 || r >= radius) return rot;
    const dth = ((-a / radius) * (d[0] * h[0] + d[1] * h[1])) / r;
    const rd: Pt = [d[0] * cos - d[1] * sin, d[0] * sin + d[1] * cos];
    return add(rot, [-rd[1] * dth, rd[0] * dth]);
  };
  const step = (3 * Math.PI) / 180;
  const pieces: Seg[] = [];
  for (const s of segments(p)) {
    const span = Math.hypot(...sub(s[1], s[0])) + Math.hypot(...sub(s[2], s[1])) + Math.hypot(...sub(s[3], s[2]));
    const n = Math.min(64, Math.max(1, Math.ceil((Math.abs(a) * span) / radius / step)));
    for (let k = 0; k < n; k++) pieces.push(n === 1 ? s : subSeg(s, k / n, (k + 1) / n));
  }
  if (!pieces.length) return { closed: p.closed, v: [move(p.v[0])], i: [p.i[0]], o: [p.o[0]] };
  const out: BezierPath = { closed: p.closed, v: [], i: [], o: [] };
  pieces.forEach((s, k) => {
    // a piece starts where the one before ends: its start vertex takes the previous piece's in handle
    const prev = k > 0 ? pieces[k - 1] : p.closed ? pieces[pieces.length - 1] : undefined;
    out.v.push(move(s[0]));
    out.i.push(prev ? handle(s[0], sub(prev[2], prev[3])) : handle(s[0], p.i[0]));
    out.o.push(handle(s[0], sub(s[1], s[0])));
  });
  if (!p.closed) {
    const last = pieces[pieces.length - 1];
    const n = p.v.length - 1;
    out.v.push(move(last[3]));
    out.i.push(handle(last[3], sub(last[2], last[3])));
    out.o.push(handle(last[3], p.o[n]));
  }
  return out;
}
