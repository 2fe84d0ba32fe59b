import assert from 'node:assert/strict';
import { cdta, chunk, footagePin, idta, ldta, list, rifx, svap, tdmn, type Part, utf8 } from './rifx-writer.js';

/**
 * Writes the property records the scene decoder reads (keyframes with eases and spatial tangents, colours, shape
 * paths, masks, shape-layer contents) on top of the RIFX writer, in the layouts of ../shared/research/after-effects.md
 * ("Scene model"). Times are seconds; the composition's time scale is 1, so a key's raw time is seconds x fps x 256.
 * Values are in the file's units: opacity and scale as fractions, colours as [r, g, b, a] 0..1 (written ARGB 0..255).
 */

export interface KeySpec {
  t: number;
  v: number[];
  in?: 'linear' | 'bezier' | 'hold';
  out?: 'linear' | 'bezier' | 'hold';
  /** [speed, influence 0..1] per dimension (one for spatial and colour keys); default [0, 1/6]. */
  inEase?: [number, number][];
  outEase?: [number, number][];
  inTangent?: number[];
  outTangent?: number[];
  /** Temporal auto-bezier (flags byte 7 bit 4). */
  auto?: boolean;
}

const CODE = { linear: 1, bezier: 2, hold: 3 } as const;

function tdb4(o: { dims: number; spatial?: boolean; color?: boolean; expressionOff?: boolean }): Part {
  const b = Buffer.alloc(124);
  b.writeUInt16BE(o.dims, 2);
  if (o.spatial) b[5] |= 0x08;
  if (o.color) b[59] |= 0x01;
  if (o.expressionOff) b[119] |= 0x01;
  return chunk('tdb4', b);
}

const argb = (v: number[]) => [v[3] * 255, v[0] * 255, v[1] * 255, v[2] * 255];

/** A leaf property: static `value`, or `keys` with the record layout its kind takes; an expression when given. */
export function prop(o: {
  value?: number[];
  keys?: KeySpec[];
  fps?: number;
  kind?: 'dims' | 'spatial' | 'color';
  expression?: string;
  /** The expression's switch is off (After Effects keeps the text, does not run it). */
  expressionOff?: boolean;
  /** Key times written as py-aep reads them: byte 0 zero, a signed 16-bit count at 1, a fraction byte at 3. */
  shortTimes?: boolean;
}): Part {
  const kind = o.kind ?? 'dims';
  const first = o.value ?? o.keys![0].v;
  const dims = kind === 'color' ? 4 : first.length;
  const stored = (v: number[]) => (kind === 'color' ? argb(v) : v);
  const cdat = Buffer.alloc(8 * Math.max(dims, 1));
  stored(first).forEach((v, k) => cdat.writeDoubleBE(v, 8 * k));
  const parts: Part[] = [
    chunk('tdsb', Buffer.alloc(4)),
    tdb4({ dims, spatial: kind === 'spatial', color: kind === 'color', expressionOff: o.expressionOff }),
    chunk('cdat', cdat),
  ];
  if (o.keys) {
    const size = kind === 'color' ? 152 : kind === 'spatial' ? (dims === 2 ? 104 : 128) : 8 + 40 * dims;
    const body = Buffer.alloc(size * o.keys.length);
    o.keys.forEach((k, i) => {
      const at = i * size;
      const units = Math.round(k.t * (o.fps ?? 25) * 256);
      if (o.shortTimes) {
        body.writeInt16BE(Math.floor(units / 256), at + 1);
        body.writeUInt8(units - Math.floor(units / 256) * 256, at + 3);
      } else body.writeInt32BE(units, at);
      body.writeUInt8(CODE[k.in ?? 'linear'], at + 4);
      body.writeUInt8(CODE[k.out ?? 'linear'], at + 5);
      if (k.auto) body.writeUInt8(0x10, at + 7);
      const inE = k.inEase ?? [[0, 1 / 6]];
      const outE = k.outEase ?? [[0, 1 / 6]];
      const f = (x: number, off: number) => body.writeDoubleBE(x, at + off);
      if (kind === 'dims') {
        k.v.forEach((v, j) => {
          const e = (list: [number, number][]) => list[j] ?? list[0];
          f(v, 8 + 8 * j);
          f(e(inE)[0], 8 + 8 * dims + 8 * j);
          f(e(inE)[1], 8 + 16 * dims + 8 * j);
          f(e(outE)[0], 8 + 24 * dims + 8 * j);
          f(e(outE)[1], 8 + 32 * dims + 8 * j);
        });
      } else {
        f(inE[0][0], 24);
        f(inE[0][1], 32);
        f(outE[0][0], 40);
        f(outE[0][1], 48);
        stored(k.v).forEach((v, j) => f(v, 56 + 8 * j));
        if (kind === 'spatial') {
          (k.inTangent ?? k.v.map(() => 0)).forEach((v, j) => f(v, 56 + 8 * dims + 8 * j));
          (k.outTangent ?? k.v.map(() => 0)).forEach((v, j) => f(v, 56 + 16 * dims + 8 * j));
        }
      }
    });
    const head = Buffer.alloc(24);
    head.writeUInt16BE(o.keys.length, 10);
    head.writeUInt16BE(size, 18);
    head.writeUInt8(4, 23);
    parts.push(list('list', chunk('lhd3', head), chunk('ldat', body)));
  }
  if (o.expression !== undefined) parts.push(utf8(o.expression));
  return list('tdbs', ...parts);
}

/** A property group of [match name, property] pairs, with its enabled bit and display name. */
export function group(pairs: [string, Part][], o: { name?: string; enabled?: boolean } = {}): Part {
  const tdsb = Buffer.alloc(4);
  tdsb[3] = o.enabled === false ? 0 : 1;
  return list(
    'tdgp',
    chunk('tdsb', tdsb),
    chunk('tdsn', utf8(o.name ?? '-_0_/-')),
    ...pairs.flatMap(([n, p]) => [tdmn(n), p]),
    tdmn('ADBE Group End'),
  );
}

export interface PathSpec {
  closed?: boolean;
  v: [number, number][];
  i?: [number, number][];
  o?: [number, number][];
}

/** One `shap`: header (bounding box 0..1, open flag) and the vertex / out / next-in points, divided by `unit`. */
function shap(p: PathSpec, unit: [number, number]): Part {
  const head = Buffer.alloc(24);
  if (p.closed === false) head[3] |= 0x08;
  head.writeFloatBE(0, 4);
  head.writeFloatBE(0, 8);
  head.writeFloatBE(1, 12);
  head.writeFloatBE(1, 16);
  const n = p.v.length;
  const pts = Buffer.alloc(24 * n);
  const put = (k: number, x: number, y: number) => {
    pts.writeFloatBE(x / unit[0], 8 * k);
    pts.writeFloatBE(y / unit[1], 8 * k + 4);
  };
  for (let k = 0; k < n; k++) {
    const [x, y] = p.v[k];
    const o = p.o?.[k] ?? [0, 0];
    const next = p.v[(k + 1) % n];
    const ni = p.i?.[(k + 1) % n] ?? [0, 0];
    put(3 * k, x, y);
    put(3 * k + 1, x + o[0], y + o[1]);
    put(3 * k + 2, next[0] + ni[0], next[1] + ni[1]);
  }
  const lhd3 = Buffer.alloc(24);
  lhd3.writeUInt16BE(3 * n, 10);
  lhd3.writeUInt16BE(8, 18);
  return list('shap', chunk('shph', head), list('list', chunk('lhd3', lhd3), chunk('ldat', pts)));
}

/** A path property (`om-s`): static, or keyed with one shape per key (value-less key records of 64 bytes). */
export function pathProp(
  shapes: PathSpec[],
  o: { unit?: [number, number]; keys?: KeySpec[]; fps?: number } = {},
): Part {
  const unit = o.unit ?? [1, 1];
  const parts: Part[] = [chunk('tdsb', Buffer.alloc(4)), tdb4({ dims: 1 })];
  if (o.keys) {
    const body = Buffer.alloc(64 * o.keys.length);
    o.keys.forEach((k, i) => {
      body.writeInt32BE(Math.round(k.t * (o.fps ?? 25) * 256), 64 * i);
      body.writeUInt8(CODE[k.in ?? 'linear'], 64 * i + 4);
      body.writeUInt8(CODE[k.out ?? 'linear'], 64 * i + 5);
    });
    const head = Buffer.alloc(24);
    head.writeUInt16BE(o.keys.length, 10);
    head.writeUInt16BE(64, 18);
    parts.push(list('list', chunk('lhd3', head), chunk('ldat', body)));
  }
  return list('om-s', list('tdbs', ...parts), list('omks', ...shapes.map((s) => shap(s, unit))));
}

/**
 * A mask parade: each mask is tdmn, mkif (inverted, mode: 1 add, 2 subtract, 3 intersect...), then its group; the
 * points are written as fractions of `size`, the layer's size.
 */
export function masks(
  list_: { path: PathSpec; mode?: number; inverted?: boolean; opacity?: number; feather?: number[] }[],
  size: [number, number],
): Part {
  const tdsb = Buffer.alloc(4);
  tdsb[3] = 1;
  return list(
    'tdgp',
    chunk('tdsb', tdsb),
    ...list_.flatMap((m) => {
      const mkif = Buffer.alloc(48);
      mkif[0] = m.inverted ? 1 : 0;
      mkif.writeUInt16BE(m.mode ?? 1, 6);
      const pairs: [string, Part][] = [['ADBE Mask Shape', pathProp([m.path], { unit: size })]];
      if (m.opacity !== undefined) pairs.push(['ADBE Mask Opacity', prop({ value: [m.opacity] })]);
      if (m.feather) pairs.push(['ADBE Mask Feather', prop({ value: m.feather })]);
      return [tdmn('ADBE Mask Atom'), chunk('mkif', mkif), group(pairs)];
    }),
    tdmn('ADBE Group End'),
  );
}

/** ldta with a time stretch (numerator at 8, denominator at 108), on top of the writer's ldta. */
export function layerData(o: Parameters<typeof ldta>[0] & { stretch?: number }): Part {
  const part = ldta(o);
  if (o.stretch !== undefined) {
    part.writeInt32BE(Math.round(o.stretch * 1000), 8 + 8);
    part.writeUInt32BE(1000, 8 + 108);
  }
  return part;
}

/** A composition item with its layers (each [ldta, name, property groups]). */
export function comp(o: {
  id: number;
  name: string;
  width: number;
  height: number;
  fps: number;
  duration: number;
  layers: Part[];
}): Part {
  return list(
    'Item',
    idta(4, o.id),
    utf8(o.name),
    cdta({ width: o.width, height: o.height, fps: o.fps, duration: o.duration }),
    ...o.layers,
  );
}

export function layer(data: Part, name: string, props: [string, Part][]): Part {
  return list('Layr', data, utf8(name), group(props));
}

export function solidItem(
  id: number,
  name: string,
  width: number,
  height: number,
  color: [number, number, number],
): Part {
  return list('Item', idta(7, id), utf8(name), footagePin({ solidName: name, width, height, color }));
}

/** A whole project of the given items (AE 23). */
export function project(...items: Part[]): Buffer {
  return rifx(svap(23, 1, 5), chunk('head', Buffer.alloc(20)), list('Fold', chunk('fdta', Buffer.alloc(14)), ...items));
}

/** Fails unless `v` is plain JSON data: finite numbers, strings, booleans, null, arrays and plain objects, no undefined. */
export function assertPlainJson(v: unknown, where: string): void {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
  if (typeof v === 'number') return assert.ok(Number.isFinite(v), `${where}: ${v}`);
  assert.equal(typeof v, 'object', `${where}: a ${typeof v}`);
  if (Array.isArray(v)) return v.forEach((x, k) => assertPlainJson(x, `${where}[${k}]`));
  assert.equal(Object.getPrototypeOf(v), Object.prototype, `${where}: not a plain object`);
  for (const [k, x] of Object.entries(v as object)) assertPlainJson(x, `${where}.${k}`);
}

/** A COS string: UTF-16BE after FE FF, with ( ) \\ escaped. */
function cosString(text: string): Buffer {
  const raw = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]);
  const escaped = [...raw].flatMap((c) => (c === 0x28 || c === 0x29 || c === 0x5c ? [0x5c, c] : [c]));
  return Buffer.concat([Buffer.from('('), Buffer.from(escaped), Buffer.from(')')]);
}

/** Source Text with one document per key (held), each with its text, size and justification code. */
export function keyedTextDocument(
  docs: { t: number; text: string; size: number; justify?: number }[],
  font: string,
  fps = 25,
): Part {
  const doc = (d: (typeof docs)[number]) =>
    Buffer.concat([
      Buffer.from(' << /0 << /0 '),
      cosString(d.text),
      Buffer.from(` /5 << /0 [ << /0 << /0 << /5 << /0 ${d.justify ?? 0} >> >> >> >> ] >>`),
      Buffer.from(` /6 << /0 [ << /0 << /0 << /6 << /0 0 /1 ${d.size.toFixed(1)} >> >> >> >> ] >> >> >>`),
    ]);
  const cos = Buffer.concat([
    Buffer.from(' /0 << /1 << /0 [ << /0 << /99 /CoolTypeFont /0 << /0 '),
    cosString(font),
    Buffer.from(' >> >> >> ] >> >> /1 << /1 ['),
    ...docs.map(doc),
    Buffer.from(' ] >> '),
  ]);
  const body = Buffer.alloc(64 * docs.length);
  docs.forEach((d, i) => {
    body.writeInt32BE(Math.round(d.t * fps * 256), 64 * i);
    body.writeUInt8(CODE.hold, 64 * i + 4);
    body.writeUInt8(CODE.hold, 64 * i + 5);
  });
  const head = Buffer.alloc(24);
  head.writeUInt16BE(docs.length, 10);
  head.writeUInt16BE(64, 18);
  const tdbs = list(
    'tdbs',
    chunk('tdsb', Buffer.alloc(4)),
    tdb4({ dims: 1 }),
    list('list', chunk('lhd3', head), chunk('ldat', body)),
  );
  return list('btds', tdbs, list('btdk', cos));
}
