import { child, children, ProjectFormatError, type Chunk } from './chunks.js';
import { cosPath, parseCos, type CosValue } from './cos.js';
import type { InspectedComposition, InspectedFootage, InspectedLayer, InspectedProject } from './schemas.js';

/**
 * Turns the chunk tree of a project (from either format) into what inspect answers. Offsets are from the chunk body,
 * big-endian; the layouts and where they were learnt are in ../shared/research/after-effects.md and docs/motion.md.
 */

interface Item {
  id: number;
  type: number;
  rawName: string;
  node: Chunk;
}

/** A footage item as read, with what a layer's type and name need. */
interface Footage extends InspectedFootage {
  itemName: string;
}

const view = (d: Uint8Array) => new DataView(d.buffer, d.byteOffset, d.byteLength);

function need(node: Chunk | undefined, id: string, min: number, where: string): DataView {
  const c = child(node, id);
  if (!c?.data) throw new ProjectFormatError(`${where} has no ${id} chunk`);
  if (c.data.length < min)
    throw new ProjectFormatError(`${where}: ${id} chunk is ${c.data.length} bytes, expected at least ${min}`);
  return view(c.data);
}

const cp1252 = new TextDecoder('windows-1252');

/**
 * A NUL-terminated string inside a chunk, windows-1252 unless told (junk after the NUL is left over from renames);
 * '' where the chunk is shorter.
 */
function cString(d: DataView, at: number, max: number, decoder = cp1252): string {
  const start = Math.min(d.byteLength, at);
  let end = start;
  const limit = Math.min(d.byteLength, at + max);
  while (end < limit && d.getUint8(end) !== 0) end++;
  return decoder.decode(new Uint8Array(d.buffer, d.byteOffset + start, end - start));
}

/** Where the `opti` of one layer of a Photoshop file (asset type `8BPS`) keeps the layer's name, UTF-8. */
const PSD_LAYER_NAME_AT = 344;
const utf8 = new TextDecoder('utf-8');

const textOf = (node: Chunk | undefined) => child(node, 'Utf8')?.text ?? '';
const basename = (p: string) => p.split(/[\\/]/).filter(Boolean).pop() ?? p;

function aeVersion(root: Chunk): string {
  const svap = child(root, 'svap')?.data;
  const head = child(root, 'head')?.data;
  const d =
    svap && svap.length >= 4
      ? view(svap)
      : head && head.length >= 8
        ? new DataView(head.buffer, head.byteOffset + 4, 4)
        : undefined;
  if (!d) throw new ProjectFormatError('no version chunk (svap/head): not a project saved by After Effects');
  const v = d.getUint32(0);
  const major = ((v >>> 26) & 0x1f) * 8 + ((v >>> 19) & 0x7);
  const minor = (v >>> 15) & 0xf;
  const build = v & 0xff;
  return `${major}.${minor}x${build}`;
}

/** Items in project order: depth first through folders, as the Project panel lists them. */
function collectItems(folder: Chunk, out: Item[], depth = 0): void {
  for (const node of children(folder, 'Item')) {
    const idta = child(node, 'idta')?.data;
    if (!idta || idta.length < 20) throw new ProjectFormatError('a project item has no complete idta chunk');
    const d = view(idta);
    const item: Item = { id: d.getUint32(16), type: d.getUint16(0), rawName: textOf(node), node };
    out.push(item);
    if (item.type === 1 && depth < 100) collectItems(child(node, 'Sfdr') ?? { id: 'Sfdr' }, out, depth + 1);
  }
}

function readFootage(item: Item): Footage | undefined {
  const pin = child(item.node, 'Pin');
  if (!pin) return undefined;
  const where = `footage item ${item.id}`;
  const opti = need(pin, 'opti', 6, where);
  const optiType = opti.getUint16(4);
  const asset = cString(opti, 0, 4);
  const sspc = child(pin, 'sspc')?.data;
  const size = sspc && sspc.length >= 38 ? { width: view(sspc).getUint16(32), height: view(sspc).getUint16(36) } : {};
  const alas = child(child(pin, 'Als2'), 'alas')?.fields;
  const path = typeof alas?.fullpath === 'string' && alas.fullpath ? alas.fullpath : undefined;
  let kind: Footage['kind'];
  let fallback: string;
  // Solids say so by their asset type (their opti type is 9, and 8 in AE 11)
  if (asset === 'Soli') {
    kind = 'solid';
    fallback = cString(opti, 26, 256);
  } else if (optiType === 2 && !path) {
    kind = 'placeholder';
    fallback = cString(opti, 10, 256);
  } else {
    kind = path ? 'file' : 'placeholder';
    fallback = path ? basename(path) : cString(opti, 10, 256);
    // One layer of a Photoshop file: AE shows "<PSD layer name>/<file name>"
    const psdLayer = path && asset === '8BPS' ? cString(opti, PSD_LAYER_NAME_AT, 256, utf8) : '';
    if (psdLayer) fallback = `${psdLayer}/${fallback}`;
  }
  const name = item.rawName || fallback;
  const f: Footage = { id: item.id, name, kind, itemName: name };
  if (path) f.path = path;
  if (size.width) f.width = size.width;
  if (size.height) f.height = size.height;
  return f;
}

/** Source text and fonts of a text layer's first text document. */
function readText(layer: Chunk): { text?: string; fonts?: string[] } {
  const props = matchChild(child(layer, 'tdgp'), 'ADBE Text Properties');
  const btdk = child(matchChild(props, 'ADBE Text Document'), 'btdk')?.data;
  if (!btdk) return {};
  let doc: Record<string, CosValue>;
  try {
    doc = parseCos(btdk);
  } catch {
    return {}; // a text document we cannot read does not make the project unreadable
  }
  const text = cosPath(doc, '1', '1', 0, '0', '0');
  const fontList = cosPath(doc, '0', '1', '0');
  const fonts = Array.isArray(fontList)
    ? fontList.map((f) => cosPath(f, '0', '0', '0')).filter((f): f is string => typeof f === 'string')
    : undefined;
  return { text: typeof text === 'string' ? text : undefined, fonts };
}

const matchName = (c: Chunk) => (c.data ? cString(view(c.data), 0, c.data.length) : '');

/** The property following the `tdmn` with this match name inside a group. */
function matchChild(group: Chunk | undefined, name: string): Chunk | undefined {
  const list = group?.children ?? [];
  for (let i = 0; i < list.length - 1; i++)
    if (list[i].id === 'tdmn' && matchName(list[i]) === name) return list[i + 1];
  return undefined;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A leaf property's expression: a Utf8 child from AE 15 on; AE 12 writes an `expr` chunk holding the text itself,
 * NUL-terminated (UTF-8 where it decodes as such, else taken as windows-1252 like the other strings of that era).
 */
export function expressionOf(tdbs: Chunk): string | undefined {
  const text = child(tdbs, 'Utf8')?.text;
  if (text !== undefined) return text;
  const legacy = child(tdbs, 'expr')?.data;
  if (!legacy) return undefined;
  try {
    return strictUtf8.decode(legacy);
  } catch {
    return cp1252.decode(legacy);
  }
}

/** Every expression under a layer's property tree, with the match-name path that leads to it. */
export function collectExpressions(node: Chunk, path: string[], out: InspectedLayer['expressions'], depth = 0): void {
  if (depth > 100 || !node.children) return;
  if (node.id === 'tdbs') {
    const expr = expressionOf(node);
    if (expr !== undefined) {
      const cut = expr.split('\u0000')[0];
      if (cut.trim()) out.push({ property: path.join('>'), expression: cut });
    }
    return;
  }
  const list = node.children;
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (c.id === 'tdmn') {
      const name = matchName(c);
      const next = list[i + 1];
      if (name === 'ADBE Group End' || !next || next.id === 'tdmn') continue;
      collectExpressions(next, [...path, name], out, depth + 1);
      i++;
    } else if (c.children && c.id !== 'tdsn') {
      // containers without a match name of their own (an effect's sspc, a text document's btds)
      collectExpressions(c, path, out, depth + 1);
    }
  }
}

function layerType(
  code: number,
  flags: number,
  source: Item | undefined,
  footage: Footage | undefined,
): InspectedLayer['type'] {
  switch (code) {
    case 1:
      return 'light';
    case 2:
      return 'camera';
    case 3:
      return 'text';
    case 4:
      return 'shape';
    default:
      if (flags & 0x80) return 'null';
      if (flags & 0x02) return 'adjustment';
      if (source?.type === 4) return 'precomp';
      if (footage?.kind === 'solid') return 'solid';
      return 'footage';
  }
}

function readComposition(
  item: Item,
  items: Map<number, Item>,
  footage: Map<number, Footage>,
  names: Map<number, string>,
): InspectedComposition {
  const where = `composition ${JSON.stringify(item.rawName)} (item ${item.id})`;
  const cdta = need(item.node, 'cdta', 160, where);
  const timeScale = cdta.getUint32(4);
  const timebase = cdta.getUint32(8);
  const fps16 = cdta.getUint16(156) + cdta.getUint16(158) / 65536;
  // The timebase ratio gives exact NTSC rates (29.97); the 16.16 field is the fallback.
  const frameRate = timeScale > 0 && timebase > 0 ? timebase / timeScale : fps16;
  const durDen = cdta.getUint32(48);
  const duration = durDen > 0 ? cdta.getUint32(44) / durDen : 0;
  const raw = children(item.node, 'Layr').map((node, i) => {
    const ld = need(node, 'ldta', 136, `${where}, layer ${i + 1}`);
    const sec = (num: number, den: number) => (ld.getUint32(den) > 0 ? ld.getInt32(num) / ld.getUint32(den) : 0);
    const start = sec(12, 16);
    return {
      node,
      id: ld.getUint32(0),
      sourceId: ld.getUint32(40),
      flags: ld.getUint8(38),
      code: ld.getUint8(131),
      parentId: ld.byteLength >= 136 ? ld.getUint32(132) : 0,
      inPoint: start + sec(20, 24),
      outPoint: start + sec(28, 32),
      rawName: textOf(node),
    };
  });
  const indexById = new Map(raw.map((l, i) => [l.id, i + 1]));
  const layers = raw.map((l, i): InspectedLayer => {
    const src = l.sourceId ? items.get(l.sourceId) : undefined;
    const foot = src ? footage.get(src.id) : undefined;
    const type = layerType(l.code, l.flags, src, foot);
    const layer: InspectedLayer = {
      index: i + 1,
      id: l.id,
      name: l.rawName || (src ? (names.get(src.id) ?? '') : ''),
      named: l.rawName !== '',
      type,
      in_point: l.inPoint,
      out_point: l.outPoint,
      expressions: [],
    };
    if (src) {
      layer.source =
        src.type === 4
          ? { id: src.id, name: names.get(src.id) ?? '', kind: 'composition' }
          : { id: src.id, name: foot?.name ?? '', kind: foot?.kind ?? 'placeholder' };
      if (foot?.path) layer.source.path = foot.path;
    }
    if (type === 'text') {
      const { text, fonts } = readText(l.node);
      if (text !== undefined) layer.source_text = text;
      if (fonts) layer.fonts = fonts;
      // an unnamed text layer is shown by its text (its first paragraph)
      if (!layer.named && text) layer.name = text.split('\r')[0];
    }
    const props = child(l.node, 'tdgp');
    if (props) collectExpressions(props, [], layer.expressions);
    const parent = l.parentId ? indexById.get(l.parentId) : undefined;
    if (parent) layer.parent_index = parent;
    return layer;
  });
  return {
    id: item.id,
    name: item.rawName,
    width: cdta.getUint16(140),
    height: cdta.getUint16(142),
    frame_rate: frameRate,
    duration,
    background: [cdta.getUint8(52), cdta.getUint8(53), cdta.getUint8(54)],
    layers,
  };
}

/** Reads a project's chunk tree into the inspect answer. */
export function readProject(root: Chunk): InspectedProject {
  const ae_version = aeVersion(root);
  const engine = child(root, 'ExEn');
  const fold = child(root, 'Fold');
  const items: Item[] = [];
  if (fold) collectItems(fold, items);
  const byId = new Map(items.map((it) => [it.id, it]));
  const footage = new Map<number, Footage>();
  for (const it of items) {
    if (it.type !== 7) continue;
    const f = readFootage(it);
    if (f) footage.set(it.id, f);
  }
  const names = new Map<number, string>(items.map((it) => [it.id, footage.get(it.id)?.itemName ?? it.rawName]));
  const compositions = items.filter((it) => it.type === 4).map((it) => readComposition(it, byId, footage, names));
  const editable: InspectedProject['editable'] = { text: [], media: [], expressions: [] };
  for (const comp of compositions) {
    for (const l of comp.layers) {
      const ref = { composition: comp.name, layer_index: l.index, layer: l.name };
      if (l.type === 'text') editable.text.push({ ...ref, text: l.source_text ?? '' });
      if (l.source && (l.source.kind === 'file' || l.source.kind === 'placeholder')) {
        editable.media.push({ ...ref, source_id: l.source.id, source_name: l.source.name, kind: l.source.kind });
      }
      for (const e of l.expressions) editable.expressions.push({ ...ref, ...e });
    }
  }
  return {
    ae_version,
    expression_engine: engine ? textOf(engine) || null : null,
    compositions,
    footage: [...footage.values()].map(({ itemName: _omit, ...f }) => f),
    editable,
  };
}
