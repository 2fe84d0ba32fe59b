import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** A font file's faces: PostScript name (name ID 6) and family (name ID 1). */
export interface FontFace {
  postscript: string;
  family: string;
}

const FONT_FILE = /\.(ttf|otf|ttc|otc)$/i;
/** Bounds of a scan: folders nested this deep, this many files (a machine with more is beyond a preview's needs). */
const MAX_DEPTH = 4;
const MAX_FILES = 10_000;
/** How long a scan is trusted: fonts installed meanwhile show up in the next one. */
const FRESH_MS = 5 * 60_000;

/** The folders a system keeps fonts in (where fontconfig may be absent: macOS and Windows). */
export function systemFontFolders(): string[] {
  const home = os.homedir();
  if (process.platform === 'darwin')
    return ['/System/Library/Fonts', '/Library/Fonts', path.join(home, 'Library/Fonts')];
  if (process.platform === 'win32')
    return [
      path.join(process.env.WINDIR ?? 'C:\\Windows', 'Fonts'),
      ...(process.env.LOCALAPPDATA ? [path.join(process.env.LOCALAPPDATA, 'Microsoft', 'Windows', 'Fonts')] : []),
    ];
  return [
    '/usr/share/fonts',
    '/usr/local/share/fonts',
    path.join(home, '.local/share/fonts'),
    path.join(home, '.fonts'),
  ];
}

/** Reads `length` bytes at `position`; fewer at the end of the file. */
async function readAt(file: fsp.FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await file.read(buf, 0, length, position);
  return buf.subarray(0, bytesRead);
}

/** A name record's text: UTF-16BE for Unicode and Windows platforms, else one byte a character. */
const nameText = (platform: number, raw: Buffer) =>
  platform === 0 || platform === 3 ? Buffer.from(raw).swap16().toString('utf16le') : raw.toString('latin1');

/**
 * The faces of a TrueType/OpenType file or collection, from its `name` tables: only the table directory and the name
 * tables are read, never the glyphs. An unreadable or malformed file has none.
 */
export async function fontFaces(file: string): Promise<FontFace[]> {
  const fh = await fsp.open(file, 'r').catch(() => undefined);
  if (!fh) return [];
  try {
    const head = await readAt(fh, 0, 12);
    if (head.length < 12) return [];
    const collection = head.toString('latin1', 0, 4) === 'ttcf';
    const starts = collection
      ? await readAt(fh, 12, 4 * Math.min(head.readUInt32BE(8), 64)).then((b) =>
          Array.from({ length: b.length >> 2 }, (_, i) => b.readUInt32BE(4 * i)),
        )
      : [0];
    const faces: FontFace[] = [];
    for (const start of starts) {
      const dir = await readAt(fh, start, 12);
      if (dir.length < 12) continue;
      const tables = Math.min(dir.readUInt16BE(4), 256);
      const records = await readAt(fh, start + 12, 16 * tables);
      for (let t = 0; t + 16 <= records.length; t += 16) {
        if (records.toString('latin1', t, t + 4) !== 'name') continue;
        const table = await readAt(fh, records.readUInt32BE(t + 8), Math.min(records.readUInt32BE(t + 12), 1 << 20));
        if (table.length < 6) break;
        const n = table.readUInt16BE(2);
        const strings = table.readUInt16BE(4);
        const found: Partial<Record<1 | 6, string>> = {};
        for (let r = 0; r < n && 6 + 12 * (r + 1) <= table.length; r++) {
          const at = 6 + 12 * r;
          const platform = table.readUInt16BE(at);
          const id = table.readUInt16BE(at + 6);
          const from = strings + table.readUInt16BE(at + 10);
          const raw = table.subarray(from, from + table.readUInt16BE(at + 8));
          if ((id === 1 || id === 6) && found[id] === undefined && raw.length) found[id] = nameText(platform, raw);
        }
        if (found[6]) faces.push({ postscript: found[6], family: found[1] ?? found[6] });
        break;
      }
    }
    return faces;
  } catch {
    return [];
  } finally {
    await fh.close();
  }
}

/**
 * A font's ascent as a fraction of its em: the OS/2 typographic ascender over the head table's units per em (the first
 * face of a collection). After Effects puts box text's first baseline this far below the box's top (docs/motion.md).
 * Undefined when the file has no such tables.
 */
export async function fontAscent(file: string): Promise<number | undefined> {
  const fh = await fsp.open(file, 'r').catch(() => undefined);
  if (!fh) return undefined;
  try {
    const head = await readAt(fh, 0, 16);
    if (head.length < 16) return undefined;
    const start = head.toString('latin1', 0, 4) === 'ttcf' ? head.readUInt32BE(12) : 0;
    const dir = await readAt(fh, start, 12);
    if (dir.length < 12) return undefined;
    const records = await readAt(fh, start + 12, 16 * Math.min(dir.readUInt16BE(4), 256));
    const at: Record<string, number> = {};
    for (let t = 0; t + 16 <= records.length; t += 16)
      at[records.toString('latin1', t, t + 4)] = records.readUInt32BE(t + 8);
    if (at['OS/2'] === undefined || at.head === undefined) return undefined;
    const unitsPerEm = (await readAt(fh, at.head + 18, 2)).readUInt16BE(0);
    const typoAscender = (await readAt(fh, at['OS/2'] + 68, 2)).readInt16BE(0);
    return unitsPerEm > 0 && typoAscender > 0 ? typoAscender / unitsPerEm : undefined;
  } catch {
    return undefined;
  } finally {
    await fh.close();
  }
}

/** Every font face in `folders` (nested up to a few levels), by lower-case PostScript name. */
export async function scanFontFolders(folders: string[]): Promise<Map<string, FontFace & { file: string }>> {
  const index = new Map<string, FontFace & { file: string }>();
  let files = 0;
  const visit = async (dir: string, depth: number): Promise<void> => {
    const entries = await fsp.readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (files >= MAX_FILES) return;
      const full = path.join(dir, e.name);
      if (e.isDirectory() && depth < MAX_DEPTH) await visit(full, depth + 1);
      else if (e.isFile() && FONT_FILE.test(e.name)) {
        files++;
        for (const face of await fontFaces(full))
          if (!index.has(face.postscript.toLowerCase()))
            index.set(face.postscript.toLowerCase(), { ...face, file: full });
      }
    }
  };
  for (const folder of folders) await visit(folder, 0);
  return index;
}

let scanned: { at: number; index: Promise<Map<string, FontFace & { file: string }>> } | undefined;

/**
 * The system's font folders, scanned at most every few minutes: facts of the machine (like the tools found on it),
 * shared by every preview of the process.
 */
export function systemFonts(): Promise<Map<string, FontFace & { file: string }>> {
  if (!scanned || Date.now() - scanned.at > FRESH_MS)
    scanned = { at: Date.now(), index: scanFontFolders(systemFontFolders()) };
  return scanned.index;
}
