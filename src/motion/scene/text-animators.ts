import type { Color, DisplayCharacter, Matrix } from './display.js';
import { noise1, randomGenerator } from './expressions/functions.js';
import { transformMatrix } from './geometry.js';
import type {
  NumProperty,
  TextAnimator,
  TextRangeSelector,
  TextSelector,
  TextSelectorBasis,
  TextSelectorMode,
  TextWigglySelector,
} from './model.js';

/**
 * Text animators applied per character, as After Effects does (docs/motion.md "Text animators"): each selector gives
 * every unit of its basis (character, word, line) an amount, the animator's selectors combine by their modes into one
 * amount per character, and the animator's properties are added to the character in proportion: position, anchor,
 * rotation, skew and tracking scaled by the amount, scale by 1 + (s - 1) x amount, opacity and colours mixed towards
 * the animator's value by the amount (clamped to 0..1). Layout stays the page's (draw-text.ts): this gives each
 * character a matrix about its anchor (the middle of its advance on the baseline) and its paint.
 */

/** Amounts are per dimension [x, y, z], fractions (-1..1); a range or wiggly selector gives the same to each unless unlocked. */
export type Amount = [number, number, number];

/** What sampling an animator needs from the evaluator at this instant. */
export interface AnimatorSampler {
  /** A property's value at this instant (its expression's when it has one that evaluates). */
  num(p: NumProperty): number[];
  /**
   * An expression selector's amount (percent per dimension) for unit `index` (1-based) of `total`, with the combined
   * amount of the selectors above it as `selectorValue` (percent); its own value when the expression does not evaluate.
   */
  expression(p: NumProperty, index: number, total: number, selectorValue: number[]): number[];
  /** Layer seconds (wiggly selectors move with it). */
  time: number;
}

/** The unit index of each character under a basis (-1: a line break, never selected) and the number of units. */
export function textUnits(chars: string[], basis: TextSelectorBasis): { index: number[]; total: number } {
  const index: number[] = new Array<number>(chars.length).fill(-1);
  const brk = (c: string) => c === '\n' || c === '\r' || c === '\u0003';
  const space = (c: string) => c === ' ' || c === '\t' || c === '\u00a0';
  let n = 0;
  if (basis === 'characters') {
    chars.forEach((c, i) => {
      if (!brk(c)) index[i] = n++;
    });
  } else if (basis === 'characters-excluding-spaces') {
    // a space is not counted: it goes with the character after it (it draws nothing; only its tracking shows)
    chars.forEach((c, i) => {
      if (brk(c)) return;
      index[i] = n;
      if (!space(c)) n++;
    });
    chars.forEach((c, i) => {
      if (index[i] >= n) index[i] = Math.max(0, n - 1);
    });
  } else if (basis === 'words') {
    // a word is a run of non-spaces; the spaces after it go with it (leading spaces with the first word)
    let word = -1;
    let gap = true;
    chars.forEach((c, i) => {
      if (brk(c) || space(c)) {
        gap = true;
        if (!brk(c)) index[i] = Math.max(0, word);
        return;
      }
      if (gap) word++;
      gap = false;
      index[i] = word;
    });
    n = word + 1;
  } else {
    let line = 0;
    chars.forEach((c, i) => {
      if (brk(c)) line++;
      else index[i] = line;
    });
    n = chars.length ? line + 1 : 0;
  }
  return { index, total: Math.max(0, n) };
}

/**
 * A cubic-bezier easing of x in 0..1 through (x1, y1), (x2, y2), as Ease High and Ease Low bend a selector's shape
 * (bodymovin's reading: a positive ease low moves the first handle right, a negative one up; ease high likewise from
 * the end).
 */
function easer(easeHigh: number, easeLow: number): (x: number) => number {
  const [x1, y1] = easeLow > 0 ? [easeLow / 100, 0] : [0, -easeLow / 100];
  const [x2, y2] = easeHigh > 0 ? [1 - easeHigh / 100, 1] : [1, 1 + easeHigh / 100];
  if (x1 === y1 && x2 === y2) return (x) => x;
  const bez = (a: number, b: number, t: number) => 3 * a * t * (1 - t) ** 2 + 3 * b * t * t * (1 - t) + t ** 3;
  return (x) => {
    if (x <= 0 || x >= 1) return Math.min(1, Math.max(0, x));
    let lo = 0;
    let hi = 1;
    for (let k = 0; k < 40; k++) {
      const mid = (lo + hi) / 2;
      if (bez(x1, x2, mid) < x) lo = mid;
      else hi = mid;
    }
    return bez(y1, y2, (lo + hi) / 2);
  };
}

/**
 * A range selector's amount for each of `total` units (fractions, before its Amount): the shape laid over the range
 * [s, e) in units, each unit sampled at its middle (a square covers a unit in proportion to the part inside the range).
 */
export function rangeShape(
  shape: TextRangeSelector['shape'],
  s: number,
  e: number,
  total: number,
  ease: (x: number) => number = (x) => x,
  smoothness = 100,
): number[] {
  if (s > e) [s, e] = [e, s];
  const span = e - s;
  const clamp = (x: number) => Math.min(1, Math.max(0, x));
  const out: number[] = [];
  for (let i = 0; i < total; i++) {
    const c = i + 0.5;
    const t = span > 0 ? clamp((c - s) / span) : c >= e ? 1 : 0;
    let v: number;
    switch (shape) {
      case 'square':
        v = clamp(Math.min(e, i + 1) - Math.max(s, i));
        break;
      case 'ramp-up':
        v = t;
        break;
      case 'ramp-down':
        v = 1 - t;
        break;
      case 'triangle':
        v = span > 0 ? 1 - Math.abs(2 * t - 1) : 0;
        break;
      case 'round':
        v = span > 0 ? Math.sqrt(Math.max(0, 1 - (2 * t - 1) ** 2)) : 0;
        break;
      default:
        v = span > 0 ? (1 - Math.cos(2 * Math.PI * t)) / 2 : 0;
    }
    v = ease(v);
    // smoothness narrows a square's soft edge: the middle `smoothness` of 0..1 is stretched over it
    if (shape === 'square' && smoothness < 100) {
      const k = Math.max(1e-6, smoothness / 100);
      v = clamp((v - (0.5 - k / 2)) / k);
    }
    out.push(v);
  }
  return out;
}

/** A seeded shuffle of 0..n-1 (Randomize Order): the same seed gives the same order on every frame and run. */
export function randomOrder(n: number, seed: number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  const rnd = randomGenerator((Math.round(seed) * 2654435761) ^ 0x5eed);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/** A range selector's amounts per unit at this instant (fractions, Amount applied). */
function rangeAmounts(sel: TextRangeSelector, total: number, num: (p: NumProperty) => number[]): number[] {
  const offset = num(sel.offset)[0];
  const scale = sel.units === 'percent' ? total / 100 : 1;
  const s = (num(sel.start)[0] + offset) * scale;
  const e = (Math.min(num(sel.end)[0], sel.units === 'index' ? total : Infinity) + offset) * scale;
  const shaped = rangeShape(
    sel.shape,
    s,
    e,
    total,
    easer(num(sel.easeHigh)[0], num(sel.easeLow)[0]),
    num(sel.smoothness)[0],
  );
  const amount = num(sel.amount)[0] / 100;
  const values = shaped.map((v) => v * amount);
  if (!sel.randomize) return values;
  const order = randomOrder(total, num(sel.seed)[0]);
  return order.map((k) => values[k]);
}

/**
 * A wiggly selector's amounts per unit and dimension: smooth noise in time (Wiggles/Second, Temporal Phase) mixed
 * between one curve shared by every unit and one per unit by Correlation, shifted along the text by Spatial Phase,
 * mapped from -1..1 onto Min..Max Amount. Seeded by Random Seed: deterministic, but not After Effects' own sequence.
 */
export function wigglyAmounts(
  sel: TextWigglySelector,
  total: number,
  num: (p: NumProperty) => number[],
  time: number,
): Amount[] {
  const lo = num(sel.minAmount)[0] / 100;
  const hi = num(sel.maxAmount)[0] / 100;
  const x = time * num(sel.wigglesPerSecond)[0] + num(sel.temporalPhase)[0] / 360;
  const spatial = num(sel.spatialPhase)[0] / 360;
  const corr = Math.min(1, Math.max(0, num(sel.correlation)[0] / 100));
  const seed = Math.round(num(sel.seed)[0]) >>> 0;
  const locked = num(sel.lockDimensions)[0] !== 0;
  const out: Amount[] = [];
  for (let i = 0; i < total; i++) {
    const a = [0, 1, 2].map((d) => {
      const stream = locked ? 0 : d;
      const shared = noise1(seed, stream, x + spatial * i);
      const own = noise1(seed, 1000 + 8 * i + stream, x + spatial * i);
      const n = corr * shared + (1 - corr) * own;
      return lo + ((n + 1) / 2) * (hi - lo);
    });
    out.push(a as Amount);
  }
  return out;
}

const pin = (v: number) => Math.min(1, Math.max(-1, v));

/** The first selector starts from nothing selected, except Subtract, which takes its amount away from everything. */
function combine(mode: TextSelectorMode, first: boolean, r: number, a: number): number {
  if (first) return pin(mode === 'subtract' ? 1 - a : a);
  switch (mode) {
    case 'add':
      return pin(r + a);
    case 'subtract':
      // taking away from a selection stops at nothing selected (a negative selection goes on down)
      return r >= 0 ? Math.max(0, r - a) : pin(r - a);
    case 'intersect':
      return pin(r * a);
    case 'min':
      return Math.min(r, a);
    case 'max':
      return Math.max(r, a);
    default:
      return Math.abs(r - a);
  }
}

/** One animator's amount per character and dimension (its selectors combined; none: every character at 100 %). */
export function animatorAmounts(chars: string[], selectors: TextSelector[], sampler: AnimatorSampler): Amount[] {
  const live = selectors.filter((s) => s.enabled);
  const out: Amount[] = chars.map(() => [1, 1, 1]);
  const units = new Map<TextSelectorBasis, { index: number[]; total: number }>();
  const unitsOf = (b: TextSelectorBasis) => {
    let u = units.get(b);
    if (!u) units.set(b, (u = textUnits(chars, b)));
    return u;
  };
  live.forEach((sel, k) => {
    const { index, total } = unitsOf(sel.basedOn);
    if (sel.kind === 'expression') {
      // the expression's value replaces what the selectors above gave (it reads that as selectorValue)
      const cache = new Map<number, number[]>();
      chars.forEach((_, i) => {
        const u = index[i];
        if (u < 0) return;
        const before = k === 0 ? [100, 100, 100] : out[i].map((v) => v * 100);
        const key = k === 0 ? u : -1;
        let v = key >= 0 ? cache.get(key) : undefined;
        if (!v) {
          v = sampler.expression(sel.amount, u + 1, total, before);
          if (key >= 0) cache.set(key, v);
        }
        out[i] = [0, 1, 2].map((d) => pin((v[d] ?? v[0]) / 100)) as Amount;
      });
      return;
    }
    const per: Amount[] =
      sel.kind === 'range'
        ? rangeAmounts(sel, total, sampler.num).map((v): Amount => [v, v, v])
        : wigglyAmounts(sel, total, sampler.num, sampler.time);
    chars.forEach((_, i) => {
      const u = index[i];
      const a = u >= 0 ? per[u] : ([0, 0, 0] as Amount);
      out[i] = [0, 1, 2].map((d) => combine(sel.mode, k === 0, out[i][d], a[d])) as Amount;
    });
  });
  // line breaks are never selected
  chars.forEach((_, i) => {
    if (unitsOf('characters').index[i] < 0) out[i] = [0, 0, 0];
  });
  return out;
}

interface CharacterState {
  anchor: number[];
  position: number[];
  /** Fractions. */
  scale: number[];
  skew: number;
  skewAxis: number;
  rotation: number;
  opacity: number;
  fill?: Color;
  stroke?: Color;
  strokeWidth: number;
  /** Pixels after the character. */
  tracking: number;
  /** Characters to shift it by, and whether within its group (a-z, A-Z, 0-9). */
  offset: number;
  preserve: boolean;
  touched: boolean;
}

/** A character shifted by `by` code points: within a-z, A-Z or 0-9 (wrapping) when `preserve`, others unchanged. */
export function offsetCharacter(ch: string, by: number, preserve: boolean): string {
  if (!by) return ch;
  const code = ch.codePointAt(0)!;
  if (!preserve) return code + by > 32 && code + by <= 0x10ffff ? String.fromCodePoint(code + by) : ch;
  for (const [lo, n] of [
    [97, 26],
    [65, 26],
    [48, 10],
  ])
    if (code >= lo && code < lo + n) return String.fromCodePoint(lo + ((((code - lo + by) % n) + n) % n));
  return ch;
}

const mix = (from: Color, to: number[], f: number): Color => [
  from[0] + (to[0] - from[0]) * f,
  from[1] + (to[1] - from[1]) * f,
  from[2] + (to[2] - from[2]) * f,
  from[3],
];

/**
 * Each character's change at this instant (null: unchanged), for the characters of `text` as the page splits them
 * (code points, line breaks included); `fill`, `stroke` and `strokeWidth` are the document's.
 */
export function characterChanges(
  text: string,
  doc: { fill?: Color; stroke?: Color; strokeWidth: number; size: number },
  animators: TextAnimator[],
  sampler: AnimatorSampler,
): (DisplayCharacter | null)[] {
  const chars = Array.from(text);
  const states: CharacterState[] = chars.map(() => ({
    anchor: [0, 0],
    position: [0, 0],
    scale: [1, 1],
    skew: 0,
    skewAxis: 0,
    rotation: 0,
    opacity: 1,
    fill: doc.fill,
    stroke: doc.stroke,
    strokeWidth: doc.strokeWidth,
    tracking: 0,
    offset: 0,
    preserve: true,
    touched: false,
  }));
  for (const anim of animators) {
    if (!anim.enabled) continue;
    const p = anim.properties;
    const v = <K extends keyof typeof p>(k: K) => (p[k] ? sampler.num(p[k]!) : undefined);
    const [anchor, position, scale, skew, skewAxis, rotation, opacity] = [
      v('anchor'),
      v('position'),
      v('scale'),
      v('skew'),
      v('skewAxis'),
      v('rotation'),
      v('opacity'),
    ];
    const [fill, stroke, strokeWidth, tracking] = [v('fillColor'), v('strokeColor'), v('strokeWidth'), v('tracking')];
    const [charOffset, charRange] = [v('characterOffset'), v('characterRange')];
    const amounts = animatorAmounts(chars, anim.selectors, sampler);
    states.forEach((st, i) => {
      const [ax, ay, az] = amounts[i];
      if (!ax && !ay && !az) return;
      st.touched = true;
      const clamped = Math.min(1, Math.max(0, ax));
      if (anchor) st.anchor = [st.anchor[0] + anchor[0] * ax, st.anchor[1] + (anchor[1] ?? 0) * ay];
      if (position) st.position = [st.position[0] + position[0] * ax, st.position[1] + (position[1] ?? 0) * ay];
      if (scale)
        st.scale = [
          st.scale[0] * (1 + (scale[0] / 100 - 1) * ax),
          st.scale[1] * (1 + ((scale[1] ?? scale[0]) / 100 - 1) * ay),
        ];
      if (skew) st.skew += skew[0] * ax;
      if (skewAxis) st.skewAxis += skewAxis[0] * ay;
      if (rotation) st.rotation += rotation[0] * az;
      if (opacity) st.opacity *= 1 + (opacity[0] / 100 - 1) * clamped;
      if (fill) st.fill = mix(st.fill ?? [fill[0], fill[1], fill[2], 1], fill, clamped);
      if (stroke) st.stroke = mix(st.stroke ?? [stroke[0], stroke[1], stroke[2], 1], stroke, clamped);
      if (strokeWidth) st.strokeWidth += strokeWidth[0] * ax;
      if (tracking) st.tracking += ((tracking[0] * ax) / 1000) * doc.size;
      if (charOffset) {
        st.offset += Math.round(charOffset[0] * ax);
        st.preserve = !charRange || Math.round(charRange[0]) !== 2;
      }
    });
  }
  const same = (a?: Color, b?: Color) => (!a && !b) || (!!a && !!b && a.every((x, k) => Math.abs(x - b[k]) < 1e-9));
  return states.map((st, i) => {
    if (!st.touched) return null;
    const c: DisplayCharacter = {};
    const m: Matrix = transformMatrix(
      st.anchor,
      st.position,
      [st.scale[0] * 100, st.scale[1] * 100],
      st.rotation,
      st.skew,
      st.skewAxis,
    );
    if (m.some((x, k) => Math.abs(x - [1, 0, 0, 1, 0, 0][k]) > 1e-9)) c.matrix = m;
    if (st.opacity !== 1) c.opacity = Math.min(1, Math.max(0, st.opacity));
    if (!same(st.fill, doc.fill) && st.fill) c.fill = st.fill;
    if (!same(st.stroke, doc.stroke) && st.stroke) c.stroke = st.stroke;
    if (st.strokeWidth !== doc.strokeWidth) c.stroke_width = Math.max(0, st.strokeWidth);
    if (st.tracking) c.tracking = st.tracking;
    const shifted = offsetCharacter(chars[i], st.offset, st.preserve);
    if (shifted !== chars[i]) c.text = shifted;
    return Object.keys(c).length ? c : null;
  });
}

/** What of an animator is not drawn as After Effects draws it (approximation details), for listing. */
export function animatorNotes(anim: TextAnimator, boxText: boolean): string[] {
  const out: string[] = [];
  if (!anim.enabled) return out;
  for (const mn of anim.unsupported) out.push(`animator "${anim.name}": ${mn} is not applied`);
  for (const sel of anim.selectors) {
    if (!sel.enabled) continue;
    if (sel.kind === 'wiggly')
      out.push(
        `animator "${anim.name}": wiggly selector "${sel.name}" wiggles with the preview's own seeded noise, not After Effects' random sequence`,
      );
    if (sel.kind === 'range' && sel.randomize)
      out.push(
        `animator "${anim.name}": selector "${sel.name}" randomizes the order with the preview's own seeded shuffle, not After Effects'`,
      );
    if (sel.basedOn === 'lines' && boxText)
      out.push(`animator "${anim.name}": selector "${sel.name}" counts the paragraphs of box text as its lines`);
  }
  return out;
}

/**
 * How far a text's animated glyphs may reach past its plain layout (pixels): the largest move plus what the largest
 * scale adds to a glyph about its anchor, plus all the tracking added. Used for a 3D layer's drawing bounds.
 */
export function characterReach(characters: (DisplayCharacter | null)[], size: number): number {
  let move = 0;
  let grow = 0;
  let tracking = 0;
  for (const c of characters) {
    if (!c) continue;
    if (c.matrix) {
      const [a, b, cc, d, e, f] = c.matrix;
      move = Math.max(move, Math.abs(e), Math.abs(f));
      grow = Math.max(grow, Math.hypot(a, b) - 1, Math.hypot(cc, d) - 1);
    }
    tracking += Math.abs(c.tracking ?? 0) + (c.stroke_width ?? 0);
  }
  return move + grow * size * 1.5 + tracking;
}
