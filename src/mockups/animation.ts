import { valueAt, type Curve, type CurveKey } from '../timeline/curves.js';
import type { BackgroundT, DofT, KeyframeT, ProjectStateT, TransformT } from './schemas.js';

/** Everything keyframes animate, resolved at one time. */
export interface SceneState {
  transform: TransformT;
  dof: DofT;
  background: BackgroundT;
}

type Rgba = [number, number, number, number];

export function parseColor(hex: string): Rgba {
  const h = hex.slice(1);
  const byte = (i: number) => parseInt(h.slice(i, i + 2), 16);
  return [byte(0), byte(2), byte(4), h.length === 8 ? byte(6) : 255];
}

export function formatColor([r, g, b, a]: Rgba): string {
  const hex = (v: number) =>
    Math.round(Math.min(255, Math.max(0, v)))
      .toString(16)
      .padStart(2, '0');
  return `#${hex(r)}${hex(g)}${hex(b)}${a >= 255 ? '' : hex(a)}`;
}

/** Keys (sorted by time, stable) of the keyframes that set the value `pick` finds. */
function keysOf<V>(
  keyframes: KeyframeT[],
  pick: (k: KeyframeT) => V | undefined,
): { t: number; v: V; easing: CurveKey['easing'] }[] {
  const out: { t: number; v: V; easing: CurveKey['easing'] }[] = [];
  for (const k of keyframes) {
    const v = pick(k);
    if (v !== undefined) out.push({ t: k.time, v, easing: k.easing });
  }
  return out;
}

/**
 * One animated value: with no key it is the project's own value; with keys it follows the timeline's curves (the
 * first key's value before it, the last key's after it, eased per segment by the easing of the key starting it).
 */
function numberAt(keyframes: KeyframeT[], base: number, pick: (k: KeyframeT) => number | undefined, t: number): number {
  const curve: Curve = { base, keys: keysOf(keyframes, pick) };
  return valueAt(curve, t);
}

/** A value that cannot be blended (a mode, a boolean, a url) switches at the key that sets it. */
function stepAt<V>(keyframes: KeyframeT[], base: V, pick: (k: KeyframeT) => V | undefined, t: number): V {
  const keys = keysOf(keyframes, pick);
  if (keys.length === 0) return base;
  let v = keys[0].v;
  for (const k of keys) if (k.t <= t) v = k.v;
  return v;
}

function colorAt(
  keyframes: KeyframeT[],
  base: string | undefined,
  pick: (k: KeyframeT) => string | undefined,
  t: number,
): string | undefined {
  const keys = keysOf(keyframes, pick);
  if (keys.length === 0) return base;
  const channels = [0, 1, 2, 3].map((c) =>
    valueAt({ base: 0, keys: keys.map((k) => ({ t: k.t, easing: k.easing, v: parseColor(k.v)[c] })) }, t),
  );
  return formatColor(channels as Rgba);
}

/** CSS's own default for linear-gradient: top to bottom. */
export const DEFAULT_ANGLE = 180;

const AXES = ['x', 'y', 'z'] as const;
const TRANSFORM_PARTS = ['position', 'rotation', 'scale'] as const;

/** The project's animated state at `t` seconds. Keys are sorted by time here; the saved order is the client's. */
export function stateAt(project: ProjectStateT, t: number): SceneState {
  const kf = [...project.keyframes].sort((a, b) => a.time - b.time);
  const transform = {} as TransformT;
  for (const part of TRANSFORM_PARTS) {
    const v = {} as TransformT[typeof part];
    for (const axis of AXES)
      v[axis] = numberAt(kf, project.transform[part][axis], (k) => k.transform?.[part]?.[axis], t);
    transform[part] = v;
  }
  const dof: DofT = {
    enabled: stepAt(kf, project.dof.enabled, (k) => k.dof?.enabled, t),
    focus_distance: numberAt(kf, project.dof.focus_distance, (k) => k.dof?.focus_distance, t),
    aperture: numberAt(kf, project.dof.aperture, (k) => k.dof?.aperture, t),
  };
  const bp = project.background.params;
  const pick = (name: 'from' | 'to' | 'color') => (k: KeyframeT) => k.background?.params?.[name];
  const params: BackgroundT['params'] = {
    from: colorAt(kf, bp.from, pick('from'), t),
    to: colorAt(kf, bp.to, pick('to'), t),
    color: colorAt(kf, bp.color, pick('color'), t),
    url: stepAt(kf, bp.url, (k) => k.background?.params?.url, t),
  };
  if (bp.angle !== undefined || kf.some((k) => k.background?.params?.angle !== undefined)) {
    params.angle = numberAt(kf, bp.angle ?? DEFAULT_ANGLE, (k) => k.background?.params?.angle, t);
  }
  for (const key of Object.keys(params) as (keyof typeof params)[]) if (params[key] === undefined) delete params[key];
  const background: BackgroundT = { mode: stepAt(kf, project.background.mode, (k) => k.background?.mode, t), params };
  return { transform, dof, background };
}
