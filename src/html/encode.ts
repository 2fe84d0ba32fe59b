import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { Tools } from '../tools/locate.js';
import { runFfmpeg } from '../tools/ffmpeg.js';

export type VideoFormat = 'mp4' | 'webm' | 'mov';

/**
 * Settings that make the same frames give the same bytes: bit-exact muxing (no encoder version string, no creation
 * time, fixed container ids), no copied metadata, and a fixed encoder thread count. x264's frame threads are
 * deterministic for a given count, but the count would otherwise follow the machine's cores, and the bitstream with it.
 */
const BITEXACT = ['-fflags', '+bitexact', '-flags:v', '+bitexact', '-map_metadata', '-1'];

const ENCODERS: Record<VideoFormat, string[]> = {
  mp4: [
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '18',
    '-pix_fmt',
    'yuv420p',
    '-threads',
    '2',
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
  ],
  webm: [
    '-c:v',
    'libvpx-vp9',
    '-deadline',
    'good',
    '-cpu-used',
    '5',
    '-row-mt',
    '0',
    '-threads',
    '1',
    '-crf',
    '32',
    '-b:v',
    '0',
    '-pix_fmt',
    'yuv420p',
    '-f',
    'webm',
  ],
  mov: [
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '18',
    '-pix_fmt',
    'yuv420p',
    '-threads',
    '2',
    '-movflags',
    '+faststart',
    '-f',
    'mov',
  ],
};

/** Encoders that keep the frames' alpha channel (from RGBA PNGs); mp4 has none. */
export const ALPHA_ENCODERS: Partial<Record<VideoFormat, string[]>> = {
  webm: [
    '-c:v',
    'libvpx-vp9',
    '-deadline',
    'good',
    '-cpu-used',
    '5',
    '-row-mt',
    '0',
    '-threads',
    '1',
    '-crf',
    '32',
    '-b:v',
    '0',
    '-pix_fmt',
    'yuva420p',
    '-auto-alt-ref',
    '0',
    '-f',
    'webm',
  ],
  mov: ['-c:v', 'prores_ks', '-profile:v', '4444', '-pix_fmt', 'yuva444p10le', '-threads', '2', '-f', 'mov'],
};

const PROXY = [
  '-c:v',
  'libx264',
  '-preset',
  'veryfast',
  '-crf',
  '26',
  '-pix_fmt',
  'yuv420p',
  '-threads',
  '1',
  '-movflags',
  '+faststart',
  '-f',
  'mp4',
];

/**
 * Frames written to ffmpeg's stdin that it has not read yet. Capture goes on while ffmpeg works through them, so the
 * browser and the encoder overlap instead of taking turns; past this, capture waits for ffmpeg to catch up.
 */
const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;

export interface EncodeOptions {
  fps: number;
  format: VideoFormat;
  /** Keep the frames' alpha (ALPHA_ENCODERS); a format without one, or a proxy (yuv420p), is refused. */
  alpha?: boolean;
  /** Path of the video to write (a fresh temp path). */
  output: string;
  /** A second, smaller H.264 video of the same frames, this many pixels high. */
  proxy?: { output: string; height: number };
  frameCount: number;
  signal: AbortSignal;
  timeoutMs: number;
  onProgress?: (fraction: number) => void;
}

/** Where frames go: resolves at once while ffmpeg has less than MAX_BUFFERED_BYTES to read, else once it caught up. */
export type FrameSink = (png: Buffer) => Promise<void>;

/**
 * Starts ffmpeg reading PNG frames from its stdin, lets `produce` push every frame into it, and resolves when the
 * file(s) are complete. No frame touches the disk. A failure on either side stops the other.
 */
export async function encodeFrames(
  tools: Tools,
  opts: EncodeOptions,
  produce: (sink: FrameSink) => Promise<void>,
): Promise<void> {
  const encoder = opts.alpha ? ALPHA_ENCODERS[opts.format] : ENCODERS[opts.format];
  if (!encoder || (opts.alpha && opts.proxy))
    throw new Error(`${opts.format}${opts.proxy ? ' with a proxy' : ''} cannot carry an alpha channel`);
  const args = [
    '-loglevel',
    'error',
    '-f',
    'image2pipe',
    '-framerate',
    String(opts.fps),
    '-c:v',
    'png',
    '-i',
    'pipe:0',
  ];
  if (opts.proxy) {
    // Converted to yuv420p once, before the split: the proxy then scales YUV rather than full-size RGB frames.
    args.push(
      '-filter_complex',
      `[0:v]format=yuv420p,split=2[main][small];[small]scale=-2:${opts.proxy.height}:flags=bilinear[proxy]`,
    );
    args.push('-map', '[main]', ...encoder, ...BITEXACT, opts.output);
    args.push('-map', '[proxy]', ...PROXY, ...BITEXACT, opts.proxy.output);
  } else {
    args.push('-map', '0:v', ...encoder, ...BITEXACT, opts.output);
  }

  const stop = new AbortController();
  const onOuterAbort = () => stop.abort(opts.signal.reason);
  opts.signal.addEventListener('abort', onOuterAbort, { once: true });
  let stdin: Writable | undefined;
  let spawned!: () => void;
  const started = new Promise<void>((resolve) => (spawned = resolve));
  const finished = runFfmpeg(tools, args, {
    stdin: 'pipe',
    signal: stop.signal,
    timeoutMs: opts.timeoutMs,
    durationSeconds: opts.frameCount / opts.fps,
    onProgress: (p) => p.fraction !== undefined && opts.onProgress?.(p.fraction),
    onSpawn: (s) => {
      // A spawned child's stdin, typed loosely by runFfmpeg; its buffered length paces the capture.
      stdin = (s as Writable | null) ?? undefined;
      // ffmpeg exiting early turns writes into EPIPE; the exit itself is reported by `finished`.
      stdin?.on('error', () => undefined);
      spawned();
    },
  });
  const exited = finished.then(
    () => {
      throw new Error('ffmpeg exited before all frames were written');
    },
    (err: unknown) => {
      throw err;
    },
  );
  exited.catch(() => undefined);

  try {
    await Promise.race([started, exited]);
    const pipe = stdin;
    if (!pipe) throw new Error('ffmpeg has no stdin');
    await produce(async (png) => {
      if (!pipe.write(png) && pipe.writableLength > MAX_BUFFERED_BYTES)
        await Promise.race([once(pipe, 'drain'), exited]);
    });
    pipe.end();
    await finished;
  } catch (err) {
    stop.abort(err);
    await finished.catch(() => undefined);
    // When the caller aborted (time limit, client gone), ffmpeg's own "cancelled" may have been seen first: the
    // caller's reason is the one to report.
    throw opts.signal.aborted ? opts.signal.reason : err;
  } finally {
    opts.signal.removeEventListener('abort', onOuterAbort);
  }
}
