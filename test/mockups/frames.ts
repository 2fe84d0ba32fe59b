import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ffmpegPath } from '../helpers/fixtures.js';

const run = promisify(execFile);

export type Rgba = [number, number, number, number];

export interface RgbaFrame {
  width: number;
  height: number;
  at(x: number, y: number): Rgba;
}

/**
 * Frame `index` of a rendered video decoded to RGBA at its own size. WebM is decoded with libvpx, the only VP9 decoder
 * that reads the alpha side stream (ffmpeg's native one drops it).
 */
export async function rgbaFrame(file: string, index: number, width: number, height: number): Promise<RgbaFrame> {
  const decoder = file.endsWith('.webm') ? ['-c:v', 'libvpx-vp9'] : [];
  const { stdout } = await run(
    await ffmpegPath(),
    [
      '-hide_banner',
      '-loglevel',
      'error',
      ...decoder,
      '-i',
      file,
      '-vf',
      `select=eq(n\\,${index}),format=rgba`,
      '-frames:v',
      '1',
      '-f',
      'rawvideo',
      'pipe:1',
    ],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  const buf = stdout as unknown as Buffer;
  if (buf.length < width * height * 4)
    throw new Error(`frame ${index} of ${file} was not decoded (${buf.length} bytes)`);
  return {
    width,
    height,
    at(x, y) {
      const i = (Math.round(y) * width + Math.round(x)) * 4;
      return [buf[i], buf[i + 1], buf[i + 2], buf[i + 3]];
    },
  };
}

/** Euclidean distance between two colours' RGB. */
export const distance = (a: readonly number[], b: readonly number[]): number =>
  Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

/** Leftmost and rightmost x of row y whose colour is farther than `tolerance` from `background`. */
export function extent(frame: RgbaFrame, y: number, background: readonly number[], tolerance = 60): [number, number] {
  let left = -1;
  let right = -1;
  for (let x = 0; x < frame.width; x++) {
    if (distance(frame.at(x, y), background) > tolerance) {
      if (left < 0) left = x;
      right = x;
    }
  }
  return [left, right];
}
