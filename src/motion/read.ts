import { readAepx } from './aepx.js';
import { ProjectFormatError, readRifx, type Chunk } from './chunks.js';
import { readProject } from './project.js';
import type { InspectedProject } from './schemas.js';

/** Reads a project file's bytes, telling the two formats apart by their first bytes (not by the file name). */
export function parseProject(buf: Uint8Array): InspectedProject {
  return readProject(readChunkTree(buf));
}

/** The chunk tree of either format; `allChunks` keeps every .aepx chunk's bytes (an .aep keeps them anyway). */
export function readChunkTree(buf: Uint8Array, opts: { allChunks?: boolean } = {}): Chunk {
  if (buf.length === 0) throw new ProjectFormatError('the file is empty');
  const head = Buffer.from(buf.subarray(0, 4)).toString('latin1');
  if (head === 'RIFX' || head === 'RIFF') return readRifx(buf);
  // .aepx: XML, possibly after a UTF-8 byte order mark
  const text = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('utf8');
  if (/^\uFEFF?\s*</.test(text.slice(0, 64))) return readAepx(text.replace(/^\uFEFF/, ''), opts);
  throw new ProjectFormatError('not an After Effects project: neither RIFX (.aep) nor XML (.aepx)');
}
