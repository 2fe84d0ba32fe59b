import { child, children, type Chunk } from '../chunks.js';
import { cosPath, parseCos, type CosValue } from '../cos.js';
import { expressionOf, readProject } from '../project.js';
import { readChunkTree } from '../read.js';
import { effectDefault } from './effects.js';
import { MERGE_MODES } from './merge-paths.js';
import { parseRotoMatte } from './roto-matte.js';
import type { InspectedComposition, InspectedFootage, InspectedLayer } from '../schemas.js';
import type {
  BezierPath,
  BlendMode,
  Composition,
  Dash,
  Ease,
  Effect,
  EffectParam,
  EffectParamType,
  Footage,
  GradientStops,
  Interpolation,
  Justification,
  Keyframe,
  Layer,
  LayerStyle,
  LineCap,
  LineJoin,
  Mask,
  MaskMode,
  MatteMode,
  NumProperty,
  Property,
  SceneProject,
  ShapeItem,
  ShapeTransform,
  TextAnimator,
  TextAnimatorProperties,
  TextDocument,
  TextRangeSelector,
  TextSelector,
  TextSelectorBasis,
  TextSelectorMode,
  Transform,
} from './model.js';

/**
 * Decodes a project file into the scene model (model.ts). Offsets are from the chunk body, big-endian; where each
 * layout was learnt is in ../shared/research/after-effects.md ("Scene model" facts) and docs/motion.md. Properties at
 * their default value are not written by After Effects, so every property read here has its default.
 */
export function decodeScene(buf: Uint8Array): SceneProject {
  return buildScene(readChunkTree(buf, { allChunks: true }));
}

const view = (d: Uint8Array) => new DataView(d.buffer, d.byteOffset, d.byteLength);
const cp1252 = new TextDecoder('windows-1252');
const MAX_DEPTH = 100;

function cString(d: Uint8Array, at = 0, max = d.length): string {
  let end = at;
  const limit = Math.min(d.length, at + max);
  while (end < limit && d[end] !== 0) end++;
  return cp1252.decode(d.subarray(at, end));
}

/** A `tdsn`/item name: a Utf8 child, or (AE 11 to 13) the NUL-terminated string itself. */
function nameOf(node: Chunk | undefined): string {
  if (!node) return '';
  const u = child(node, 'Utf8');
  if (u) return u.text ?? '';
  return node.data ? cString(node.data) : '';
}

const matchName = (c: Chunk) => (c.data ? cString(c.data) : '');

/** [match name, property node] pairs of a property group, in file order. */
function entries(group: Chunk | undefined): [string, Chunk][] {
  const out: [string, Chunk][] = [];
  const list = group?.children ?? [];
  for (let i = 0; i < list.length - 1; i++) {
    if (list[i].id !== 'tdmn') continue;
    const name = matchName(list[i]);
    const next = list[i + 1];
    if (name === 'ADBE Group End' || next.id === 'tdmn') continue;
    out.push([name, next]);
    i++;
  }
  return out;
}

function find(group: Chunk | undefined, name: string): Chunk | undefined {
  return entries(group).find(([n]) => n === name)?.[1];
}

/** The group's display name (`-_0_/-` means "the default name"). */
function groupName(node: Chunk, fallback: string): string {
  const n = nameOf(child(node, 'tdsn'));
  return n && n !== '-_0_/-' ? n : fallback;
}

/** Enabled switch of a property group or shape item: tdsb bit 0 (research §3.8). */
function enabledOf(node: Chunk): boolean {
  const d = child(node, 'tdsb')?.data;
  return !d || d.length < 4 || (d[3] & 1) === 1;
}

// ---------------------------------------------------------------------------------------------------------------
// Leaf properties: tdbs = tdsb, tdsn, tdb4, then cdat (static) or LIST:list (lhd3 + ldat keyframes); Utf8 expression.

interface Ctx {
  /** Seconds per keyframe time unit: 1 / cdta timebase (u32@8). */
  timeUnit: number;
  compSize: [number, number];
  /** Seconds. */
  duration: number;
}

/**
 * A key's time: s32 at 0 in time-base units (the low byte a fraction of a frame unit). py-aep reads it as a signed
 * 16-bit number at 1 (byte 0 has always been 0 in the corpus), which makes a key before the layer's start negative
 * with byte 0 still 0: when the 32-bit reading of such bytes lands past the composition's end, the 16-bit one is
 * taken.
 */
function keyTime(d: DataView, at: number, ctx: Ctx): number {
  const wide = d.getInt32(at) * ctx.timeUnit;
  if (d.getUint8(at) !== 0 || (d.getUint8(at + 1) & 0x80) === 0 || wide <= ctx.duration + 1) return wide;
  return (d.getInt16(at + 1) * 256 + d.getUint8(at + 3)) * ctx.timeUnit;
}

interface TdbsInfo {
  dims: number;
  spatial: boolean;
  color: boolean;
  expression?: string;
}

function tdbsInfo(tdbs: Chunk): TdbsInfo {
  const d = child(tdbs, 'tdb4')?.data;
  const info: TdbsInfo = { dims: 1, spatial: false, color: false };
  if (d && d.length >= 60) {
    info.dims = view(d).getUint16(2) || 1;
    info.spatial = (d[5] & 0x08) !== 0;
    info.color = (d[59] & 0x01) !== 0;
  }
  const expr = expressionOf(tdbs)?.split('\u0000')[0];
  if (expr && expr.trim() && !expressionOff(tdbs)) info.expression = expr;
  return info;
}

/** The expression switch is off: tdb4 byte 119 bit 0 (After Effects keeps the text but does not run it). */
const expressionOff = (tdbs: Chunk) => {
  const d = child(tdbs, 'tdb4')?.data;
  return !!d && d.length >= 120 && (d[119] & 1) === 1;
};

/**
 * The leaf property (`tdbs`) at a match-name path as inspect reports expressions: each name is looked up in the group
 * reached so far or in the containers without a match name of their own inside it (an effect's sspc, a text
 * document's btds, a path's om-s).
 */
function leafAt(group: Chunk | undefined, path: string[]): Chunk | undefined {
  const lookup = (node: Chunk, name: string, depth: number): Chunk | undefined => {
    const hit = find(node, name);
    if (hit || depth > 3) return hit;
    for (const c of node.children ?? []) {
      if (!c.children || c.id === 'tdsn' || c.id === 'tdbs' || c.id === 'tdgp') continue;
      const inner = lookup(c, name, depth + 1);
      if (inner) return inner;
    }
    return undefined;
  };
  let node = group;
  for (const name of path) node = node && lookup(node, name, 0);
  return node?.id === 'tdbs' ? node : ((node && child(node, 'tdbs')) ?? undefined);
}

/** Properties After Effects stores as fractions and shows as percent (py-aep `_PERCENT_MATCH_NAMES`). */
const PERCENT = new Set(['ADBE Opacity', 'ADBE Scale', 'ADBE Mask Opacity']);

const INTERP: Record<number, Interpolation> = { 1: 'linear', 2: 'bezier', 3: 'hold' };

interface RawKey {
  time: number;
  inInterpolation: Interpolation;
  outInterpolation: Interpolation;
  roving: boolean;
  /** Temporal (byte 7 bit 4) and spatial (spatial records, byte 11 bit 1) auto-bezier. */
  autoTemporal: boolean;
  autoSpatial: boolean;
  value?: number[];
  inEase: Ease[];
  outEase: Ease[];
  inTangent?: number[];
  outTangent?: number[];
}

/** Keyframe records of a tdbs (research: "Keyframes"); values only for numeric layouts. */
function readKeys(tdbs: Chunk, info: TdbsInfo, ctx: Ctx): RawKey[] {
  const list = child(tdbs, 'list');
  const head = child(list, 'lhd3')?.data;
  const body = child(list, 'ldat')?.data;
  if (!head || !body || head.length < 20) return [];
  const h = view(head);
  const count = h.getUint16(10);
  const size = h.getUint16(18);
  if (size < 8 || count * size > body.length) return [];
  const d = view(body);
  const keys: RawKey[] = [];
  const f = (at: number) => d.getFloat64(at);
  const fs = (at: number, n: number) => Array.from({ length: n }, (_, k) => f(at + 8 * k));
  for (let k = 0; k < count; k++) {
    const at = k * size;
    const key: RawKey = {
      time: keyTime(d, at, ctx),
      inInterpolation: INTERP[d.getUint8(at + 4)] ?? 'linear',
      outInterpolation: INTERP[d.getUint8(at + 5)] ?? 'linear',
      roving: (d.getUint8(at + 7) & 0x20) !== 0,
      autoTemporal: (d.getUint8(at + 7) & 0x10) !== 0,
      autoSpatial: (size === 104 || (size === 128 && info.spatial)) && (d.getUint8(at + 11) & 0x02) !== 0,
      inEase: [],
      outEase: [],
    };
    const ease = (speed: number, influence: number): Ease => ({ speed, influence });
    if (size === 48 || size === 88 || (size === 128 && !info.spatial)) {
      // one value per dimension, then in speed, in influence, out speed, out influence per dimension
      const n = (size - 8) / 40;
      key.value = fs(at + 8, n);
      const inS = fs(at + 8 + 8 * n, n);
      const inI = fs(at + 8 + 16 * n, n);
      const outS = fs(at + 8 + 24 * n, n);
      const outI = fs(at + 8 + 32 * n, n);
      key.inEase = inS.map((s, j) => ease(s, inI[j]));
      key.outEase = outS.map((s, j) => ease(s, outI[j]));
    } else if (size === 104 || size === 128) {
      // spatial: flags, then one ease for the motion along the path, value, in and out tangents
      const n = size === 104 ? 2 : 3;
      key.inEase = [ease(f(at + 24), f(at + 32))];
      key.outEase = [ease(f(at + 40), f(at + 48))];
      key.value = fs(at + 56, n);
      key.inTangent = fs(at + 56 + 8 * n, n);
      key.outTangent = fs(at + 56 + 16 * n, n);
    } else if (size >= 56) {
      // colour (152: four values after the ease), and value-less keys (shapes, text) with one ease
      key.inEase = [ease(f(at + 24), f(at + 32))];
      key.outEase = [ease(f(at + 40), f(at + 48))];
      if (size === 152) key.value = fs(at + 56, 4);
    }
    keys.push(key);
  }
  return keys;
}

function toKeyframe<V>(k: RawKey, value: V): Keyframe<V> {
  const out: Keyframe<V> = {
    time: k.time,
    value,
    inInterpolation: k.inInterpolation,
    outInterpolation: k.outInterpolation,
  };
  if (k.inEase.length) out.inEase = k.inEase;
  if (k.outEase.length) out.outEase = k.outEase;
  if (k.inTangent) out.inTangent = k.inTangent;
  if (k.outTangent) out.outTangent = k.outTangent;
  if (k.roving) out.roving = true;
  return out;
}

/** A numeric property in After Effects' shown units; `def` when the file leaves it out (its default). */
function numProp(node: Chunk | undefined, name: string, path: string, def: number[], ctx: Ctx): NumProperty {
  const p: NumProperty = { path, value: def };
  if (!node || node.id !== 'tdbs') return p;
  const info = tdbsInfo(node);
  if (info.expression) p.expression = info.expression;
  const percent = PERCENT.has(name) ? 100 : 1;
  // colours are stored ARGB 0..255
  const convert = info.color
    ? (v: number[]) => [v[1] / 255, v[2] / 255, v[3] / 255, v[0] / 255]
    : (v: number[]) => v.map((x) => x * percent);
  const speedScale = info.color ? 1 / 255 : percent;
  const cdat = child(node, 'cdat')?.data;
  const dims = info.color ? 4 : info.dims;
  if (cdat && cdat.length >= 8 * dims) {
    const d = view(cdat);
    p.value = convert(Array.from({ length: dims }, (_, k) => d.getFloat64(8 * k)));
  }
  const keys = readKeys(node, info, ctx).filter((k) => k.value);
  if (keys.length) {
    p.keyframes = keys.map((k) => {
      const kf = toKeyframe(k, convert(k.value!.slice(0, dims)));
      const scale = (e: Ease[] | undefined) => e?.map((x) => ({ speed: x.speed * speedScale, influence: x.influence }));
      kf.inEase = scale(kf.inEase);
      kf.outEase = scale(kf.outEase);
      return kf;
    });
    autoBezier(p.keyframes, keys);
    p.value = p.keyframes[0].value;
    if (info.spatial) p.spatial = true;
  }
  return p;
}

/**
 * Auto-bezier keys saved without their computed eases or tangents (influences all 0, tangents all 0) get them as After
 * Effects computes them (py-aep `_compute_auto_temporal_ease` / `_compute_auto_spatial_tangents`): influence 1/6 and
 * the slope through the neighbours; tangents a third of the neighbours' span, split by the time on each side.
 */
function autoBezier(kfs: Keyframe<number[]>[], raw: RawKey[]): void {
  const n = kfs.length;
  if (n < 2) return;
  const sub = (a: number[], b: number[]) => a.map((v, d) => v - (b[d] ?? 0));
  kfs.forEach((k, i) => {
    const prev = kfs[Math.max(0, i - 1)];
    const next = kfs[Math.min(n - 1, i + 1)];
    const span = next.time - prev.time;
    if (raw[i].autoTemporal && span > 0) {
      const slope = sub(next.value, prev.value).map((v) => v / span);
      const single = (k.outEase?.length ?? 0) <= 1 && k.value.length > 1;
      const speeds = single ? [Math.hypot(...slope)] : slope;
      const zero = (e: Keyframe<number[]>['inEase']) => !e || e.every((x) => x.influence === 0);
      if (zero(k.inEase) && zero(k.outEase)) {
        k.inEase = speeds.map((speed) => ({ speed, influence: 1 / 6 }));
        k.outEase = speeds.map((speed) => ({ speed, influence: 1 / 6 }));
      }
    }
    const flat = (t?: number[]) => !t || t.every((x) => x === 0);
    if (raw[i].autoSpatial && flat(k.inTangent) && flat(k.outTangent) && span > 0) {
      const dir = sub(next.value, prev.value);
      const [left, right] = [k.time - prev.time, next.time - k.time];
      // an end key points a sixth of the way to its one neighbour
      k.inTangent = i === 0 ? dir.map(() => 0) : dir.map((v) => (i === n - 1 ? -v / 6 : (-v * left) / span / 3));
      k.outTangent = i === n - 1 ? dir.map(() => 0) : dir.map((v) => (i === 0 ? v / 6 : (v * right) / span / 3));
    }
  });
}

/** A static enum-like value (fill rule, line cap...); its keyframes, if any, are not followed. */
function intValue(node: Chunk | undefined, def: number, ctx: Ctx): number {
  return Math.round(numProp(node, '', '', [def], ctx).value[0]);
}

// ---------------------------------------------------------------------------------------------------------------
// Paths: om-s = tdbs (keyframes) + omks (one shap per keyframe: shph header + list of f4 points).

function readShap(shap: Chunk, scale: [number, number]): BezierPath | undefined {
  const h = child(shap, 'shph')?.data;
  const pts = child(child(shap, 'list'), 'ldat')?.data;
  if (!h || h.length < 20) return undefined;
  const hv = view(h);
  const closed = (h[3] & 0x08) === 0;
  const [x0, y0, x1, y1] = [hv.getFloat32(4), hv.getFloat32(8), hv.getFloat32(12), hv.getFloat32(16)];
  const path: BezierPath = { closed, v: [], i: [], o: [] };
  if (!pts) return path;
  const d = view(pts);
  const n = Math.floor(pts.length / 8);
  const at = (k: number): [number, number] => {
    const x = d.getFloat32(8 * k);
    const y = d.getFloat32(8 * k + 4);
    return [(x0 + (x1 - x0) * x) * scale[0], (y0 + (y1 - y0) * y) * scale[1]];
  };
  // points cycle vertex, its out handle, the next vertex's in handle (all absolute)
  const count = Math.floor(n / 3);
  for (let k = 0; k < count; k++) {
    const v = at(3 * k);
    const o = at(3 * k + 1);
    const inn = at((3 * k - 1 + 3 * count) % (3 * count));
    path.v.push(v);
    path.o.push([o[0] - v[0], o[1] - v[1]]);
    path.i.push([inn[0] - v[0], inn[1] - v[1]]);
  }
  return path;
}

const EMPTY_PATH: BezierPath = { closed: true, v: [], i: [], o: [] };

/** A path property; `scale` multiplies the stored points (mask points are fractions of the layer's size). */
function pathProp(
  node: Chunk | undefined,
  path: string,
  ctx: Ctx,
  scale: [number, number] = [1, 1],
): Property<BezierPath> {
  const p: Property<BezierPath> = { path, value: EMPTY_PATH };
  if (!node) return p;
  const tdbs = child(node, 'tdbs');
  const shapes = children(child(node, 'omks'), 'shap').map((s) => readShap(s, scale) ?? EMPTY_PATH);
  if (shapes.length) p.value = shapes[0];
  if (!tdbs) return p;
  const info = tdbsInfo(tdbs);
  if (info.expression) p.expression = info.expression;
  const keys = readKeys(tdbs, info, ctx);
  if (keys.length > 1 && keys.length === shapes.length) p.keyframes = keys.map((k, j) => toKeyframe(k, shapes[j]));
  return p;
}

// ---------------------------------------------------------------------------------------------------------------
// Gradients: GCst = tdbs + GCky (one Utf8 XML "prop.map" per keyframe).

function readStops(xml: string): GradientStops {
  const section = (key: string) => {
    const at = xml.indexOf(`<key>${key}</key>`);
    if (at < 0) return [];
    const end = xml.indexOf('<key>Stops Size</key>', at);
    const part = xml.slice(at, end < 0 ? undefined : end);
    const stops: number[][] = [];
    for (const arr of part.split('<array>').slice(1)) {
      const nums = [...arr.split('</array>')[0].matchAll(/<float>([^<]*)<\/float>/g)].map((m) => Number(m[1]));
      if (nums.every(Number.isFinite)) stops.push(nums);
    }
    return stops;
  };
  // colour stop: [offset, midpoint, r, g, b]; alpha stop: [offset, midpoint, a]
  const colorStops = section('Color Stops')
    .filter((s) => s.length >= 5)
    .sort((a, b) => a[0] - b[0]);
  const alphaStops = section('Alpha Stops')
    .filter((s) => s.length >= 3)
    .sort((a, b) => a[0] - b[0]);
  const out: GradientStops = {
    colors: colorStops.map((s): [number, number, number, number] => [s[0], s[2], s[3], s[4]]),
    opacities: alphaStops.map((s): [number, number] => [s[0], s[2]]),
  };
  if (colorStops.some((s) => s[1] !== 0.5)) out.colorMidpoints = colorStops.map((s) => s[1]);
  if (alphaStops.some((s) => s[1] !== 0.5)) out.opacityMidpoints = alphaStops.map((s) => s[1]);
  return out;
}

const DEFAULT_STOPS: GradientStops = {
  colors: [
    [0, 1, 1, 1],
    [1, 0, 0, 0],
  ],
  opacities: [
    [0, 1],
    [1, 1],
  ],
};

function stopsProp(node: Chunk | undefined, path: string, ctx: Ctx): Property<GradientStops> {
  const p: Property<GradientStops> = { path, value: DEFAULT_STOPS };
  if (!node) return p;
  const docs = children(child(node, 'GCky'), 'Utf8').map((u) => readStops(u.text ?? ''));
  if (docs.length) p.value = docs[0];
  const tdbs = child(node, 'tdbs');
  if (!tdbs) return p;
  const info = tdbsInfo(tdbs);
  if (info.expression) p.expression = info.expression;
  const keys = readKeys(tdbs, info, ctx);
  if (keys.length > 1 && keys.length === docs.length) p.keyframes = keys.map((k, j) => toKeyframe(k, docs[j]));
  return p;
}

// ---------------------------------------------------------------------------------------------------------------
// Text: ADBE Text Document = btds (tdbs keyframes + btdk COS, one document per keyframe), read with cos.ts.

const JUSTIFY: Justification[] = [
  'left',
  'right',
  'center',
  'justify-last-left',
  'justify-last-right',
  'justify-last-center',
  'justify-all',
];

const num = (v: CosValue | undefined, def: number) => (typeof v === 'number' && Number.isFinite(v) ? v : def);

function cosColor(paint: CosValue | undefined): [number, number, number, number] | undefined {
  const argb = cosPath(paint, '0', '1');
  if (!Array.isArray(argb) || argb.length < 4 || !argb.every((x) => typeof x === 'number')) return undefined;
  const [a, r, g, b] = argb as number[];
  return [r, g, b, a];
}

type CosDict = Record<string, CosValue>;
const dict = (v: CosValue | undefined): CosDict =>
  v && typeof v === 'object' && !Array.isArray(v) && !('name' in v && Object.keys(v).length === 1)
    ? (v as CosDict)
    : {};

/**
 * A text document; `defaults` are the document set's default character and paragraph styles (`/1 /2`, `/1 /3`), which
 * a run's style only overrides.
 */
function textDoc(doc: CosValue, fonts: string[], defaults: { cs: CosDict; ps: CosDict }): TextDocument {
  const raw = cosPath(doc, '0', '0');
  const text = typeof raw === 'string' ? raw.replace(/\r$/, '') : '';
  const cs = { ...defaults.cs, ...dict(cosPath(doc, '0', '6', '0', 0, '0', '0', '6')) };
  const ps = { ...defaults.ps, ...dict(cosPath(doc, '0', '5', '0', 0, '0', '0', '5')) };
  const size = num(cs['1'], 12);
  const caps = num(cs['12'], 0);
  const leadingRaw = num(cs['10'], 0);
  // paragraph /6: auto leading (a boolean or 0/1), /7 its factor of the size
  const autoLeading = ps['6'] === undefined ? true : ps['6'] !== false && ps['6'] !== 0;
  const t: TextDocument = {
    text,
    font: fonts[num(cs['0'], 0)] ?? fonts[0] ?? '',
    fontSize: size,
    strokeWidth: num(cs['63'], 0),
    strokeOverFill: cs['58'] === true,
    tracking: num(cs['8'], 0),
    justification: JUSTIFY[num(ps['0'], 0)] ?? 'left',
    allCaps: caps === 2,
    smallCaps: caps === 1 || caps === 3,
    fauxBold: cs['2'] === true,
    fauxItalic: cs['3'] === true,
    baselineShift: num(cs['9'], 0),
    horizontalScale: num(cs['6'], 1) * 100,
    verticalScale: num(cs['7'], 1) * 100,
  };
  if (!(autoLeading && leadingRaw === 0)) t.leading = leadingRaw;
  else t.leading = size * num(ps['7'], 1.2);
  const fill = cosColor(cs['53']);
  const stroke = cosColor(cs['54']);
  if (fill && cs['56'] !== false) t.fillColor = fill;
  if (stroke && cs['57'] === true) t.strokeColor = stroke;
  // box text: the layout's frame has the box [left, top, right, bottom] and its offset from the layer origin (read
  // from the corpus' paragraph text, prescan_1_flat_project); point text has neither
  const frame = cosPath(doc, '1', '2', 0, '6', 0);
  const rect = cosPath(frame, '1');
  const at = cosPath(frame, '0', '0');
  const nums = (v: CosValue | undefined, n: number): v is number[] =>
    Array.isArray(v) && v.length >= n && v.every((x) => typeof x === 'number');
  if (nums(rect, 4) && nums(at, 2)) {
    t.box = { position: [at[0] + rect[0], at[1] + rect[1]], size: [rect[2] - rect[0], rect[3] - rect[1]] };
  }
  return t;
}

function textProp(layer: Chunk, path: string, ctx: Ctx): Property<TextDocument> | undefined {
  const props = find(child(layer, 'tdgp'), 'ADBE Text Properties');
  const node = find(props, 'ADBE Text Document');
  const btdk = child(node, 'btdk')?.data;
  if (!node || !btdk) return undefined;
  let cos: Record<string, CosValue>;
  try {
    cos = parseCos(btdk);
  } catch {
    return undefined; // an unreadable text document draws nothing; the layer stays
  }
  const fontList = cosPath(cos, '0', '1', '0');
  const fonts = Array.isArray(fontList)
    ? fontList.map((f) => {
        const n = cosPath(f, '0', '0', '0');
        return typeof n === 'string' ? n : '';
      })
    : [];
  const docList = cosPath(cos, '1', '1');
  const defaults = { cs: dict(cosPath(cos, '1', '2')), ps: dict(cosPath(cos, '1', '3')) };
  const docs = Array.isArray(docList) ? docList.map((d) => textDoc(d, fonts, defaults)) : [];
  if (!docs.length) return undefined;
  const p: Property<TextDocument> = { path, value: docs[0] };
  const tdbs = child(node, 'tdbs');
  if (tdbs) {
    const info = tdbsInfo(tdbs);
    if (info.expression) p.expression = info.expression;
    const keys = readKeys(tdbs, info, ctx);
    if (keys.length > 1 && keys.length === docs.length)
      p.keyframes = keys.map((k, j) => ({
        ...toKeyframe(k, docs[j]),
        inInterpolation: 'hold',
        outInterpolation: 'hold',
      }));
  }
  return p;
}

// ---------------------------------------------------------------------------------------------------------------
// Text animators: ADBE Text Animators > ADBE Text Animator > ADBE Text Selectors + ADBE Text Animator Properties
// (match names as bodymovin's textAnimatorHelper reads them; the corpus' layer_text.aep has range, wiggly and
// expression selectors). Enumerations are 1-based as the Timeline's menus; values are stored as shown (percent).

const BASES: TextSelectorBasis[] = ['characters', 'characters-excluding-spaces', 'words', 'lines'];
const MODES: TextSelectorMode[] = ['add', 'subtract', 'intersect', 'min', 'max', 'difference'];
const SHAPES: TextRangeSelector['shape'][] = ['square', 'ramp-up', 'ramp-down', 'triangle', 'round', 'smooth'];
/** Animator properties drawn, by match name: [model key, default]. */
const ANIMATOR_PROPS: Record<string, [keyof TextAnimatorProperties, number[]]> = {
  'ADBE Text Anchor Point 3D': ['anchor', [0, 0, 0]],
  'ADBE Text Position 3D': ['position', [0, 0, 0]],
  'ADBE Text Scale 3D': ['scale', [100, 100, 100]],
  'ADBE Text Skew': ['skew', [0]],
  'ADBE Text Skew Axis': ['skewAxis', [0]],
  'ADBE Text Rotation': ['rotation', [0]],
  'ADBE Text Opacity': ['opacity', [100]],
  'ADBE Text Fill Color': ['fillColor', [1, 0, 0, 1]],
  'ADBE Text Stroke Color': ['strokeColor', [1, 0, 0, 1]],
  'ADBE Text Stroke Width': ['strokeWidth', [0]],
  'ADBE Text Tracking Amount': ['tracking', [0]],
  'ADBE Text Character Offset': ['characterOffset', [0]],
  'ADBE Text Character Range': ['characterRange', [1]],
};
/** Properties that change nothing drawn by themselves (the tracking type's before/after split is not read). */
const ANIMATOR_SILENT = new Set(['ADBE Text Track Type', 'ADBE Text Character Change Type']);
/** The default Index End: every unit (After Effects grows it with the text). */
const ALL_UNITS = 1e6;

function textAnimators(group: Chunk | undefined, base: string, ctx: Ctx): TextAnimator[] {
  return entries(group)
    .filter(([mn]) => mn === 'ADBE Text Animator')
    .map(([, node], i) => {
      const path = `${base}>ADBE Text Animator`;
      const animator: TextAnimator = {
        name: groupName(node, `Animator ${i + 1}`),
        enabled: enabledOf(node),
        selectors: [],
        properties: {},
        unsupported: [],
      };
      for (const [mn, sel] of entries(find(node, 'ADBE Text Selectors'))) {
        const selector = textSelector(mn, sel, `${path}>ADBE Text Selectors>${mn}`, ctx);
        if (selector) animator.selectors.push(selector);
      }
      for (const [mn, prop] of entries(find(node, 'ADBE Text Animator Properties'))) {
        const known = ANIMATOR_PROPS[mn];
        if (known)
          animator.properties[known[0]] = numProp(
            prop,
            mn,
            `${path}>ADBE Text Animator Properties>${mn}`,
            known[1],
            ctx,
          );
        else if (!ANIMATOR_SILENT.has(mn)) animator.unsupported.push(mn);
      }
      return animator;
    });
}

function textSelector(mn: string, node: Chunk, path: string, ctx: Ctx): TextSelector | undefined {
  const name = groupName(node, mn);
  const enabled = enabledOf(node);
  const adv = find(node, 'ADBE Text Range Advanced');
  const at = (g: Chunk | undefined, prop: string, def: number[], inner = '') =>
    numProp(find(g, prop), prop, `${path}${inner}>${prop}`, def, ctx);
  const pick = <T>(list: T[], g: Chunk | undefined, prop: string, def: number) =>
    list[intValue(find(g, prop), def, ctx) - 1] ?? list[def - 1];
  if (mn === 'ADBE Text Selector') {
    const units = intValue(find(adv, 'ADBE Text Range Units'), 1, ctx) === 2 ? 'index' : 'percent';
    const a = (prop: string, def: number[]) => at(adv, prop, def, '>ADBE Text Range Advanced');
    const index = units === 'index';
    return {
      kind: 'range',
      name,
      enabled,
      units,
      basedOn: pick(BASES, adv, 'ADBE Text Range Type2', 1),
      mode: pick(MODES, adv, 'ADBE Text Selector Mode', 1),
      start: at(node, index ? 'ADBE Text Index Start' : 'ADBE Text Percent Start', [0]),
      end: at(node, index ? 'ADBE Text Index End' : 'ADBE Text Percent End', [index ? ALL_UNITS : 100]),
      offset: at(node, index ? 'ADBE Text Index Offset' : 'ADBE Text Percent Offset', [0]),
      amount: a('ADBE Text Selector Max Amount', [100]),
      shape: pick(SHAPES, adv, 'ADBE Text Range Shape', 1),
      smoothness: a('ADBE Text Selector Smoothness', [100]),
      easeHigh: a('ADBE Text Levels Max Ease', [0]),
      easeLow: a('ADBE Text Levels Min Ease', [0]),
      randomize: intValue(find(adv, 'ADBE Text Randomize Order'), 0, ctx) === 1,
      seed: a('ADBE Text Random Seed', [0]),
    };
  }
  if (mn === 'ADBE Text Wiggly Selector')
    return {
      kind: 'wiggly',
      name,
      enabled,
      basedOn: pick(BASES, node, 'ADBE Text Range Type2', 1),
      mode: pick(MODES, node, 'ADBE Text Selector Mode', 3),
      maxAmount: at(node, 'ADBE Text Wiggly Max Amount', [50]),
      minAmount: at(node, 'ADBE Text Wiggly Min Amount', [-50]),
      wigglesPerSecond: at(node, 'ADBE Text Temporal Freq', [2]),
      correlation: at(node, 'ADBE Text Character Correlation', [50]),
      temporalPhase: at(node, 'ADBE Text Temporal Phase', [0]),
      spatialPhase: at(node, 'ADBE Text Spatial Phase', [0]),
      lockDimensions: at(node, 'ADBE Text Wiggly Lock Dim', [0]),
      seed: at(node, 'ADBE Text Wiggly Random Seed', [0]),
    };
  if (mn === 'ADBE Text Expressible Selector')
    return {
      kind: 'expression',
      name,
      enabled,
      basedOn: pick(BASES, node, 'ADBE Text Range Type2', 1),
      amount: at(node, 'ADBE Text Expressible Amount', [100, 100, 100]),
    };
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Enumerations stored as small integers (ldta bytes, mkif, shape enums).

/** ldta byte 99 (py-aep `_BLENDING_MODE_BINARY_MAP`). */
const LAYER_BLEND: BlendMode[] = [
  'normal', // 0: cameras, lights and nulls
  'unknown',
  'normal',
  'dissolve',
  'add',
  'multiply',
  'screen',
  'overlay',
  'soft-light',
  'hard-light',
  'darken',
  'lighten',
  'classic-difference',
  'hue',
  'saturation',
  'color',
  'luminosity',
  'stencil-alpha',
  'stencil-luma',
  'silhouette-alpha',
  'silhouette-luma',
  'luminescent-premul',
  'alpha-add',
  'classic-color-dodge',
  'classic-color-burn',
  'exclusion',
  'difference',
  'color-dodge',
  'color-burn',
  'linear-dodge',
  'linear-burn',
  'linear-light',
  'vivid-light',
  'pin-light',
  'hard-mix',
  'lighter-color',
  'darker-color',
  'subtract',
  'divide',
];

/** ldta byte 107: 0 none, 1 alpha, 2 alpha inverted, 3 luma, 4 luma inverted. */
const MATTE: (MatteMode | undefined)[] = [undefined, 'alpha', 'alpha-inverted', 'luma', 'luma-inverted'];
const MASK_MODE: MaskMode[] = ['none', 'add', 'subtract', 'intersect', 'darken', 'lighten', 'difference'];
const CAP: LineCap[] = ['butt', 'butt', 'round', 'square'];
const JOIN: LineJoin[] = ['miter', 'miter', 'round', 'bevel'];

// ---------------------------------------------------------------------------------------------------------------
// Shape layer contents (ADBE Root Vectors Group).

const SUPPORTED = new Set([
  'ADBE Vector Group',
  'ADBE Vector Shape - Rect',
  'ADBE Vector Shape - Ellipse',
  'ADBE Vector Shape - Star',
  'ADBE Vector Shape - Group',
  'ADBE Vector Graphic - Fill',
  'ADBE Vector Graphic - Stroke',
  'ADBE Vector Graphic - G-Fill',
  'ADBE Vector Graphic - G-Stroke',
  'ADBE Vector Filter - Trim',
]);

/**
 * Shape blend modes (ADBE Vector Blend Mode): the entry of After Effects' menu, separators counted (2, 8, 14, 22, 25).
 * Tencent's PAG exporter (ExportShapeBlendMode, read through the AEGP API) names 1, 3-5, 9-11, 15-17, 23, 24, 26-29;
 * the rest follow the menu's order (Linear Burn, Darker Color; Linear Dodge, Lighter Color; Linear Light, Vivid Light,
 * Pin Light, Hard Mix). ae-renders' fill-blend-darken stores 3 for Darken (its Lottie export says darken).
 */
const SHAPE_BLEND: Record<number, BlendMode> = {
  1: 'normal',
  3: 'darken',
  4: 'multiply',
  5: 'color-burn',
  6: 'linear-burn',
  7: 'darker-color',
  9: 'lighten',
  10: 'screen',
  11: 'color-dodge',
  12: 'linear-dodge',
  13: 'lighter-color',
  15: 'overlay',
  16: 'soft-light',
  17: 'hard-light',
  18: 'linear-light',
  19: 'vivid-light',
  20: 'pin-light',
  21: 'hard-mix',
  23: 'difference',
  24: 'exclusion',
  26: 'hue',
  27: 'saturation',
  28: 'color',
  29: 'luminosity',
};
const shapeBlend = (node: Chunk | undefined, ctx: Ctx): BlendMode => SHAPE_BLEND[intValue(node, 1, ctx)] ?? 'unknown';

function shapeTransform(g: Chunk | undefined, path: string, ctx: Ctx): ShapeTransform {
  const p = (name: string, def: number[]) => numProp(find(g, name), name, `${path}>${name}`, def, ctx);
  return {
    anchor: p('ADBE Vector Anchor', [0, 0]),
    position: p('ADBE Vector Position', [0, 0]),
    scale: p('ADBE Vector Scale', [100, 100]),
    skew: p('ADBE Vector Skew', [0]),
    skewAxis: p('ADBE Vector Skew Axis', [0]),
    rotation: p('ADBE Vector Rotation', [0]),
    opacity: p('ADBE Vector Group Opacity', [100]),
  };
}

function dashes(g: Chunk | undefined, path: string, ctx: Ctx): Dash[] {
  const out: Dash[] = [];
  for (const [name, node] of entries(find(g, 'ADBE Vector Stroke Dashes'))) {
    const kind = name.startsWith('ADBE Vector Stroke Dash')
      ? 'dash'
      : name.startsWith('ADBE Vector Stroke Gap')
        ? 'gap'
        : name === 'ADBE Vector Stroke Offset'
          ? 'offset'
          : undefined;
    // dashes and gaps default to 10 (py-aep specs.py), the offset to 0
    if (kind) out.push({ kind, length: numProp(node, name, `${path}>${name}`, [kind === 'offset' ? 0 : 10], ctx) });
  }
  return out;
}

/** The fill rule of a fill or gradient fill: 1 non-zero, 2 even-odd. */
const fillRule = (node: Chunk, ctx: Ctx): 'nonzero' | 'evenodd' =>
  intValue(find(node, 'ADBE Vector Fill Rule'), 1, ctx) === 2 ? 'evenodd' : 'nonzero';

/** Width, caps, joins and dashes of a stroke or gradient stroke. */
function strokeStyle(node: Chunk, path: string, ctx: Ctx) {
  const p = (name: string, def: number[]) => numProp(find(node, name), name, `${path}>${name}`, def, ctx);
  return {
    width: p('ADBE Vector Stroke Width', [2]),
    cap: CAP[intValue(find(node, 'ADBE Vector Stroke Line Cap'), 1, ctx)] ?? 'butt',
    join: JOIN[intValue(find(node, 'ADBE Vector Stroke Line Join'), 1, ctx)] ?? 'miter',
    miterLimit: p('ADBE Vector Stroke Miter Limit', [4]),
    dashes: dashes(node, path, ctx),
  };
}

function shapeItems(group: Chunk | undefined, path: string, ctx: Ctx, depth: number): ShapeItem[] {
  if (depth > MAX_DEPTH) return [];
  const items: ShapeItem[] = [];
  for (const [mn, node] of entries(group)) {
    const here = `${path}>${mn}`;
    const base = { name: groupName(node, mn), matchName: mn, enabled: enabledOf(node) };
    const p = (name: string, def: number[]) => numProp(find(node, name), name, `${here}>${name}`, def, ctx);
    const reversed = intValue(find(node, 'ADBE Vector Shape Direction'), 1, ctx) === 3;
    switch (mn) {
      case 'ADBE Vector Group':
        items.push({
          ...base,
          kind: 'group',
          blendMode: shapeBlend(find(node, 'ADBE Vector Blend Mode'), ctx),
          items: shapeItems(find(node, 'ADBE Vectors Group'), `${here}>ADBE Vectors Group`, ctx, depth + 1),
          transform: shapeTransform(
            find(node, 'ADBE Vector Transform Group'),
            `${here}>ADBE Vector Transform Group`,
            ctx,
          ),
        });
        break;
      case 'ADBE Vector Shape - Rect':
        items.push({
          ...base,
          kind: 'rect',
          reversed,
          size: p('ADBE Vector Rect Size', [100, 100]),
          position: p('ADBE Vector Rect Position', [0, 0]),
          roundness: p('ADBE Vector Rect Roundness', [0]),
        });
        break;
      case 'ADBE Vector Shape - Ellipse':
        items.push({
          ...base,
          kind: 'ellipse',
          reversed,
          size: p('ADBE Vector Ellipse Size', [100, 100]),
          position: p('ADBE Vector Ellipse Position', [0, 0]),
        });
        break;
      case 'ADBE Vector Shape - Star':
        items.push({
          ...base,
          kind: 'star',
          reversed,
          starType: intValue(find(node, 'ADBE Vector Star Type'), 1, ctx) === 2 ? 'polygon' : 'star',
          points: p('ADBE Vector Star Points', [5]),
          position: p('ADBE Vector Star Position', [0, 0]),
          rotation: p('ADBE Vector Star Rotation', [0]),
          innerRadius: p('ADBE Vector Star Inner Radius', [50]),
          outerRadius: p('ADBE Vector Star Outer Radius', [100]),
          // After Effects' match names spell "Roundess"
          innerRoundness: p('ADBE Vector Star Inner Roundess', [0]),
          outerRoundness: p('ADBE Vector Star Outer Roundess', [0]),
        });
        break;
      case 'ADBE Vector Shape - Group':
        items.push({
          ...base,
          kind: 'path',
          reversed,
          path: pathProp(find(node, 'ADBE Vector Shape'), `${here}>ADBE Vector Shape`, ctx),
        });
        break;
      case 'ADBE Vector Graphic - Fill':
        items.push({
          ...base,
          kind: 'fill',
          blendMode: shapeBlend(find(node, 'ADBE Vector Blend Mode'), ctx),
          above: intValue(find(node, 'ADBE Vector Composite Order'), 1, ctx) === 2,
          color: p('ADBE Vector Fill Color', [1, 0, 0, 1]),
          opacity: p('ADBE Vector Fill Opacity', [100]),
          rule: fillRule(node, ctx),
        });
        break;
      case 'ADBE Vector Graphic - Stroke':
        items.push({
          ...base,
          kind: 'stroke',
          blendMode: shapeBlend(find(node, 'ADBE Vector Blend Mode'), ctx),
          above: intValue(find(node, 'ADBE Vector Composite Order'), 1, ctx) === 2,
          color: p('ADBE Vector Stroke Color', [1, 1, 1, 1]),
          opacity: p('ADBE Vector Stroke Opacity', [100]),
          ...strokeStyle(node, here, ctx),
        });
        break;
      case 'ADBE Vector Graphic - G-Fill':
      case 'ADBE Vector Graphic - G-Stroke': {
        const grad = {
          ...base,
          blendMode: shapeBlend(find(node, 'ADBE Vector Blend Mode'), ctx),
          above: intValue(find(node, 'ADBE Vector Composite Order'), 1, ctx) === 2,
          gradientType:
            intValue(find(node, 'ADBE Vector Grad Type'), 1, ctx) === 2 ? ('radial' as const) : ('linear' as const),
          start: p('ADBE Vector Grad Start Pt', [0, 0]),
          end: p('ADBE Vector Grad End Pt', [100, 0]),
          highlightLength: p('ADBE Vector Grad HiLite Length', [0]),
          highlightAngle: p('ADBE Vector Grad HiLite Angle', [0]),
          stops: stopsProp(find(node, 'ADBE Vector Grad Colors'), `${here}>ADBE Vector Grad Colors`, ctx),
        };
        if (mn === 'ADBE Vector Graphic - G-Fill')
          items.push({
            ...grad,
            kind: 'gradient-fill',
            opacity: p('ADBE Vector Fill Opacity', [100]),
            rule: fillRule(node, ctx),
          });
        else
          items.push({
            ...grad,
            kind: 'gradient-stroke',
            opacity: p('ADBE Vector Stroke Opacity', [100]),
            ...strokeStyle(node, here, ctx),
          });
        break;
      }
      case 'ADBE Vector Filter - Trim':
        items.push({
          ...base,
          kind: 'trim',
          start: p('ADBE Vector Trim Start', [0]),
          end: p('ADBE Vector Trim End', [100]),
          offset: p('ADBE Vector Trim Offset', [0]),
          // 1 "Simultaneously": each path on its own; 2 "Individually": one after another (model.ts)
          individually: intValue(find(node, 'ADBE Vector Trim Type'), 1, ctx) === 1,
        });
        break;
      case 'ADBE Vector Filter - PB':
        items.push({ ...base, kind: 'modifier', op: 'pucker-bloat', amount: p('ADBE Vector PuckerBloat Amount', [0]) });
        break;
      case 'ADBE Vector Filter - RC':
        items.push({
          ...base,
          kind: 'modifier',
          op: 'round-corners',
          amount: p('ADBE Vector RoundCorner Radius', [10]),
        });
        break;
      case 'ADBE Vector Filter - Zigzag':
        items.push({
          ...base,
          kind: 'modifier',
          op: 'zig-zag',
          // absent from ae-renders' zig-zag, whose bodymovin export (After Effects' scripting) says 5
          amount: p('ADBE Vector Zigzag Size', [5]),
          ridges: p('ADBE Vector Zigzag Detail', [5]),
          // 1 corner, 2 smooth
          smooth: intValue(find(node, 'ADBE Vector Zigzag Points'), 1, ctx) === 2,
        });
        break;
      case 'ADBE Vector Filter - Offset':
        items.push({
          ...base,
          kind: 'modifier',
          op: 'offset',
          amount: p('ADBE Vector Offset Amount', [10]),
          join: JOIN[intValue(find(node, 'ADBE Vector Offset Line Join'), 1, ctx)] ?? 'miter',
          miterLimit: p('ADBE Vector Offset Miter Limit', [4]),
        });
        break;
      case 'ADBE Vector Filter - Twist':
        items.push({
          ...base,
          kind: 'modifier',
          op: 'twist',
          amount: p('ADBE Vector Twist Angle', [0]),
          center: p('ADBE Vector Twist Center', [0, 0]),
        });
        break;
      case 'ADBE Vector Filter - Merge':
        items.push({
          ...base,
          kind: 'merge',
          mode: MERGE_MODES[intValue(find(node, 'ADBE Vector Merge Type'), 1, ctx)] ?? 'merge',
        });
        break;
      case 'ADBE Vector Filter - Repeater': {
        const tr = find(node, 'ADBE Vector Repeater Transform');
        const t = (name: string, def: number[]) =>
          numProp(find(tr, name), name, `${here}>ADBE Vector Repeater Transform>${name}`, def, ctx);
        items.push({
          ...base,
          kind: 'repeater',
          copies: p('ADBE Vector Repeater Copies', [3]),
          offset: p('ADBE Vector Repeater Offset', [0]),
          // 1 below, 2 above (lottie-web draws bodymovin's m so)
          above: intValue(find(node, 'ADBE Vector Repeater Order'), 1, ctx) === 2,
          anchor: t('ADBE Vector Repeater Anchor', [0, 0]),
          position: t('ADBE Vector Repeater Position', [100, 0]),
          scale: t('ADBE Vector Repeater Scale', [100, 100]),
          rotation: t('ADBE Vector Repeater Rotation', [0]),
          startOpacity: t('ADBE Vector Repeater Opacity 1', [100]),
          endOpacity: t('ADBE Vector Repeater Opacity 2', [100]),
        });
        break;
      }
      default:
        if (!SUPPORTED.has(mn)) items.push({ ...base, kind: 'unsupported' });
    }
  }
  return items;
}

// ---------------------------------------------------------------------------------------------------------------
// Layers.

/**
 * An anchor point stored as a fraction of the layer's source size (x 1 = the source's width) rather than in pixels:
 * After Effects 23+ writes a layer's anchor so when it was set in the Timeline (its tdb4 then has 6.25e-12 at byte 16,
 * where pixel-valued properties have 1e-4). Found on the ae-renders projects (anchor [40, 0] of a 40 px solid stored
 * as [1, 0]; an 80 px precomp's [80, 0] as [1, 0]) and KraftyFX/aex's layer_transform.aep (a 100 px null's anchor
 * [11, 22, 33] stored as [0.11, 0.22, 0.33]; the project's own test says [11, 22, 33]): z is taken by the width,
 * which that square null cannot tell from the height.
 */
function sourceRelative(tdbs: Chunk): boolean {
  const d = child(tdbs, 'tdb4')?.data;
  if (!d || d.length < 24) return false;
  const step = view(d).getFloat64(16);
  return step > 0 && step < 1e-9;
}

/** A numeric property with every value (static, keys, tangents) multiplied per dimension, speeds by their mean. */
function scaleProp(p: NumProperty, k: number[]): NumProperty {
  const mul = (v: number[]) => v.map((x, d) => x * (k[d] ?? 1));
  const mean = (k[0] + (k[1] ?? k[0])) / 2;
  const ease = (e?: Ease[]) => e?.map((x, d) => ({ ...x, speed: x.speed * (e.length > 1 ? (k[d] ?? 1) : mean) }));
  const out: NumProperty = { ...p, value: mul(p.value) };
  if (p.keyframes)
    out.keyframes = p.keyframes.map((f) => {
      const g = { ...f, value: mul(f.value) };
      if (f.inTangent) g.inTangent = mul(f.inTangent);
      if (f.outTangent) g.outTangent = mul(f.outTangent);
      if (f.inEase) g.inEase = ease(f.inEase);
      if (f.outEase) g.outEase = ease(f.outEase);
      return g;
    });
  return out;
}

/**
 * A layer's transform. After Effects leaves out properties at their default: position defaults to the composition's
 * centre, the anchor to the centre of the layer's source (0,0 for text, shapes and nulls).
 */
function readTransform(g: Chunk | undefined, ctx: Ctx, anchor: number[], size?: [number, number]): Transform {
  const path = 'ADBE Transform Group';
  const p = (name: string, def: number[]) => numProp(find(g, name), name, `${path}>${name}`, def, ctx);
  const [cx, cy] = [ctx.compSize[0] / 2, ctx.compSize[1] / 2];
  const anchorNode = find(g, 'ADBE Anchor Point');
  const t: Transform = {
    anchor:
      size && anchorNode && sourceRelative(anchorNode)
        ? scaleProp(p('ADBE Anchor Point', anchor), [size[0], size[1], size[0]])
        : p('ADBE Anchor Point', anchor),
    scale: p('ADBE Scale', [100, 100, 100]),
    rotation: p('ADBE Rotate Z', [0]),
    opacity: p('ADBE Opacity', [100]),
  };
  const pos = find(g, 'ADBE Position');
  const sep = pos ? child(pos, 'tdsb')?.data : undefined;
  // dimensions separated: tdsb bit 1 of the leader (py-aep tdsb_body)
  if (sep && sep.length >= 4 && (sep[3] & 0x02) !== 0) {
    t.positionX = p('ADBE Position_0', [cx]);
    t.positionY = p('ADBE Position_1', [cy]);
    t.positionZ = p('ADBE Position_2', [0]);
  } else t.position = p('ADBE Position', [cx, cy, 0]);
  for (const [key, name] of [
    ['rotationX', 'ADBE Rotate X'],
    ['rotationY', 'ADBE Rotate Y'],
  ] as const) {
    const node = find(g, name);
    if (node?.id === 'tdbs') t[key] = p(name, [0]);
  }
  // orientation lives in an otst list whose cdat is little-endian (py-aep aep.ksy); its keys (otky) are not read:
  // it only tells whether a 3D layer is tilted
  const otst = find(g, 'ADBE Orientation');
  const ocdat = child(child(otst, 'tdbs'), 'cdat')?.data;
  if (ocdat && ocdat.length >= 24) {
    const d = view(ocdat);
    t.orientation = {
      path: 'ADBE Transform Group>ADBE Orientation',
      value: [0, 8, 16].map((k) => d.getFloat64(k, true)),
    };
  }
  return t;
}

/**
 * A layer's masks. Their points are stored as fractions of the layer's size (py-aep scales them by the composition's,
 * which is the same for its samples' full-frame solids); text and shape layers, which have no size, store pixels
 * (corpus: nm05's text masks, layer_effects' shape mask come out at the text and shape only so).
 */
function readMasks(g: Chunk | undefined, ctx: Ctx, size: [number, number]): Mask[] {
  const out: Mask[] = [];
  const list = g?.children ?? [];
  for (let i = 0; i < list.length; i++) {
    if (list[i].id !== 'tdmn' || matchName(list[i]) !== 'ADBE Mask Atom') continue;
    // a mask atom is tdmn, mkif (mode, inverted), then its tdgp
    let j = i + 1;
    let mkif: Uint8Array | undefined;
    if (list[j]?.id === 'mkif') mkif = list[j++].data;
    const atom = list[j];
    if (!atom || atom.id !== 'tdgp') continue;
    i = j;
    const path = `ADBE Mask Parade>ADBE Mask Atom`;
    const p = (name: string, def: number[]) => numProp(find(atom, name), name, `${path}>${name}`, def, ctx);
    const shape = find(atom, 'ADBE Mask Shape');
    const mask: Mask = {
      name: groupName(atom, `Mask ${out.length + 1}`),
      mode: mkif && mkif.length >= 8 ? (MASK_MODE[view(mkif).getUint16(6)] ?? 'add') : 'add',
      inverted: mkif ? mkif[0] === 1 : false,
      path: pathProp(find(atom, 'ADBE Mask Shape'), `${path}>ADBE Mask Shape`, ctx, size),
      opacity: p('ADBE Mask Opacity', [100]),
      feather: p('ADBE Mask Feather', [0, 0]),
      expansion: p('ADBE Mask Offset', [0]),
    };
    // mkif byte 3: feather falloff, 0 smooth (the default), 1 linear (py-aep `mkif`)
    if (mkif && mkif.length > 3 && mkif[3] === 1) mask.featherFalloff = 'linear';
    if (variableFeather(shape)) mask.variableFeather = true;
    out.push(mask);
  }
  return out;
}

/**
 * Whether a mask path holds variable-width feather points with a radius: each of its shapes (one per keyframe) keeps
 * them in an `fth5` chunk after its points, 32 bytes a point with the radius a float64 at byte 16 (checked against
 * the corpus' layer_masks, whose radii KraftyFX/aex's tests read through ExtendScript: 74.28, 0, 54.67).
 */
function variableFeather(shape: Chunk | undefined): boolean {
  for (const shap of children(child(shape, 'omks'), 'shap')) {
    const d = child(shap, 'fth5')?.data;
    if (!d) continue;
    for (let k = 0; k + 32 <= d.length; k += 32) if (Math.abs(view(d).getFloat64(k + 16)) > 1e-6) return true;
  }
  return false;
}

function readEffects(g: Chunk | undefined, ctx: Ctx, size: [number, number], defs: Map<string, Chunk>): Effect[] {
  const list = g?.children ?? [];
  return entries(g).map(([mn, first]) => {
    // Roto Brush keeps its matte cache (a Utf8) and Puppet its engine version (engv) between its tdmn and its sspc
    const at = list.indexOf(first);
    const next = list.slice(at).find((c) => c.id === 'sspc' || c.id === 'tdmn');
    const node = first.id !== 'sspc' && next?.id === 'sspc' ? next : first;
    const effect: Effect = {
      matchName: mn,
      name: nameOf(child(node, 'fnam')) || mn,
      enabled: enabledOf(child(node, 'tdgp') ?? node),
    };
    const params = readEffectParams(node, mn, ctx, size, defs.get(mn));
    if (params.length) effect.params = params;
    const cache = mn === 'ADBE Samurai' ? list.slice(at, list.indexOf(node)).find((c) => c.id === 'Utf8') : undefined;
    if (cache?.text) effect.matte = parseRotoMatte(cache.text);
    return effect;
  });
}

/** `pard` byte 15 (the SDK's PF_Param_* numbering; py-aep aep.ksy `property_control_type`); 9, 13, 14 are skipped. */
const PARAM_TYPE: Record<number, EffectParamType> = {
  0: 'layer',
  1: 'integer',
  2: 'scalar',
  3: 'angle',
  4: 'checkbox',
  5: 'color',
  6: 'point',
  7: 'popup',
  10: 'slider',
  11: 'curve',
  12: 'mask',
  18: 'point3d',
};

/**
 * An effect's parameters: the definitions (`parT`: tdmn + pard [+ pdnm]) in display order, each with its value from
 * the effect's `tdgp` when the file has it there, else the value the definition holds (After Effects leaves
 * parameters at that value out). pard: type u8@15, name@16 (32 bytes), value@56: f8 for sliders, s32 16.16 for
 * scalars and angles, u32 for checkboxes and popups, ARGB bytes for colours, two s32 16.16 percent of the layer for
 * points (docs/motion.md "Effects"). An effect without its own definitions (an empty parT) uses the first the project has.
 */
function readEffectParams(
  sspc: Chunk,
  mn: string,
  ctx: Ctx,
  size: [number, number],
  shared: Chunk | undefined,
): EffectParam[] {
  const own = child(sspc, 'parT');
  const defs = (own?.children?.some((c) => c.id === 'pard') ? own : shared)?.children ?? [];
  const values = child(sspc, 'tdgp');
  const out: EffectParam[] = [];
  for (let i = 0; i + 1 < defs.length; i++) {
    if (defs[i].id !== 'tdmn' || defs[i + 1].id !== 'pard') continue;
    const pmn = matchName(defs[i]);
    const pard = defs[i + 1].data!;
    const label = defs[i + 2]?.id === 'pdnm' ? nameOf(defs[i + 2]) : '';
    const type = pard.length >= 64 ? PARAM_TYPE[pard[15]] : undefined;
    // the first definition (-0000) is the layer the effect works on, not a parameter
    if (!type || pmn.endsWith('-0000')) continue;
    const d = view(pard);
    const fixed = (at: number) => d.getInt32(at) / 65536;
    const name = cString(pard, 16, 32).trim() || (type === 'popup' ? '' : label);
    // the definition's value is the last one set in the project (not always this instance's default): a known default
    // comes first; checkboxes and popups carry their own default (u8@60, u16@62)
    let def: number[] | undefined;
    if (type === 'checkbox') def = [pard[60]];
    else if (type === 'popup') def = [d.getUint16(62) || d.getUint32(56)];
    else if ((def = effectDefault(mn, name))) def = def.slice();
    else if (type === 'slider') def = [d.getFloat64(56)];
    else if (type === 'scalar' || type === 'angle') def = [fixed(56)];
    else if (type === 'integer') def = [d.getUint32(56)];
    else if (type === 'color') def = [pard[61] / 255, pard[62] / 255, pard[63] / 255, pard[60] / 255];
    else if (type === 'point') def = [(fixed(56) / 100) * size[0], (fixed(60) / 100) * size[1]];
    else if (type === 'point3d') def = [0, 0, 0];
    else def = [0];
    const tdbs = leafAt(values, [pmn]);
    const param: EffectParam = {
      matchName: pmn,
      name,
      type,
      value: numProp(tdbs, '', `ADBE Effect Parade>${mn}>${pmn}`, def, ctx),
    };
    if (type === 'popup' && label) param.options = label.split('|');
    if (type === 'layer') {
      const id = child(tdbs, 'tdpi')?.data;
      param.layerId = id && id.length >= 4 ? view(id).getInt32(0) : 0;
    }
    if (type === 'curve') {
      const arbitrary = arbitraryState(defs[i + 2], values, pmn);
      if (arbitrary) param.arbitrary = arbitrary;
    }
    out.push(param);
  }
  return out;
}

/**
 * An arbitrary-data parameter's state: the definition's data (`aRbp` after its `pard`) against the effect's (`aRbs`
 * holding `aRbp`, after the value's `tdbs` in `tdgp`). The same bytes mean the parameter was never edited.
 */
function arbitraryState(
  def: Chunk | undefined,
  values: Chunk | undefined,
  pmn: string,
): 'default' | 'edited' | undefined {
  const list = values?.children ?? [];
  const at = list.findIndex((c) => c.id === 'tdmn' && matchName(c) === pmn);
  const own = at < 0 ? undefined : list.slice(at + 1, at + 3).find((c) => c.id === 'aRbs');
  const data = child(own, 'aRbp')?.data;
  if (!data) return undefined;
  const base = def?.id === 'aRbp' ? def.data : undefined;
  return base?.length === data.length && base.every((b, k) => b === data[k]) ? 'default' : 'edited';
}

/** Layer markers: mrst = tdbs (one key per marker: its time) + mrky (one Nmrd per marker: NmHd, then the comment). */
function readMarkers(mrst: Chunk | undefined, ctx: Ctx): { time: number; comment: string }[] {
  const tdbs = child(mrst, 'tdbs');
  if (!tdbs) return [];
  const notes = children(child(mrst, 'mrky'), 'Nmrd');
  return readKeys(tdbs, tdbsInfo(tdbs), ctx).map((k, i) => ({
    time: k.time,
    comment: child(notes[i], 'Utf8')?.text ?? '',
  }));
}

/**
 * Layer styles: each `<style>/enabled` group that is switched on, with the numeric parameters the file stores in it
 * (`dropShadow/distance`...; the ones left out are at After Effects' defaults, which the drawer knows).
 */
function readStyles(g: Chunk | undefined, ctx: Ctx): LayerStyle[] {
  return entries(g)
    .filter(([mn, n]) => mn !== 'ADBE Blend Options Group' && enabledOf(n))
    .map(([mn, node]) => {
      const kind = mn.split('/')[0];
      const style: LayerStyle = { kind, params: {} };
      for (const [pmn, leaf] of entries(node)) {
        if (pmn === `${kind}/gradient`) style.gradient = stopsProp(leaf, `ADBE Layer Styles>${mn}>${pmn}`, ctx);
        else if (leaf.id === 'tdbs') style.params[pmn] = numProp(leaf, '', `ADBE Layer Styles>${mn}>${pmn}`, [0], ctx);
      }
      return style;
    });
}

/** The size of a layer's source (footage, solid or composition); undefined for layers without one. */
function sourceSize(
  source: InspectedLayer['source'],
  footage: Map<number, Footage>,
  comps: Map<number, InspectedComposition>,
): [number, number] | undefined {
  if (!source) return undefined;
  const f = footage.get(source.id) ?? comps.get(source.id);
  return f && f.width && f.height ? [f.width, f.height] : undefined;
}

interface Refs {
  footage: Map<number, Footage>;
  comps: Map<number, InspectedComposition>;
  /** Effect parameter definitions (`parT`) by effect match name, from the project's `EfdG` list. */
  effectDefs: Map<string, Chunk>;
}

/** A layer: what inspect read (index, id, name, type, source, expressions) and what drawing needs besides. */
function readLayer(node: Chunk, info: InspectedLayer, ctx: Ctx, refs: Refs): Layer {
  const ld = child(node, 'ldta')!.data!; // inspect has checked it is there and long enough
  const d = view(ld);
  const sec = (n: number, den: number) => (d.getUint32(den) > 0 ? d.getInt32(n) / d.getUint32(den) : 0);
  const startTime = sec(12, 16);
  const stretchDen = d.getUint32(108);
  const stretch = (stretchDen > 0 ? d.getInt32(8) / stretchDen : 1) || 1;
  const [f37, f38, f39] = [ld[37], ld[38], ld[39]];
  const props = child(node, 'tdgp');
  const matteType = MATTE[ld[107]];
  const matteId = ld.length >= 164 ? d.getUint32(160) : 0;
  // in and out are stored in layer time from the start: a stretched layer's last longer (or run backwards)
  const [inRel, outRel] = [sec(20, 24) * stretch, sec(28, 32) * stretch];
  const size = sourceSize(info.source, refs.footage, refs.comps);
  const layer: Layer = {
    index: info.index,
    id: info.id,
    name: info.name,
    type: info.type,
    startTime,
    inPoint: startTime + Math.min(inRel, outRel),
    outPoint: startTime + Math.max(inRel, outRel),
    stretch,
    enabled: (f39 & 0x01) !== 0,
    solo: (f38 & 0x08) !== 0,
    shy: (f39 & 0x40) !== 0,
    guide: (f37 & 0x02) !== 0,
    threeD: (f38 & 0x04) !== 0,
    adjustment: (f38 & 0x02) !== 0,
    collapse: (f39 & 0x80) !== 0,
    autoOrient: (f38 & 0x01) !== 0,
    motionBlur: (f39 & 0x08) !== 0,
    blendMode: LAYER_BLEND[ld[99]] ?? 'unknown',
    preserveTransparency: ld[103] === 1,
    isMatte: false,
    // the default anchor is the source's centre (0,0 for nulls and layers without a source)
    transform: readTransform(
      find(props, 'ADBE Transform Group'),
      ctx,
      // a camera's anchor is its point of interest, the composition's centre by default
      info.type === 'camera'
        ? [ctx.compSize[0] / 2, ctx.compSize[1] / 2, 0]
        : size && info.type !== 'null'
          ? [size[0] / 2, size[1] / 2, 0]
          : [0, 0, 0],
      size,
    ),
    masks: readMasks(find(props, 'ADBE Mask Parade'), ctx, size ?? [1, 1]),
    effects: readEffects(find(props, 'ADBE Effect Parade'), ctx, size ?? ctx.compSize, refs.effectDefs),
    layerStyles: entries(find(props, 'ADBE Layer Styles'))
      .filter(([mn, n]) => mn !== 'ADBE Blend Options Group' && enabledOf(n))
      .map(([mn]) => mn),
    // switched-off expressions are not run by After Effects either: nothing to list
    expressions: info.expressions.filter((e) => {
      const leaf = leafAt(props, e.property.split('>'));
      return !(leaf && expressionOff(leaf));
    }),
  };
  if (info.source) layer.sourceId = info.source.id;
  const styles = readStyles(find(props, 'ADBE Layer Styles'), ctx);
  if (styles.length) layer.styles = styles;
  const markers = readMarkers(find(props, 'ADBE Marker'), ctx);
  if (markers.length) layer.markers = markers;
  const parentId = d.getUint32(132);
  if (parentId) layer.parentId = parentId;
  if (matteType) layer.trackMatte = matteId ? { mode: matteType, layerId: matteId } : { mode: matteType };
  const remap = find(props, 'ADBE Time Remapping');
  // time remapping is on when its property is animated or has an expression (a static one is off)
  if (remap) {
    const p = numProp(remap, 'ADBE Time Remapping', 'ADBE Time Remapping', [0], ctx);
    if (p.keyframes?.length || p.expression) layer.timeRemap = p;
  }
  if (info.type === 'text') {
    const text = textProp(node, 'ADBE Text Properties>ADBE Text Document', ctx);
    if (text) layer.text = text;
    const base = 'ADBE Text Properties>ADBE Text Animators';
    const animators = textAnimators(find(find(props, 'ADBE Text Properties'), 'ADBE Text Animators'), base, ctx);
    if (animators.length) layer.textAnimators = animators;
  }
  readThreeD(layer, props, ctx, (f38 & 0x40) !== 0, ld.length >= 140 ? d.getUint32(136) : -1);
  if (info.type === 'shape')
    layer.shapes = shapeItems(find(props, 'ADBE Root Vectors Group'), 'ADBE Root Vectors Group', ctx, 0);
  return layer;
}

/**
 * What 3D drawing needs besides the transform: a camera's options (zoom defaults to a 50 mm lens on a 36 mm film
 * width, the default camera: width x 50/36), a light's, a 3D layer's material switches (all on by default, as After
 * Effects creates them). A two-node camera has ldta byte 38 bit 6 (layer_camera.aep of the corpus: "Two-Node" 0x44,
 * "One-Node" 0x04).
 */
function readThreeD(
  layer: Layer,
  props: Chunk | undefined,
  ctx: Ctx,
  orientsToInterest: boolean,
  lightCode: number,
): void {
  const group = (name: string) => {
    const g = find(props, name);
    return (prop: string, def: number[]) => numProp(find(g, prop), prop, `${name}>${prop}`, def, ctx);
  };
  if (layer.type === 'camera') {
    const p = group('ADBE Camera Options Group');
    layer.camera = {
      zoom: p('ADBE Camera Zoom', [(ctx.compSize[0] * 50) / 36]),
      depthOfField: p('ADBE Camera Depth of Field', [0]),
      focusDistance: p('ADBE Camera Focus Distance', [(ctx.compSize[0] * 50) / 36]),
      aperture: p('ADBE Camera Aperture', [25.3]),
      blurLevel: p('ADBE Camera Blur Level', [100]),
      twoNode: orientsToInterest,
    };
  } else if (layer.type === 'light') {
    const p = group('ADBE Light Options Group');
    layer.light = {
      lightType: (['parallel', 'spot', 'point', 'ambient'] as const)[lightCode] ?? 'unknown',
      intensity: p('ADBE Light Intensity', [100]),
      color: p('ADBE Light Color', [1, 1, 1, 1]),
      castsShadows: p('ADBE Casts Shadows', [0]),
    };
  } else if (layer.threeD) {
    const p = group('ADBE Material Options Group');
    layer.material = {
      castsShadows: p('ADBE Casts Shadows', [0]),
      acceptsShadows: p('ADBE Accepts Shadows', [1]),
      acceptsLights: p('ADBE Accepts Lights', [1]),
    };
  }
}

function readComposition(info: InspectedComposition, node: Chunk, refs: Refs): Composition {
  const c = child(node, 'cdta')!.data!; // inspect has checked it
  const d = view(c);
  const timebase = d.getUint32(8);
  const ratio = (n: number, den: number, def: number) =>
    d.getUint32(den) > 0 ? d.getUint32(n) / d.getUint32(den) : def;
  const duration = info.duration;
  const waStart = ratio(28, 32, 0);
  const waEnd = d.getUint32(36) === 0xffffffff ? duration : ratio(36, 40, duration);
  const ctx: Ctx = {
    timeUnit: timebase > 0 ? 1 / timebase : 1 / (info.frame_rate * 256),
    compSize: [info.width, info.height],
    duration: info.duration,
  };
  const nodes = children(node, 'Layr');
  const layers = info.layers.map((l, i) => readLayer(nodes[i], l, ctx, refs));
  // the matte of an older file is the layer just above; AE 23+ names it by id
  layers.forEach((l, i) => {
    if (!l.trackMatte) return;
    const matte = l.trackMatte.layerId ? layers.find((m) => m.id === l.trackMatte!.layerId) : layers[i - 1];
    if (matte) {
      matte.isMatte = true;
      l.trackMatte.layerId = matte.id;
    } else delete l.trackMatte;
  });
  return {
    id: info.id,
    name: info.name,
    width: info.width,
    height: info.height,
    pixelAspect: ratio(144, 148, 1) || 1,
    frameRate: info.frame_rate,
    duration,
    background: [info.background[0] / 255, info.background[1] / 255, info.background[2] / 255],
    workArea: { start: waStart, end: Math.max(waStart, Math.min(duration, waEnd)) },
    displayStartTime: c.length >= 172 && d.getUint32(168) > 0 ? d.getInt32(164) / d.getUint32(168) : 0,
    hideShyLayers: (c[139] & 0x01) !== 0,
    motionBlur: (c[139] & 0x08) !== 0,
    // cdta: shutter angle u16@174, phase s32@180, adaptive sample limit s32@196, samples per frame s32@200 (py-aep)
    ...(c.length >= 204 && {
      shutter: { angle: d.getUint16(174), phase: d.getInt32(180), samples: d.getInt32(200), limit: d.getInt32(196) },
    }),
    layers,
  };
}

/** A footage item as inspect read it, with its solid colour, duration and frame rate (sspc, research §3.6). */
function readFootage(info: InspectedFootage, node: Chunk | undefined): Footage {
  const pin = child(node, 'Pin');
  const opti = child(pin, 'opti')?.data;
  const sspc = child(pin, 'sspc')?.data;
  const s = sspc ? view(sspc) : undefined;
  const durDen = s && sspc!.length >= 46 ? s.getUint32(42) : 0;
  const duration = durDen > 0 ? s!.getUint32(38) / durDen : 0;
  const f: Footage = {
    id: info.id,
    name: info.name,
    kind: info.kind,
    width: info.width ?? 0,
    height: info.height ?? 0,
    duration,
    frameRate: s && sspc!.length >= 62 ? s.getUint32(56) + s.getUint16(60) / 65536 : 0,
    still: duration === 0,
  };
  if (info.path) f.path = info.path;
  if (info.kind === 'solid' && opti && opti.length >= 26) {
    // solid colour: ARGB float32 at 10 (research §3.5)
    const o = view(opti);
    f.color = [o.getFloat32(14), o.getFloat32(18), o.getFloat32(22), o.getFloat32(10)];
  }
  return f;
}

/** Every `Item` list in the tree by its id (idta u32@16), folders included. */
function itemNodes(node: Chunk, out: Map<number, Chunk>, depth = 0): Map<number, Chunk> {
  for (const c of node.children ?? []) {
    if (c.id === 'Item') {
      const idta = child(c, 'idta')?.data;
      if (idta && idta.length >= 20) out.set(view(idta).getUint32(16), c);
    }
    if ((c.id === 'Item' || c.id === 'Sfdr' || c.id === 'Fold') && depth < MAX_DEPTH) itemNodes(c, out, depth + 1);
  }
  return out;
}

/**
 * Effect parameter definitions by effect match name: After Effects writes an effect's `parT` once (in the project's
 * `EfdG` > `EfDf` list or in the first instance's sspc) and leaves it out of the other instances.
 */
function effectDefinitions(root: Chunk): Map<string, Chunk> {
  const out = new Map<string, Chunk>();
  const walk = (node: Chunk, depth: number) => {
    const list = node.children ?? [];
    for (let i = 0; i < list.length; i++) {
      const c = list[i];
      if (c.id === 'tdmn' && list[i + 1]?.id === 'sspc') {
        const part = child(list[i + 1], 'parT');
        const mn = matchName(c);
        if (part?.children?.some((x) => x.id === 'pard') && !out.has(mn)) out.set(mn, part);
      }
      if (c.children && depth < MAX_DEPTH) walk(c, depth + 1);
    }
  };
  walk(root, 0);
  return out;
}

/** The scene model of a project's chunk tree; names, types and expressions are inspect's (project.ts). */
export function buildScene(root: Chunk): SceneProject {
  const inspected = readProject(root);
  const nodes = itemNodes(root, new Map());
  const footage = new Map(inspected.footage.map((f) => [f.id, readFootage(f, nodes.get(f.id))]));
  const refs: Refs = {
    footage,
    comps: new Map(inspected.compositions.map((c) => [c.id, c])),
    effectDefs: effectDefinitions(root),
  };
  return {
    aeVersion: inspected.ae_version,
    compositions: inspected.compositions.map((c) => readComposition(c, nodes.get(c.id)!, refs)),
    footage: [...footage.values()],
  };
}
