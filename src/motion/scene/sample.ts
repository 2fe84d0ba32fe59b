import type { BezierPath, Ease, GradientStops, Keyframe, NumProperty, Property } from './model.js';

/**
 * Samples properties at a layer time with After Effects' keyframe interpolation. At a key's time the key's value is
 * returned exactly; between keys:
 * - hold (the left key's out side): the left value;
 * - linear on both sides: a straight blend (along the motion path for a spatial property);
 * - otherwise the temporal ease: each dimension's value follows the cubic bezier in (time, value) whose handles leave
 *   the left key at its out speed over its out influence and reach the right key at its in speed over its in
 *   influence (After Effects' speed graph). A spatial property (and a colour, which has one ease) moves along its
 *   path by distance: the same curve in (time, distance) with the path's arc length, then the point at that distance
 *   on the path's cubic bezier (tangents from the file).
 * Nothing here allocates per call beyond the result, and path lengths are cached per key, so a frame costs little.
 */

/** Cubic bezier 1D with end points a, d and handles b, c at parameter s. */
const cubic = (a: number, b: number, c: number, d: number, s: number) => {
  const u = 1 - s;
  return u * u * u * a + 3 * u * u * s * b + 3 * u * s * s * c + s * s * s * d;
};

/** The parameter s in [0, 1] where the monotonic cubic x(s) (x0 = 0, x3 = 1) reaches x: Newton, then bisection. */
function solveX(x1: number, x2: number, x: number): number {
  let s = x;
  for (let i = 0; i < 8; i++) {
    const f = cubic(0, x1, x2, 1, s) - x;
    if (Math.abs(f) < 1e-12) return s;
    const u = 1 - s;
    const d = 3 * u * u * x1 + 6 * u * s * (x2 - x1) + 3 * s * s * (1 - x2);
    if (Math.abs(d) < 1e-9) break;
    const next = s - f / d;
    if (next < 0 || next > 1) break;
    s = next;
  }
  let lo = 0;
  let hi = 1;
  s = x;
  for (let i = 0; i < 60; i++) {
    const f = cubic(0, x1, x2, 1, s);
    if (Math.abs(f - x) < 1e-12) break;
    if (f < x) lo = s;
    else hi = s;
    s = (lo + hi) / 2;
  }
  return s;
}

/** Influences as fractions; After Effects scales them down when the two sides overlap. */
export function influences(out: Ease | undefined, inn: Ease | undefined): [number, number] {
  let a = Math.min(1, Math.max(0, out?.influence ?? 1 / 6));
  let b = Math.min(1, Math.max(0, inn?.influence ?? 1 / 6));
  if (a + b > 1) {
    const k = 1 / (a + b);
    a *= k;
    b *= k;
  }
  return [a, b];
}

/**
 * The eased quantity at fraction x of a segment of duration dt that goes from 0 to `delta`: the curve leaves 0 with
 * speed `out.speed` and reaches `delta` with speed `in.speed` (units per second).
 */
export function easedDelta(out: Ease | undefined, inn: Ease | undefined, dt: number, delta: number, x: number): number {
  const [a, b] = influences(out, inn);
  const s = solveX(a, 1 - b, x);
  return cubic(0, (out?.speed ?? 0) * a * dt, delta - (inn?.speed ?? 0) * b * dt, delta, s);
}

function segmentIndex<V>(keys: Keyframe<V>[], t: number): number {
  // the last key whose time is <= t (keys are few: a binary search keeps long animations cheap)
  let lo = 0;
  let hi = keys.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (keys[mid].time <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

const isZero = (v: number[] | undefined) => !v || v.every((x) => Math.abs(x) < 1e-9);

interface PathTable {
  /** Cumulative arc length at N+1 evenly spaced parameters. */
  lengths: Float64Array;
  p0: number[];
  p1: number[];
  p2: number[];
  p3: number[];
}

const TABLE_STEPS = 200;
const tables = new WeakMap<Keyframe<number[]>, PathTable>();

function pathTable(k0: Keyframe<number[]>, k1: Keyframe<number[]>): PathTable {
  let t = tables.get(k0);
  if (t && t.p3 === k1.value) return t;
  const p0 = k0.value;
  const p3 = k1.value;
  const p1 = p0.map((v, d) => v + (k0.outTangent?.[d] ?? 0));
  const p2 = p3.map((v, d) => v + (k1.inTangent?.[d] ?? 0));
  const lengths = new Float64Array(TABLE_STEPS + 1);
  let prev = p0;
  for (let i = 1; i <= TABLE_STEPS; i++) {
    const s = i / TABLE_STEPS;
    const pt = p0.map((_, d) => cubic(p0[d], p1[d], p2[d], p3[d], s));
    lengths[i] = lengths[i - 1] + Math.hypot(...pt.map((v, d) => v - prev[d]));
    prev = pt;
  }
  t = { lengths, p0, p1, p2, p3 };
  tables.set(k0, t);
  return t;
}

/** The point at arc length `dist` along the segment's spatial bezier. */
function pointAtLength(t: PathTable, dist: number): number[] {
  const total = t.lengths[TABLE_STEPS];
  const L = Math.min(total, Math.max(0, dist));
  let lo = 0;
  let hi = TABLE_STEPS;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (t.lengths[mid] <= L) lo = mid;
    else hi = mid;
  }
  const span = t.lengths[hi] - t.lengths[lo];
  const s = (lo + (span > 0 ? (L - t.lengths[lo]) / span : 0)) / TABLE_STEPS;
  return t.p0.map((_, d) => cubic(t.p0[d], t.p1[d], t.p2[d], t.p3[d], s));
}

/** A numeric property's value at layer time `t`. */
export function sampleNum(p: NumProperty, t: number): number[] {
  const keys = p.keyframes;
  if (!keys || keys.length === 0) return p.value;
  if (t <= keys[0].time) return keys[0].value;
  const last = keys[keys.length - 1];
  if (t >= last.time) return last.value;
  const i = segmentIndex(keys, t);
  const k0 = keys[i];
  const k1 = keys[i + 1];
  if (t === k0.time) return k0.value;
  if (k0.outInterpolation === 'hold') return k0.value;
  const dt = k1.time - k0.time;
  const x = (t - k0.time) / dt;
  const linear = k0.outInterpolation === 'linear' && k1.inInterpolation === 'linear';
  const v0 = k0.value;
  const v1 = k1.value;
  const single = (k0.outEase?.length ?? 0) <= 1 && v0.length > 1;
  if (p.spatial || single) {
    // motion along a path (or a colour) by distance, with one ease
    const curved = p.spatial && !(isZero(k0.outTangent) && isZero(k1.inTangent));
    const table = curved ? pathTable(k0, k1) : undefined;
    const total = table ? table.lengths[TABLE_STEPS] : Math.hypot(...v0.map((v, d) => v1[d] - v));
    if (total === 0) return v0;
    const dist = linear ? total * x : easedDelta(k0.outEase?.[0], k1.inEase?.[0], dt, total, x);
    if (table) return pointAtLength(table, dist);
    const f = dist / total;
    return v0.map((v, d) => v + (v1[d] - v) * f);
  }
  if (linear) return v0.map((v, d) => v + (v1[d] - v) * x);
  return v0.map(
    (v, d) => v + easedDelta(k0.outEase?.[d] ?? k0.outEase?.[0], k1.inEase?.[d] ?? k1.inEase?.[0], dt, v1[d] - v, x),
  );
}

/** Eased progress 0..1 between two keys of a value without a numeric speed (paths, gradients). */
function progress<V>(k0: Keyframe<V>, k1: Keyframe<V>, x: number): number {
  if (k0.outInterpolation === 'linear' && k1.inInterpolation === 'linear') return x;
  // speeds of shape keys are not in a unit this model knows: the ease keeps its influences with zero speed (Easy Ease)
  const [a, b] = influences(k0.outEase?.[0], k1.inEase?.[0]);
  return cubic(0, 0, 1, 1, solveX(a, 1 - b, x));
}

/** The keys around `t` and the eased progress between them, or the single value to use. */
function around<V>(p: Property<V>, t: number): { v: V } | { k0: Keyframe<V>; k1: Keyframe<V>; f: number } {
  const keys = p.keyframes;
  if (!keys || keys.length === 0) return { v: p.value };
  if (t <= keys[0].time) return { v: keys[0].value };
  const last = keys[keys.length - 1];
  if (t >= last.time) return { v: last.value };
  const i = segmentIndex(keys, t);
  const k0 = keys[i];
  const k1 = keys[i + 1];
  if (t === k0.time || k0.outInterpolation === 'hold') return { v: k0.value };
  return { k0, k1, f: progress(k0, k1, (t - k0.time) / (k1.time - k0.time)) };
}

const lerp2 = (a: [number, number], b: [number, number], f: number): [number, number] => [
  a[0] + (b[0] - a[0]) * f,
  a[1] + (b[1] - a[1]) * f,
];

/** A path's shape at `t`: vertex by vertex between keys with the same vertex count, else held. */
export function samplePath(p: Property<BezierPath>, t: number): BezierPath {
  const r = around(p, t);
  if ('v' in r) return r.v;
  const { k0, k1, f } = r;
  const a = k0.value;
  const b = k1.value;
  if (a.v.length !== b.v.length) return a;
  return {
    closed: a.closed,
    v: a.v.map((v, j) => lerp2(v, b.v[j], f)),
    i: a.i.map((v, j) => lerp2(v, b.i[j], f)),
    o: a.o.map((v, j) => lerp2(v, b.o[j], f)),
  };
}

/** Gradient stops at `t`: stop by stop when the counts match, else held. */
export function sampleStops(p: Property<GradientStops>, t: number): GradientStops {
  const r = around(p, t);
  if ('v' in r) return r.v;
  const { k0, k1, f } = r;
  const a = k0.value;
  const b = k1.value;
  if (a.colors.length !== b.colors.length || a.opacities.length !== b.opacities.length) return a;
  const mix = <T extends number[]>(x: T, y: T) => x.map((v, j) => v + (y[j] - v) * f) as T;
  const out: GradientStops = {
    colors: a.colors.map((c, j) => mix(c, b.colors[j])),
    opacities: a.opacities.map((o, j) => mix(o, b.opacities[j])),
  };
  const half = (n: number) => Array.from({ length: n }, () => 0.5);
  if (a.colorMidpoints || b.colorMidpoints)
    out.colorMidpoints = mix(a.colorMidpoints ?? half(a.colors.length), b.colorMidpoints ?? half(a.colors.length));
  if (a.opacityMidpoints || b.opacityMidpoints)
    out.opacityMidpoints = mix(
      a.opacityMidpoints ?? half(a.opacities.length),
      b.opacityMidpoints ?? half(a.opacities.length),
    );
  return out;
}

/** Any property whose keys hold (text documents): the value of the last key at or before `t`. */
export function sampleHeld<V>(p: Property<V>, t: number): V {
  const keys = p.keyframes;
  if (!keys || keys.length === 0 || t < keys[0].time) return keys?.[0]?.value ?? p.value;
  return keys[segmentIndex(keys, t)].value;
}
