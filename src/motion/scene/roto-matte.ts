import zlib from 'node:zlib';
import { ProjectFormatError } from '../chunks.js';

/**
 * Roto Brush's propagated matte, as After Effects keeps it in the project (docs/motion.md "Roto Brush"): a Utf8 text
 * between the effect's `tdmn` and its `sspc`, comma-separated: 14 header fields (width at 7, height at 8, frame rate
 * at 10, frame count at 12, first frame's index at 13), then per frame a base64 zlib stream of width x height alpha
 * bytes followed by the next frame's index (0 after the last).
 */
export interface RotoMatte {
  width: number;
  height: number;
  /** Frames per second of the frame indices (the layer's source frames). */
  frameRate: number;
  /** The compressed matte of each stored frame (base64 zlib, as stored), by the frame's index: plain data. */
  frames: Record<number, string>;
}

/** A matte side longer than this is not a real one (After Effects' largest layer is 30,000 pixels a side). */
const MAX_SIDE = 30_000;
/** Width x height cap: 16k x 4k, as much as one frame may inflate to. */
const MAX_PIXELS = 1 << 26;
const HEADER = 14;

const bad = (why: string) => new ProjectFormatError(`Roto Brush matte: ${why}`);

function integer(s: string, what: string, min: number, max: number): number {
  if (!/^\d{1,9}$/.test(s)) throw bad(`${what} is not a whole number`);
  const n = Number(s);
  if (n < min || n > max) throw bad(`${what} ${n} is out of range`);
  return n;
}

/** The matte of one stored frame: width x height alpha bytes, inflated no further than that. */
export function inflateMatte(m: RotoMatte, frame: number): Uint8Array | undefined {
  const data = Object.hasOwn(m.frames, frame) ? m.frames[frame] : undefined;
  if (data === undefined) return undefined;
  const size = m.width * m.height;
  let out: Buffer;
  try {
    out = zlib.inflateSync(Buffer.from(data, 'base64'), { maxOutputLength: size });
  } catch {
    throw bad(`frame ${frame} does not inflate to ${m.width}x${m.height} bytes`);
  }
  if (out.length !== size) throw bad(`frame ${frame} inflates to ${out.length} bytes, not ${m.width}x${m.height}`);
  return out;
}

/**
 * Reads the matte text strictly: every field in range, every frame inflating to exactly width x height bytes (checked
 * here, one frame at a time, so a hostile file fails at decode with a ProjectFormatError; only the compressed frames
 * are kept).
 */
export function parseRotoMatte(text: string): RotoMatte {
  const f = text.split(',');
  if (f.length < HEADER + 1) throw bad('header too short');
  const width = integer(f[7], 'width', 1, MAX_SIDE);
  const height = integer(f[8], 'height', 1, MAX_SIDE);
  if (width * height > MAX_PIXELS) throw bad(`${width}x${height} is too large`);
  const frameRate = integer(f[10], 'frame rate', 1, 1000);
  const count = integer(f[12], 'frame count', 0, 1_000_000);
  // count frames, each a stream and an index, then the trailing empty field
  if (f.length !== HEADER + 2 * count + 1 || f[f.length - 1] !== '') throw bad(`${count} frames expected`);
  const m: RotoMatte = { width, height, frameRate, frames: {} };
  let index = integer(f[13], 'first frame index', 0, 1_000_000_000);
  for (let k = 0; k < count; k++) {
    const s = f[HEADER + 2 * k];
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4) throw bad(`frame ${index} is not base64`);
    if (Object.hasOwn(m.frames, index)) throw bad(`frame ${index} is stored twice`);
    m.frames[index] = s;
    inflateMatte(m, index);
    index = integer(f[HEADER + 2 * k + 1], 'frame index', 0, 1_000_000_000);
  }
  return m;
}
