/**
 * The chunk tree both project formats share. An .aep is a RIFX file (big-endian RIFF, form type `Egg!`); an .aepx
 * is the same tree written as XML. Both readers produce these nodes, so the project reader knows one shape.
 *
 * - a `LIST` becomes a node named by its list type (`Fold`, `Item`, `Layr`, `tdgp`...) with children;
 * - `Utf8` chunks (XML `<string>`) carry `text`;
 * - `alas` (file reference) carries `fields` (JSON in the binary, attributes in XML);
 * - every other chunk keeps its bytes in `data` (a view into the file, no copy).
 */
export interface Chunk {
  id: string;
  data?: Uint8Array;
  text?: string;
  fields?: Record<string, unknown>;
  children?: Chunk[];
}

/** A file that is not a readable project; the message names what is wrong and where. */
export class ProjectFormatError extends Error {
  override name = 'ProjectFormatError';
}

/** Chunks that are not LISTs but hold child chunks (normally one Utf8); see holdsChunks for older projects. */
const NESTING = new Set(['tdsn', 'fnam', 'pdnm', 'RCom']);
/** Deeper nesting than this is not a real project (AE's trees are a few dozen levels); it also bounds recursion. */
const MAX_DEPTH = 200;

const ascii = (b: Uint8Array, at: number) => String.fromCharCode(b[at], b[at + 1], b[at + 2], b[at + 3]);
const u32 = (b: Uint8Array, at: number) => ((b[at] << 24) >>> 0) + (b[at + 1] << 16) + (b[at + 2] << 8) + b[at + 3];
const utf8 = new TextDecoder('utf-8');

/** Printable chunk id for messages (ids are 4 ASCII bytes in a real file). */
const show = (id: string) => JSON.stringify(id.replace(/[^\x20-\x7e]/g, '?'));

/**
 * Reads an .aep (RIFX) file into its chunk tree. Unknown chunks are kept as opaque data (skipped by size);
 * bodies of odd size are followed by one pad byte; anything after the RIFX payload (the XMP packet) is ignored.
 */
export function readRifx(buf: Uint8Array): Chunk {
  if (buf.length < 12 || ascii(buf, 0) !== 'RIFX') {
    if (buf.length >= 4 && ascii(buf, 0) === 'RIFF')
      throw new ProjectFormatError('not an After Effects project: a little-endian RIFF file (AE writes RIFX)');
    throw new ProjectFormatError('not an After Effects project: the file does not start with "RIFX"');
  }
  const form = ascii(buf, 8);
  if (form !== 'Egg!')
    throw new ProjectFormatError(`not an After Effects project: RIFX form type ${show(form)} instead of "Egg!"`);
  const declared = u32(buf, 4);
  if (declared < 4) throw new ProjectFormatError(`the RIFX header declares ${declared} bytes, too few for a project`);
  if (8 + declared > buf.length) {
    throw new ProjectFormatError(
      `truncated file: the RIFX header declares ${declared} bytes after offset 8 but the file has only ${buf.length - 8}`,
    );
  }
  return { id: 'Egg!', children: readChunks(buf, 12, 8 + declared, 1) };
}

function readChunks(buf: Uint8Array, start: number, end: number, depth: number): Chunk[] {
  if (depth > MAX_DEPTH)
    throw new ProjectFormatError(`chunks nested more than ${MAX_DEPTH} levels deep at offset ${start}`);
  const out: Chunk[] = [];
  let at = start;
  while (at < end) {
    if (end - at < 8)
      throw new ProjectFormatError(
        `truncated chunk header at offset ${at}: ${end - at} bytes left in the enclosing chunk`,
      );
    const id = ascii(buf, at);
    const size = u32(buf, at + 4);
    const body = at + 8;
    if (size > end - body) {
      throw new ProjectFormatError(
        `chunk ${show(id)} at offset ${at} declares ${size} bytes but only ${end - body} remain in the enclosing chunk`,
      );
    }
    out.push(readChunk(buf, id, body, size, depth));
    at = body + size;
    // The pad byte after an odd body; a writer that left it out ends exactly at `end`.
    if (size % 2 === 1 && at < end) at++;
  }
  return out;
}

function readChunk(buf: Uint8Array, rawId: string, body: number, size: number, depth: number): Chunk {
  const data = buf.subarray(body, body + size);
  if (rawId === 'LIST') {
    if (size < 4) throw new ProjectFormatError(`LIST at offset ${body - 8} is ${size} bytes, too short for its type`);
    const type = ascii(buf, body).trimEnd();
    // btdk holds a text document in COS syntax, not chunks.
    if (type === 'btdk') return { id: type, data: data.subarray(4) };
    return { id: type, children: readChunks(buf, body + 4, body + size, depth + 1) };
  }
  const id = rawId.trimEnd();
  if (id === 'Utf8') return { id, text: utf8.decode(data) };
  if (id === 'alas') {
    try {
      return { id, fields: JSON.parse(utf8.decode(data)) as Record<string, unknown> };
    } catch {
      return { id, data }; // older versions stored a binary alias record; the path is then unknown
    }
  }
  if (NESTING.has(id) && holdsChunks(buf, body, size))
    return { id, children: readChunks(buf, body, body + size, depth + 1) };
  return { id, data };
}

/**
 * Whether a nesting chunk's body starts with a chunk header that fits in it. Projects saved by AE 11 to 13 put the
 * string itself there, NUL-terminated (an empty `tdsn` is one or two zero bytes); those keep their bytes in `data`.
 */
function holdsChunks(buf: Uint8Array, body: number, size: number): boolean {
  if (size < 8) return false;
  for (let i = body; i < body + 4; i++) if (buf[i] < 0x20 || buf[i] > 0x7e) return false;
  return u32(buf, body + 4) <= size - 8;
}

/** The first direct child with this id. */
export function child(node: Chunk | undefined, id: string): Chunk | undefined {
  return node?.children?.find((c) => c.id === id);
}

/** Every direct child with this id. */
export function children(node: Chunk | undefined, id: string): Chunk[] {
  return node?.children?.filter((c) => c.id === id) ?? [];
}
