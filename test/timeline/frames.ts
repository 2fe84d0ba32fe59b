import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ffmpegPath } from '../helpers/fixtures.js';

const run = promisify(execFile);

export interface Frame {
  width: number;
  height: number;
  /** RGB of one pixel. */
  at(x: number, y: number): [number, number, number];
}

/**
 * One decoded frame at `t` seconds as RGB. The whole frame is converted before sampling: cropping a 1x1 patch out
 * of a yuv420 frame is refused by the 2018 ffmpeg build (crop rounds the width down to the chroma grid).
 */
export async function frameAt(file: string, t: number, width: number, height: number): Promise<Frame> {
  const { stdout } = await run(
    await ffmpegPath(),
    ['-hide_banner', '-loglevel', 'error', '-ss', String(t), '-i', file, '-frames:v', '1', '-vf', `scale=${width}:${height},format=rgb24`, '-f', 'rawvideo', 'pipe:1'],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  const buf = stdout as unknown as Buffer;
  return {
    width,
    height,
    at(x, y) {
      const i = (Math.round(y) * width + Math.round(x)) * 3;
      return [buf[i], buf[i + 1], buf[i + 2]];
    },
  };
}
