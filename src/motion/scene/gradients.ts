import type { Color, GradientPaint } from './display.js';
import type { GradientStops } from './model.js';

/**
 * After Effects' gradients: how it mixes two stops around the first one's midpoint m (where the mix is half and half),
 * the stops a canvas gradient needs to draw that, and the stops a Lottie file carries instead (Lottie has no midpoint).
 *
 * The share of the next stop at a fraction f of the way is f^(ln 0.5 / ln m) for m over 0.5 and
 * 1 - (1 - f)^(ln 0.5 / ln (1 - m)) under it: the power is always over 1, so the longer side of the midpoint flattens
 * out towards its stop, and m = 0.5 is a straight blend. Measured on After Effects' renders: ae-renders'
 * gradient-linear (midpoint 0.6007) and gradient-linear-midpoint (0.1993, 0.5) match within a level.
 */
export function midpointCurve(m: number | undefined): (f: number) => number {
  if (m === undefined || Math.abs(m - 0.5) < 1e-6) return (f) => f;
  const mm = Math.min(0.99, Math.max(0.01, m));
  if (mm > 0.5) {
    const k = Math.log(0.5) / Math.log(mm);
    return (f) => Math.pow(f, k);
  }
  const k = Math.log(0.5) / Math.log(1 - mm);
  return (f) => 1 - Math.pow(1 - f, k);
}

/** Canvas gradients blend straight between stops: a curved stretch is drawn with this many straight pieces. */
const PIECES = 32;

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/** A stop list's value at offset x (each entry `[offset, ...values]`), mixed by the midpoints as After Effects does. */
function valueAt(list: number[][], mids: number[] | undefined, x: number): number[] {
  if (x <= list[0][0]) return list[0].slice(1);
  for (let k = 1; k < list.length; k++) {
    if (x <= list[k][0]) {
      const [a, b] = [list[k - 1], list[k]];
      const f = midpointCurve(mids?.[k - 1])(b[0] > a[0] ? (x - a[0]) / (b[0] - a[0]) : 0);
      return a.slice(1).map((v, j) => v + (b[j + 1] - v) * f);
    }
  }
  return list[list.length - 1].slice(1);
}

/**
 * Colour stops and opacity stops merged into one canvas stop list: every offset of either list, colour and alpha
 * mixed there, and PIECES stops along each stretch whose midpoint is not 0.5.
 */
export function paintStops(stops: GradientStops): GradientPaint['stops'] {
  const { colors, opacities } = stops;
  const offsets = new Set([...colors.map((c) => c[0]), ...opacities.map((o) => o[0])]);
  const curved = (list: number[][], mids: number[] | undefined) =>
    list.forEach((s, k) => {
      const next = list[k + 1];
      if (!next || mids === undefined || Math.abs(mids[k] - 0.5) < 1e-6) return;
      for (let j = 1; j < PIECES; j++) offsets.add(s[0] + ((next[0] - s[0]) * j) / PIECES);
    });
  curved(colors, stops.colorMidpoints);
  curved(opacities, stops.opacityMidpoints);
  return [...offsets]
    .sort((a, b) => a - b)
    .map((offset) => {
      const [r, g, b] = colors.length ? valueAt(colors, stops.colorMidpoints, offset) : [0, 0, 0];
      const a = opacities.length ? valueAt(opacities, stops.opacityMidpoints, offset)[0] : 1;
      return { offset: clamp01(offset), color: [r, g, b, a] as Color };
    });
}

/**
 * The stops bodymovin writes for After Effects' gradient (Lottie has no midpoint): between every two stops, colour
 * and opacity alike, one more at the first one's midpoint (its fraction rounded to 3 places, as bodymovin reads it)
 * holding the two stops' average, whatever the midpoint (ae-renders' exports: 0.5 midpoints get one too).
 */
export function withMidpointStops(stops: GradientStops): GradientStops {
  const expand = <T extends number[]>(list: T[], mids: number[] | undefined): T[] =>
    list.flatMap((s, k) => {
      const next = list[k + 1];
      if (!next) return [s];
      const m = Math.round((mids?.[k] ?? 0.5) * 1000) / 1000;
      const mid = s.map((v, j) => (j === 0 ? v + (next[0] - v) * m : (v + next[j]) / 2)) as T;
      return [s, mid];
    });
  return {
    colors: expand(stops.colors, stops.colorMidpoints),
    opacities: expand(stops.opacities, stops.opacityMidpoints),
  };
}
