/** Easings a key may carry; the easing of a key shapes the segment that starts at it (as in CSS keyframes). */
export const EASINGS = ['Linear', 'Smooth', 'EaseIn', 'EaseOut', 'Hold'] as const;
export type Easing = (typeof EASINGS)[number];

/** Properties that keyframes animate, with the value they have when an item sets nothing. */
export const ANIMATABLE = ['scale', 'zoom', 'panX', 'panY', 'opacity', 'rotation'] as const;
export type Property = (typeof ANIMATABLE)[number];

export interface CurveKey {
  /** Seconds from the item's start. */
  t: number;
  v: number;
  easing: Easing;
}

/** A property over an item's time: constant `base` when there are no keys. */
export interface Curve {
  base: number;
  keys: CurveKey[];
}

export const constant = (v: number): Curve => ({ base: v, keys: [] });
export const isAnimated = (c: Curve): boolean => c.keys.length > 1 && c.keys.some((k) => k.v !== c.keys[0].v);

/** Eased progress 0..1 for a linear progress u in 0..1. */
export function ease(easing: Easing, u: number): number {
  switch (easing) {
    case 'Linear':
      return u;
    case 'Smooth':
      return u * u * (3 - 2 * u);
    case 'EaseIn':
      return u * u;
    case 'EaseOut':
      return u * (2 - u);
    case 'Hold':
      return 0;
  }
}

/** The curve's value at item time t (seconds): before the first key its value, after the last key its value. */
export function valueAt(curve: Curve, t: number): number {
  const keys = curve.keys;
  if (keys.length === 0) return curve.base;
  if (t <= keys[0].t) return keys[0].v;
  for (let i = 0; i < keys.length - 1; i++) {
    const a = keys[i];
    const b = keys[i + 1];
    if (t < b.t) return a.v + (b.v - a.v) * ease(a.easing, (t - a.t) / (b.t - a.t));
  }
  return keys[keys.length - 1].v;
}

/** A number literal for an ffmpeg expression: fixed notation, negatives parenthesised. */
export function num(n: number): string {
  const s = String(Number(n.toFixed(6)));
  return n < 0 ? `(${s})` : s;
}

function easedExpr(easing: Easing, u: string): string {
  switch (easing) {
    case 'Linear':
      return u;
    case 'Smooth':
      return `${u}*${u}*(3-2*${u})`;
    case 'EaseIn':
      return `${u}*${u}`;
    case 'EaseOut':
      return `${u}*(2-${u})`;
    case 'Hold':
      return '0';
  }
}

/**
 * The curve as an ffmpeg expression of the time expression `t` (item seconds): nested `if(lt(t,key), ...)` over
 * the segments, the same function as valueAt. Works in every ffmpeg expression evaluator since 2014.
 */
export function curveExpr(curve: Curve, t: string): string {
  const keys = curve.keys;
  if (!isAnimated(curve)) return num(keys.length ? keys[0].v : curve.base);
  let expr = num(keys[keys.length - 1].v);
  for (let i = keys.length - 2; i >= 0; i--) {
    const a = keys[i];
    const b = keys[i + 1];
    if (b.t <= a.t) continue;
    const u = `(((${t})-${num(a.t)})/${num(b.t - a.t)})`;
    const segment =
      a.v === b.v || a.easing === 'Hold' ? num(a.v) : `(${num(a.v)}+${num(b.v - a.v)}*(${easedExpr(a.easing, u)}))`;
    expr = `if(lt(${t},${num(b.t)}),${segment},${expr})`;
  }
  return `if(lt(${t},${num(keys[0].t)}),${num(keys[0].v)},${expr})`;
}

/** Largest and smallest value a curve takes (eased segments stay between their two keys). */
export function range(curve: Curve): [number, number] {
  const values = curve.keys.length ? curve.keys.map((k) => k.v) : [curve.base];
  return [Math.min(...values), Math.max(...values)];
}
