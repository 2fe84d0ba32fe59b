import type { BezierPath, Ease, Keyframe, NumProperty, Property } from '../scene/model.js';
import { influences } from '../scene/sample.js';

/**
 * After Effects keyframes as Lottie animated properties, the way bodymovin writes them. After Effects keeps a temporal
 * ease as a speed (units per second) and an influence (share of the segment) on each side of a key; Lottie keeps the
 * normalised cubic bezier of the segment (x: time share, y: value share). The two are the same curve:
 *   out handle = (influence_out, speed_out x influence_out x duration / change)
 *   in handle  = (1 - influence_in, 1 - speed_in x influence_in x duration / change)
 * with the influences scaled down together when they pass 100 % (as sample.ts does). Spatial properties (and
 * colours, which have one ease) move by distance: `change` is the arc length of the motion path, one ease for all
 * dimensions, and the path's tangents go in `to`/`ti`. Hold keys are `h: 1`.
 */

/** A Lottie animatable value: static `{a: 0, k}` or keyframed `{a: 1, k: [...]}` (plus `x`, an expression kept). */
export interface LottieValue {
  a: 0 | 1;
  k: unknown;
  ix?: number;
  x?: string;
}

export interface LottieKey {
  t: number;
  s: unknown;
  h?: 1;
  i?: { x: number | number[]; y: number | number[] };
  o?: { x: number | number[]; y: number | number[] };
  to?: number[];
  ti?: number[];
}

/** Where a property's key times are: its layer's start and stretch, and the root composition's frame rate. */
export interface TimeBase {
  startTime: number;
  stretch: number;
  fps: number;
}

/** Three decimals, as bodymovin rounds (a thousandth of a pixel, degree or percent). */
export const round = (x: number, places = 1000) => Math.round(x * places) / places;
const roundAll = (v: number[]) => v.map((x) => round(x));

/** Composition frame of a key at layer time `t` (Lottie keys are in frames of the composition the layer is in). */
export const keyFrame = (base: TimeBase, t: number) => round((base.startTime + t * base.stretch) * base.fps);

/** The normalised handles of one dimension's (or the path's) segment. */
function handles(
  out: Ease | undefined,
  inn: Ease | undefined,
  dt: number,
  change: number,
): { ox: number; oy: number; ix: number; iy: number } {
  const [a, b] = influences(out, inn);
  // a segment that does not change has no value share to scale: After Effects' overshoot there cannot be written
  if (Math.abs(change) < 1e-9) return { ox: round(a), oy: round(a), ix: round(1 - b), iy: round(1 - b) };
  return {
    ox: round(a),
    oy: round(((out?.speed ?? 0) * a * dt) / change),
    ix: round(1 - b),
    iy: round(1 - ((inn?.speed ?? 0) * b * dt) / change),
  };
}

const cubic = (a: number, b: number, c: number, d: number, s: number) => {
  const u = 1 - s;
  return u * u * u * a + 3 * u * u * s * b + 3 * u * s * s * c + s * s * s * d;
};

/** Arc length of the spatial segment from k0 to k1 (the motion path's cubic bezier), as sample.ts measures it. */
function pathLength(k0: Keyframe<number[]>, k1: Keyframe<number[]>): number {
  const p0 = k0.value;
  const p3 = k1.value;
  const p1 = p0.map((v, d) => v + (k0.outTangent?.[d] ?? 0));
  const p2 = p3.map((v, d) => v + (k1.inTangent?.[d] ?? 0));
  let length = 0;
  let prev = p0;
  for (let i = 1; i <= 200; i++) {
    const pt = p0.map((_, d) => cubic(p0[d], p1[d], p2[d], p3[d], i / 200));
    length += Math.hypot(...pt.map((v, d) => v - prev[d]));
    prev = pt;
  }
  return length;
}

/**
 * Keys in the order the composition meets them. A layer played backwards (negative stretch) meets its last key first:
 * the list is reversed and each key's two sides change places (eases, interpolations, spatial tangents); a held
 * segment stays held, from its earlier end in composition time (After Effects holds the other end's value there:
 * listed by the writer as `time-stretch`).
 */
export function inCompOrder<V>(keys: Keyframe<V>[], base: TimeBase): Keyframe<V>[] {
  if (base.stretch >= 0) return keys;
  const n = keys.length;
  return keys.map((_, j) => {
    const k = keys[n - 1 - j];
    // the segment after this key in composition time is the one before it in layer time
    const before = keys[n - 2 - j];
    const key: Keyframe<V> = {
      time: k.time,
      value: k.value,
      inInterpolation: k.outInterpolation === 'hold' ? 'linear' : k.outInterpolation,
      outInterpolation: before?.outInterpolation === 'hold' ? 'hold' : k.inInterpolation,
    };
    if (k.outEase) key.inEase = k.outEase;
    if (k.inEase) key.outEase = k.inEase;
    if (k.outTangent) key.inTangent = k.outTangent;
    if (k.inTangent) key.outTangent = k.inTangent;
    return key;
  });
}

const LINEAR_OUT = 1 / 6;
const LINEAR_IN = 5 / 6;

/**
 * A numeric property as a Lottie value. `map` turns a value into what Lottie stores (a scalar's `[v]` → `v` for static
 * values; percent stays percent), `scalar` writes one number.
 */
export function numValue(p: NumProperty, base: TimeBase, opts: { scalar?: boolean; dims?: number } = {}): LottieValue {
  const shape = (v: number[]): number[] => {
    const out = roundAll(opts.dims ? v.slice(0, opts.dims) : v);
    while (opts.dims && out.length < opts.dims) out.push(0);
    return out;
  };
  const keys = p.keyframes && inCompOrder(p.keyframes, base);
  if (!keys || keys.length < 2) {
    const v = shape(keys?.[0]?.value ?? p.value);
    return { a: 0, k: opts.scalar ? v[0] : v };
  }
  const out: LottieKey[] = [];
  for (let n = 0; n < keys.length; n++) {
    const k0 = keys[n];
    const key: LottieKey = { t: keyFrame(base, k0.time), s: shape(k0.value) };
    if (opts.scalar) key.s = [(key.s as number[])[0]];
    out.push(key);
    const k1 = keys[n + 1];
    if (!k1) break;
    if (k0.outInterpolation === 'hold') {
      key.h = 1;
      continue;
    }
    const dt = k1.time - k0.time;
    const linear = k0.outInterpolation === 'linear' && k1.inInterpolation === 'linear';
    const v0 = k0.value;
    const v1 = k1.value;
    const single = (k0.outEase?.length ?? 0) <= 1 && v0.length > 1;
    if (p.spatial || single) {
      const curved = p.spatial && ![k0.outTangent, k1.inTangent].every((t) => !t || t.every((x) => Math.abs(x) < 1e-9));
      const change = curved ? pathLength(k0, k1) : Math.hypot(...v0.map((v, d) => v1[d] - v));
      const h = linear
        ? { ox: round(LINEAR_OUT), oy: round(LINEAR_OUT), ix: round(LINEAR_IN), iy: round(LINEAR_IN) }
        : handles(k0.outEase?.[0], k1.inEase?.[0], dt, change);
      if (p.spatial) {
        key.o = { x: h.ox, y: h.oy };
        key.i = { x: h.ix, y: h.iy };
        key.to = shape(k0.outTangent ?? v0.map(() => 0));
        key.ti = shape(k1.inTangent ?? v0.map(() => 0));
      } else {
        key.o = { x: [h.ox], y: [h.oy] };
        key.i = { x: [h.ix], y: [h.iy] };
      }
      continue;
    }
    const dims = opts.scalar ? 1 : (shape(v0) as number[]).length;
    const o = { x: [] as number[], y: [] as number[] };
    const i = { x: [] as number[], y: [] as number[] };
    for (let d = 0; d < dims; d++) {
      const h = linear
        ? { ox: round(LINEAR_OUT), oy: round(LINEAR_OUT), ix: round(LINEAR_IN), iy: round(LINEAR_IN) }
        : handles(
            k0.outEase?.[d] ?? k0.outEase?.[0],
            k1.inEase?.[d] ?? k1.inEase?.[0],
            dt,
            (v1[d] ?? 0) - (v0[d] ?? 0),
          );
      o.x.push(h.ox);
      o.y.push(h.oy);
      i.x.push(h.ix);
      i.y.push(h.iy);
    }
    key.o = o;
    key.i = i;
  }
  return { a: 1, k: out };
}

/**
 * A property whose value is not numeric (paths, gradient stops) as a Lottie value: keys with the eases' influences and
 * zero speed (what sample.ts draws for them), `write` giving what Lottie stores for each value (`wrap`: in a list, as
 * shape keys are).
 */
export function otherValue<V>(p: Property<V>, base: TimeBase, write: (v: V) => unknown, wrap = false): LottieValue {
  const keys = p.keyframes && inCompOrder(p.keyframes, base);
  if (!keys || keys.length < 2) return { a: 0, k: write(keys?.[0]?.value ?? p.value) };
  const values = keys.map((k) => write(k.value));
  // keys that all hold one value are that value (lottie-web cannot interpolate shape keys without vertices)
  const first = JSON.stringify(values[0]);
  if (values.every((v) => JSON.stringify(v) === first)) return { a: 0, k: values[0] };
  const out: LottieKey[] = [];
  for (let n = 0; n < keys.length; n++) {
    const k0 = keys[n];
    // a shape key's value is a list of one path
    const key: LottieKey = { t: keyFrame(base, k0.time), s: wrap ? [values[n]] : values[n] };
    out.push(key);
    const k1 = keys[n + 1];
    if (!k1) break;
    if (k0.outInterpolation === 'hold') {
      key.h = 1;
      continue;
    }
    if (k0.outInterpolation === 'linear' && k1.inInterpolation === 'linear') {
      key.o = { x: round(LINEAR_OUT), y: round(LINEAR_OUT) };
      key.i = { x: round(LINEAR_IN), y: round(LINEAR_IN) };
      continue;
    }
    const [a, b] = influences(k0.outEase?.[0], k1.inEase?.[0]);
    key.o = { x: round(a), y: 0 };
    key.i = { x: round(1 - b), y: 1 };
  }
  return { a: 1, k: out };
}

/**
 * A path property without its keys that have no vertices, when others have some: lottie-web reads the first vertex of
 * every shape key it interpolates and throws on an empty one (After Effects draws nothing there). `dropped` counts them.
 */
export function withoutEmptyPathKeys(p: Property<BezierPath>): { path: Property<BezierPath>; dropped: number } {
  const keys = p.keyframes;
  if (!keys?.some((k) => !k.value.v.length) || keys.every((k) => !k.value.v.length)) return { path: p, dropped: 0 };
  const kept = keys.filter((k) => k.value.v.length);
  return { path: { ...p, keyframes: kept, value: kept[0].value }, dropped: keys.length - kept.length };
}

/** Values sampled at every frame (a baked expression) as linear keys; runs of equal values keep their ends only. */
export function bakedValue(frames: { t: number; v: number[] }[], scalar: boolean): LottieValue {
  const same = (a: number[], b: number[]) => a.length === b.length && a.every((x, j) => x === b[j]);
  const vals = frames.map((f) => ({ t: round(f.t), v: roundAll(f.v) }));
  if (vals.every((f) => same(f.v, vals[0].v))) return { a: 0, k: scalar ? vals[0].v[0] : vals[0].v };
  const kept = vals.filter(
    (f, j) => j === 0 || j === vals.length - 1 || !same(f.v, vals[j - 1].v) || !same(f.v, vals[j + 1].v),
  );
  const dims = scalar ? 1 : vals[0].v.length;
  const lin = (x: number) => Array.from({ length: dims }, () => x);
  return {
    a: 1,
    k: kept.map((f, j) => {
      const key: LottieKey = { t: f.t, s: scalar ? [f.v[0]] : f.v };
      if (j < kept.length - 1) {
        key.o = { x: lin(0), y: lin(0) };
        key.i = { x: lin(1), y: lin(1) };
      }
      return key;
    }),
  };
}
