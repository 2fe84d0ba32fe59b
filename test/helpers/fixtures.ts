import { execFile } from 'node:child_process';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Tools } from '../../src/tools/locate.js';
import { probe, type ProbeResult } from '../../src/tools/ffprobe.js';

const run = promisify(execFile);
const tools = new Tools(process.env);

export async function ffmpegPath(): Promise<string> {
  return (await tools.require('ffmpeg')).path;
}

export async function tempDir(prefix = 'bms-fx-'): Promise<string> {
  return fsp.mkdtemp(path.join(os.tmpdir(), prefix));
}

/** Runs ffmpeg with the located binary (test fixtures only). */
export async function ffmpeg(args: string[]): Promise<void> {
  await run(await ffmpegPath(), ['-hide_banner', '-loglevel', 'error', '-y', ...args], { maxBuffer: 16 * 1024 * 1024 });
}

/** `testsrc2` -> `testsrc2=`, `color=c=red` -> `color=c=red:`, ready for more options. */
const withOptions = (source: string) => (source.includes('=') ? `${source}:` : `${source}=`);

export interface VideoFixture {
  width?: number;
  height?: number;
  fps?: number;
  duration?: number;
  /** Sine tone frequency; omit or 0 for no audio track. */
  tone?: number;
  /** lavfi source, testsrc2 by default; `color=c=red` style sources are accepted. */
  source?: string;
  codec?: string[];
}

/** A test-pattern video (with an optional tone) written by ffmpeg. */
export async function makeVideo(file: string, o: VideoFixture = {}): Promise<string> {
  const w = o.width ?? 320;
  const h = o.height ?? 240;
  const fps = o.fps ?? 25;
  const d = o.duration ?? 2;
  const src = o.source ?? 'testsrc2';
  const args = ['-f', 'lavfi', '-i', `${withOptions(src)}size=${w}x${h}:rate=${fps}:duration=${d}`];
  if (o.tone) args.push('-f', 'lavfi', '-i', `sine=frequency=${o.tone}:sample_rate=48000:duration=${d}`);
  const ext = path.extname(file).slice(1);
  const codec =
    o.codec ??
    (ext === 'webm'
      ? ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8']
      : ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p']);
  args.push(...codec);
  if (o.tone) args.push(...(ext === 'webm' ? ['-c:a', 'libopus'] : ['-c:a', 'aac']), '-shortest');
  args.push(file);
  await ffmpeg(args);
  return file;
}

/** A tone as an audio file. */
export async function makeAudio(file: string, o: { duration?: number; tone?: number } = {}): Promise<string> {
  await ffmpeg([
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=${o.tone ?? 440}:sample_rate=44100:duration=${o.duration ?? 2}`,
    file,
  ]);
  return file;
}

/** A test-pattern still image (png/jpg/webp by extension). */
export async function makeImage(
  file: string,
  o: { width?: number; height?: number; source?: string } = {},
): Promise<string> {
  await ffmpeg([
    '-f',
    'lavfi',
    '-i',
    `${withOptions(o.source ?? 'testsrc2')}size=${o.width ?? 320}x${o.height ?? 240}`,
    '-frames:v',
    '1',
    file,
  ]);
  return file;
}

/** A file that claims to be media but is not decodable. */
export async function makeCorrupt(file: string): Promise<string> {
  await fsp.writeFile(file, Buffer.concat([Buffer.from('0000001866747970', 'hex'), Buffer.alloc(4096, 7)]));
  return file;
}

export async function probeFile(file: string): Promise<ProbeResult> {
  return probe(tools, file);
}

/** The video packets of a file in presentation order: time and duration in seconds, whether it is a key frame. */
export async function videoPackets(file: string): Promise<{ pts: number; duration: number; key: boolean }[]> {
  const { stdout } = await run((await tools.require('ffprobe')).path, [
    ...['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=pts_time,duration_time,flags'],
    ...['-of', 'json', file],
  ]);
  const packets = (JSON.parse(stdout) as { packets: { pts_time: string; duration_time: string; flags: string }[] })
    .packets;
  return packets
    .map((p) => ({ pts: Number(p.pts_time), duration: Number(p.duration_time), key: p.flags.includes('K') }))
    .sort((a, b) => a.pts - b.pts);
}

/**
 * Why two video files that should be the same are not, for a failing determinism test's message: the frames whose
 * decoded pictures differ (ffmpeg's framemd5), or that the pictures agree and only the bitstream differs.
 */
export async function whereVideosDiffer(a: string, b: string): Promise<string> {
  const hashes = async (file: string) =>
    (await run(await ffmpegPath(), ['-v', 'error', '-i', file, '-map', '0:v:0', '-f', 'framemd5', '-'])).stdout
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => l.split(',').pop()!.trim());
  const [x, y] = await Promise.all([hashes(a), hashes(b)]);
  const frames = x.flatMap((h, i) => (h === y[i] ? [] : [i]));
  if (x.length !== y.length) return `${x.length} frames against ${y.length}`;
  return frames.length ? `decoded frames ${frames.join(', ')} of ${x.length} differ` : 'the decoded frames agree';
}

export interface Frame {
  width: number;
  height: number;
  /** RGB of one pixel. */
  at(x: number, y: number): [number, number, number];
}

/**
 * One decoded frame at `t` seconds, scaled to width x height, as RGB. The whole frame is converted before sampling:
 * a 1x1 crop of a 4:2:0 frame is refused by older ffmpeg builds (crop rounds down to the chroma grid).
 */
export async function frameAt(file: string, t: number, width: number, height: number): Promise<Frame> {
  const { stdout } = await run(
    await ffmpegPath(),
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-ss',
      String(t),
      '-i',
      file,
      '-frames:v',
      '1',
      '-vf',
      `scale=${width}:${height},format=rgb24`,
      '-f',
      'rawvideo',
      'pipe:1',
    ],
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
