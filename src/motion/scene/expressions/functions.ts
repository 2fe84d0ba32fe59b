import { easedDelta } from '../sample.js';

/**
 * The parts of After Effects' expression language computed on the host side of the sandbox (plain TypeScript over
 * numbers): loopOut/loopIn, wiggle's noise, the seeded random generator and the eases. The sandbox calls them through
 * its one host function (expressions.ts); they never see the user's code.
 */

export type LoopType = 'cycle' | 'pingpong' | 'offset' | 'continue';
export const LOOP_TYPES: readonly string[] = ['cycle', 'pingpong', 'offset', 'continue'];

/** The time step of continue's velocity at the end key (seconds); a finite difference of the property's own curve. */
const VELOCITY_STEP = 1e-3;

const add = (a: number[], b: number[], k = 1) => a.map((x, i) => x + k * (b[i] ?? 0));

/**
 * loopOut / loopIn (and their Duration forms) at time `t`, as After Effects documents them: past the last key (loopOut)
 * or before the first (loopIn) the segment between the end key and the key `numKeyframes` away from it (0: all keys),
 * or `duration` seconds from it, repeats (`cycle`), plays back and forth (`pingpong`), repeats shifted by the
 * segment's change each time (`offset`), or goes on at the end key's velocity (`continue`). Inside the keys, or with
 * fewer than two keys, the property's own value.
 */
export function loopValue(
  direction: 'out' | 'in',
  type: LoopType,
  keyTimes: readonly number[],
  sample: (t: number) => number[],
  t: number,
  numKeyframes = 0,
  duration = 0,
): number[] {
  const n = keyTimes.length;
  if (n < 2) return sample(t);
  let start: number;
  let end: number;
  if (direction === 'out') {
    end = keyTimes[n - 1];
    if (t <= end) return sample(t);
    start =
      duration > 0 ? end - duration : numKeyframes > 0 ? keyTimes[Math.max(0, n - 1 - numKeyframes)] : keyTimes[0];
    if (type === 'continue') {
      const v = sample(end);
      const slope = add(v, sample(end - VELOCITY_STEP), -1).map((d) => d / VELOCITY_STEP);
      return add(v, slope, t - end);
    }
  } else {
    start = keyTimes[0];
    if (t >= start) return sample(t);
    end =
      duration > 0 ? start + duration : numKeyframes > 0 ? keyTimes[Math.min(n - 1, numKeyframes)] : keyTimes[n - 1];
    if (type === 'continue') {
      const v = sample(start);
      const slope = add(sample(start + VELOCITY_STEP), v, -1).map((d) => d / VELOCITY_STEP);
      return add(v, slope, t - start);
    }
  }
  const span = end - start;
  if (!(span > 0)) return sample(t);
  // k whole spans from the segment's start (negative before it), u the time into the current one
  const k = Math.floor((t - start) / span);
  const u = t - start - k * span;
  switch (type) {
    case 'pingpong':
      return sample(k % 2 !== 0 ? end - u : start + u);
    case 'offset':
      return add(sample(start + u), add(sample(end), sample(start), -1), k);
    default:
      return sample(start + u);
  }
}

/** A 32-bit hash of a string (FNV-1a), the seed of a property's noise and random numbers. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Integers mixed into one 32-bit hash (a murmur3 finaliser per step). */
function mix(seed: number, ...values: number[]): number {
  let h = seed >>> 0;
  for (const v of values) {
    h ^= Math.imul(v | 0, 0x9e3779b1);
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    h = (h ^ (h >>> 16)) >>> 0;
  }
  return h;
}

/** The lattice value at integer `i` of one noise stream, in [-1, 1]. */
const lattice = (seed: number, stream: number, i: number) => (mix(seed, stream, i) / 0xffffffff) * 2 - 1;

/** Smooth 1D value noise in [-1, 1]: random values at the integers, joined by a quintic fade (zero slope there). */
export function noise1(seed: number, stream: number, x: number): number {
  const i = Math.floor(x);
  const f = x - i;
  const w = f * f * f * (f * (f * 6 - 15) + 10);
  const a = lattice(seed, stream, i);
  return a + (lattice(seed, stream, i + 1) - a) * w;
}

/**
 * wiggle's offset from the property's value: per dimension, `octaves` layers of smooth noise, each at twice the
 * frequency and `ampMult` times the amplitude of the one before (the first at `freq` per second and `amp`). The noise
 * is seeded by the property (its layer and path), so it is the same on every frame and every run; it is not After
 * Effects' own noise, which is not documented (an approximation detail of evaluated expressions).
 */
export function wiggleOffset(
  seed: number,
  dimensions: number,
  freq: number,
  amp: number,
  octaves: number,
  ampMult: number,
  t: number,
): number[] {
  const count = Math.min(10, Math.max(1, Math.floor(octaves)));
  const out: number[] = [];
  for (let d = 0; d < dimensions; d++) {
    let sum = 0;
    let a = amp;
    let f = freq;
    for (let o = 0; o < count; o++) {
      sum += a * noise1(seed, d * 16 + o, t * f);
      a *= ampMult;
      f *= 2;
    }
    out.push(sum);
  }
  return out;
}

/** noise(x): smooth value noise in [-1, 1] of a point of up to 3 dimensions (the sum of one stream per axis, averaged). */
export function noiseAt(seed: number, point: number[]): number {
  const axes = point.slice(0, 3);
  if (!axes.length) return 0;
  return axes.reduce((s, x, i) => s + noise1(seed, 1000 + i, x), 0) / axes.length;
}

/** A seeded generator of uniform numbers in [0, 1) (mulberry32): random() of one evaluation. */
export function randomGenerator(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let r = Math.imul(s ^ (s >>> 15), 1 | s);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The seed of random() for one evaluation: the property, the seedRandom offset, and the frame's time unless
 * `timeless` (After Effects' random numbers change every frame unless seedRandom(seed, true)).
 */
export function randomSeed(propertySeed: number, offset: number, timeless: boolean, time: number): number {
  return mix(propertySeed, Math.round(offset), timeless ? 0 : Math.round(time * 1e6), timeless ? 1 : 2);
}

export type EaseKind = 'ease' | 'easeIn' | 'easeOut';

/**
 * The eased fraction at x in [0, 1] of linear's ramp, in After Effects' keyframe terms: an eased side is an Easy Ease
 * key (speed 0, 33.33 % influence), the other side of easeIn/easeOut is linear (the average speed, 16.67 % influence,
 * After Effects' default). These are the curves lottie-web uses for the same functions.
 */
export function easeFraction(kind: EaseKind, x: number): number {
  const still = { speed: 0, influence: 1 / 3 };
  const steady = { speed: 1, influence: 1 / 6 };
  const out = kind === 'easeOut' ? steady : still;
  const inn = kind === 'easeIn' ? steady : still;
  return easedDelta(out, inn, 1, 1, Math.min(1, Math.max(0, x)));
}

/**
 * timeToFrames: the frame count of time t (seconds) at `fps`, as After Effects documents it: an absolute time rounds
 * down, a duration (`isDuration`) rounds away from zero. A time within a millionth of a frame of a whole frame counts
 * as on it, so that 0.1 s at 30 fps is frame 3 despite binary fractions.
 */
export function timeToFrames(t: number, fps: number, isDuration = false): number {
  const f = t * fps;
  const r = Math.round(f);
  if (Math.abs(f - r) < 1e-6) return r;
  return isDuration ? Math.sign(f) * Math.ceil(Math.abs(f)) : Math.floor(f);
}
