import { once } from 'node:events';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Writable } from 'node:stream';
import type { Tools } from '../tools/locate.js';
import { runFfmpeg } from '../tools/ffmpeg.js';
import { containerArgs, videoArgs } from './encoders.js';

export type VideoFormat = 'mp4' | 'webm' | 'mov';

/**
 * Settings that make the same frames give the same bytes: bit-exact muxing (no encoder version string, no creation
 * time, fixed container ids), no copied metadata, and a fixed encoder thread count. x264's frame threads are
 * deterministic for a given count, but the count would otherwise follow the machine's cores, and the bitstream with it.
 */
const BITEXACT = ['-fflags', '+bitexact', '-flags:v', '+bitexact', '-map_metadata', '-1'];

/**
 * The capture engine's encodings (the encoder table, encoders.ts), with a fixed thread count so the same frames give
 * the same bytes, and VP9 at the engine's speed (`ENGINE_VP9`). MOV holds H.264 like MP4.
 */
const ENGINE_VP9 = { cpuUsed: 5, rowMt: false };
const ENCODERS: Record<VideoFormat, string[]> = {
  mp4: [...videoArgs({ codec: 'h264', threads: 2 }), ...containerArgs('mp4', { muxer: true })],
  webm: [...videoArgs({ codec: 'vp9', threads: 1, vp9: ENGINE_VP9 }), ...containerArgs('webm', { muxer: true })],
  mov: [...videoArgs({ codec: 'h264', threads: 2 }), ...containerArgs('mov', { muxer: true })],
};

/** Encoders that keep the frames' alpha channel (from RGBA PNGs); mp4 has none. */
export const ALPHA_ENCODERS: Partial<Record<VideoFormat, string[]>> = {
  webm: [
    ...videoArgs({ codec: 'vp9', threads: 1, vp9: ENGINE_VP9, alpha: true }),
    ...containerArgs('webm', { muxer: true }),
  ],
  mov: [...videoArgs({ codec: 'prores', alpha: true, threads: 2 }), ...containerArgs('mov', { muxer: true })],
};

/** The proxy: a small H.264 to scrub with, lower quality (crf 26) on one thread. */
const PROXY = [...videoArgs({ codec: 'h264', crf: 26, threads: 1 }), ...containerArgs('mp4', { muxer: true })];

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
  /**
   * Frame ranges captured and encoded at once, each by its own browser page and ffmpeg, then joined (see
   * `captureVideo`); default: the browser pool's `pagesPerRender`. The bytes depend on it, the frames do not.
   */
  ranges?: number;
  /**
   * How frames travel from Chromium to ffmpeg: `png` (default, lossless, keeps alpha) or `jpeg` (quality
   * JPEG_QUALITY, no alpha): about ten times fewer bytes to encode, move and decode for a picture that x264 or VP9
   * will make lossy anyway. Refused with `alpha`.
   */
  frames?: FrameFormat;
  /**
   * Heights of the horizontal bands a frame comes in, top to bottom, each captured by its own page and sent in its own
   * stream (see `captureVideo`); default: the frame in one piece. Not with `alpha`.
   */
  bands?: number[];
}

export type FrameFormat = 'png' | 'jpeg';

/**
 * A frame as it reaches the encoder: one entry per band (EncodeOptions.bands), the band's image, or undefined where the
 * band shows the same picture as in the frame before.
 */
export type Picture = (Buffer | undefined)[];

/**
 * JPEG frames: 4:2:0 like the yuv420p video made from them; at 95 the difference to the PNG frame is below x264's at
 * crf 18 (measured in docs/html.md).
 */
export const JPEG_QUALITY = 95;

/**
 * Where frames go, one call per frame in order, each band as an image (EncodeOptions.frames) or undefined where it is
 * the same picture as in the frame before (it is then not sent again). Resolves at once while ffmpeg has less than
 * MAX_BUFFERED_BYTES to read, else once it caught up.
 */
export type FrameSink = (picture: Picture) => Promise<void>;

/**
 * A band that did not change for this many frames is sent again (a frame that repeats its picture): ffmpeg stacks
 * the bands by their timestamps and reads a band's next frame before it can stack any later one, so a band that stays
 * silent would hold back the others' frames (and their memory) until it speaks.
 */
const BAND_HEARTBEAT_FRAMES = 8;

/**
 * Frames reach ffmpeg in an IVF stream (a 32-byte header, then per frame its size and a 64-bit timestamp) whose
 * codec tag (`MPNG`, `MJPG`) makes ffmpeg decode PNG or JPEG: the one container with timestamps that is this simple
 * to write. A frame
 * that repeats the one before is not written: its timestamp stays a gap, which the `fps` filter fills with the
 * previous picture after it was converted to YUV (and scaled for the proxy), so a repeated frame costs no PNG
 * encode, transfer, decode or conversion, only x264/VP9 encoding a picture identical to its reference.
 */
function ivfHeader(frameCount: number, fps: number, format: FrameFormat): Buffer {
  const h = Buffer.alloc(32);
  h.write('DKIF', 0, 'latin1');
  h.writeUInt16LE(0, 4);
  h.writeUInt16LE(32, 6);
  h.write(format === 'jpeg' ? 'MJPG' : 'MPNG', 8, 'latin1');
  // Width and height are read from each PNG; the time base is 1/fps, so a frame's timestamp is its index.
  h.writeUInt32LE(fps, 16);
  h.writeUInt32LE(1, 20);
  h.writeUInt32LE(frameCount, 24);
  return h;
}

function ivfFrame(size: number, index: number): Buffer {
  const h = Buffer.alloc(12);
  h.writeUInt32LE(size, 0);
  h.writeBigUInt64LE(BigInt(index), 4);
  return h;
}

/** The `-pix_fmt` an encoder's arguments ask for. */
const pixFmtOf = (encoder: string[]): string => encoder[encoder.indexOf('-pix_fmt') + 1];

/** One ffmpeg taking frames as they come: `write` a picture at a frame index (gaps repeat the picture before). */
interface Encoder {
  write(picture: Picture, index: number): Promise<void>;
  /**
   * Sends every band not sent at `index` again there (a frame that repeats the one before, written out; every band must
   * reach a piece's last frame, or ffmpeg's stacking drops it).
   */
  writeAll(index: number): Promise<void>;
  /** Closes the input; resolves once the file(s) are complete. */
  finish(): Promise<void>;
  /** Kills ffmpeg and waits for it to exit. */
  fail(err: unknown): Promise<void>;
}

/**
 * Starts ffmpeg reading an IVF stream of PNG or JPEG frames per band (stdin, then pipes 3, 4, ...). No frame touches
 * the disk. ffmpeg exiting early makes the next `write` fail; the caller's signal kills it.
 */
async function startEncoder(tools: Tools, opts: EncodeOptions): Promise<Encoder> {
  const encoder = opts.alpha ? ALPHA_ENCODERS[opts.format] : ENCODERS[opts.format];
  const bands = opts.bands?.length ?? 1;
  if (!encoder || (opts.alpha && (opts.proxy || opts.frames === 'jpeg' || bands > 1)))
    throw new Error(`${opts.format}${opts.proxy ? ' with a proxy' : ''} cannot carry an alpha channel`);
  // Band 0 comes on stdin, the others on pipes 3, 4, ...
  const args = ['-loglevel', 'error'];
  for (let i = 0; i < bands; i++) args.push('-f', 'ivf', '-i', i === 0 ? 'pipe:0' : `pipe:${i + 2}`);
  // A repeated frame is a gap in the timestamps, which the fps filter fills with the picture before. It comes after
  // the conversion: a repeated frame is converted (and scaled) once. The timestamps are the frames' indices, so no
  // frame is moved; `passthrough` keeps the muxer from re-timing them. Bands are filled each on its own, then stacked
  // (filled after the stacking, the last frame was lost).
  const fill = `fps=${opts.fps}`;
  const pixFmt = opts.proxy || bands > 1 ? 'yuv420p' : pixFmtOf(encoder);
  const stacked = (filled: boolean) =>
    bands === 1
      ? `[0:v]format=${pixFmt}${filled ? `,${fill}` : ''}`
      : `${Array.from({ length: bands }, (_, i) => `[${i}:v]format=yuv420p,${fill}[band${i}];`).join('')}` +
        `${Array.from({ length: bands }, (_, i) => `[band${i}]`).join('')}vstack=inputs=${bands}`;
  // The bands' frames are filled already; one stream's are filled after the proxy's scaling.
  const after = bands === 1 ? `,${fill}` : '';
  if (opts.proxy) {
    // Converted to yuv420p once, before the split: the proxy then scales YUV rather than full-size RGB frames.
    args.push(
      '-filter_complex',
      `${stacked(false)},split=2[a][b];[a]null${after}[main];[b]scale=-2:${opts.proxy.height}:flags=bilinear${after}[proxy]`,
    );
    args.push('-map', '[main]', '-vsync', 'passthrough', ...encoder, ...BITEXACT, opts.output);
    args.push('-map', '[proxy]', '-vsync', 'passthrough', ...PROXY, ...BITEXACT, opts.proxy.output);
  } else {
    args.push('-filter_complex', `${stacked(true)}[main]`);
    args.push('-map', '[main]', '-vsync', 'passthrough', ...encoder, ...BITEXACT, opts.output);
  }

  const stop = new AbortController();
  const onOuterAbort = () => stop.abort(opts.signal.reason);
  opts.signal.addEventListener('abort', onOuterAbort, { once: true });
  let pipes: Writable[] = [];
  let spawned!: () => void;
  const started = new Promise<void>((resolve) => (spawned = resolve));
  const finished = runFfmpeg(tools, args, {
    stdin: 'pipe',
    inputs: bands - 1,
    signal: stop.signal,
    timeoutMs: opts.timeoutMs,
    onSpawn: (stdin, inputs) => {
      // A spawned child's pipes, typed loosely by runFfmpeg; their buffered length paces the capture.
      pipes = [stdin, ...inputs].filter((p): p is Writable => !!p);
      // ffmpeg exiting early turns writes into EPIPE; the exit itself is reported by `finished`.
      for (const p of pipes) p.on('error', () => undefined);
      spawned();
    },
  }).finally(() => opts.signal.removeEventListener('abort', onOuterAbort));
  const exited = finished.then(() => {
    throw new Error('ffmpeg exited before all frames were written');
  });
  exited.catch(() => undefined);
  const fail = async (err: unknown) => {
    stop.abort(err);
    await finished.catch(() => undefined);
  };
  try {
    await Promise.race([started, exited]);
  } catch (err) {
    await fail(err);
    throw err;
  }
  if (pipes.length !== bands) {
    const err = new Error('ffmpeg has no input pipes');
    await fail(err);
    throw err;
  }
  for (const p of pipes) p.write(ivfHeader(opts.frameCount, opts.fps, opts.frames ?? 'png'));
  const latest: (Buffer | undefined)[] = pipes.map(() => undefined);
  const sentAt = pipes.map(() => -1);
  const send = async (band: number, image: Buffer, index: number) => {
    const pipe = pipes[band];
    latest[band] = image;
    sentAt[band] = index;
    pipe.write(ivfFrame(image.length, index));
    if (!pipe.write(image) && pipe.writableLength > MAX_BUFFERED_BYTES)
      await Promise.race([once(pipe, 'drain'), exited]);
  };
  return {
    async write(picture, index) {
      if (stop.signal.aborted) throw stop.signal.reason;
      for (let band = 0; band < bands; band++) {
        const image = picture[band];
        if (image) await send(band, image, index);
        else if (bands > 1 && index - sentAt[band] >= BAND_HEARTBEAT_FRAMES) await send(band, latest[band]!, index);
      }
    },
    async writeAll(index) {
      if (stop.signal.aborted) throw stop.signal.reason;
      for (let band = 0; band < bands; band++) if (sentAt[band] !== index) await send(band, latest[band]!, index);
    },
    async finish() {
      for (const p of pipes) p.end();
      await finished;
    },
    fail,
  };
}

/**
 * Encodes frames 0..opts.frameCount-1 into one file (and its proxy): `produce` pushes every frame into the sink, in
 * order. A repeated frame is left out, except the last one: it tells the fps filter where the video ends.
 */
export async function encodeFrames(
  tools: Tools,
  opts: EncodeOptions,
  produce: (sink: FrameSink) => Promise<void>,
): Promise<void> {
  const encoder = await startEncoder(tools, opts);
  try {
    let index = 0;
    await produce(async (picture) => {
      if (index >= opts.frameCount) throw new Error('more frames than the video has');
      if (index === 0 && !picture.every(Boolean)) throw new Error('the first frame has no picture');
      if (picture.some(Boolean)) await encoder.write(picture, index);
      if (index === opts.frameCount - 1) await encoder.writeAll(index);
      index++;
    });
    if (index !== opts.frameCount) throw new Error(`${index} frames were produced for a video of ${opts.frameCount}`);
    await encoder.finish();
  } catch (err) {
    await encoder.fail(err);
    // When the caller aborted (time limit, client gone), ffmpeg's own "cancelled" may have been seen first: the
    // caller's reason is the one to report.
    throw opts.signal.aborted ? opts.signal.reason : err;
  }
}

/** A file of consecutive frames of a video (and its proxy), to be joined with the others by `joinParts`. */
export interface Piece {
  file: string;
  proxy?: string;
  frames: number;
}

/**
 * A held picture's unit: this many seconds of one picture, encoded once and repeated by the join. Every piece starts
 * with a key frame, so the unit's length is the key frame interval of a held stretch (x264's own is about 4 s at
 * 60 fps); a shorter unit costs less to encode and more to store.
 */
const HOLD_UNIT_SECONDS = 1;
/** Units a run of repeated frames must fill before it is held (below, a unit and a new piece cost more than they save). */
const HOLD_MIN_UNITS = 3;
/**
 * Frames of the shortest piece that is followed by another. x264 delays decoding by its B-frame reorder depth (two
 * frames here: timestamps start at -2 frames) only in a stream of at least three frames; a shorter piece starts at 0,
 * and the next piece's first decoding time would fall before its last one, which the join cannot mend.
 */
const MIN_PIECE_FRAMES = 3;

/**
 * Encodes frames 0..opts.frameCount-1 into pieces in `dir` (names starting with `name`), in order. Frames go to a live
 * piece as `encodeFrames` sends them. A run of at least HOLD_MIN_UNITS units' worth of repeated frames is held: the
 * live piece ends with the first few frames of the run (see `hold`), the picture is encoded once as a unit of about
 * HOLD_UNIT_SECONDS, and the rest of the run is that unit repeated; the next changed frame starts a new live piece.
 * x264 and VP9 then encode about a unit per held run instead of every frame of it, and the video stays
 * constant-frame-rate, every frame a sample. Resolves with the pieces once every ffmpeg has finished.
 */
export async function encodePieces(
  tools: Tools,
  opts: EncodeOptions,
  dir: string,
  name: string,
  produce: (sink: FrameSink) => Promise<void>,
): Promise<Piece[]> {
  const unit = Math.max(MIN_PIECE_FRAMES, Math.round(opts.fps * HOLD_UNIT_SECONDS));
  const holdMin = HOLD_MIN_UNITS * unit;
  const pieces: Piece[] = [];
  const running: Encoder[] = [];
  // Pieces that are finishing while capture goes on; the first failure stops the capture at its next frame.
  const done: Promise<void>[] = [];
  let failure: { err: unknown } | undefined;
  const settle = (work: Promise<void>) => done.push(work.catch((err: unknown) => void (failure ??= { err })));
  let files = 0;
  const piece = (frames: number): Piece & { opts: EncodeOptions } => {
    const n = files++;
    const file = path.join(dir, `${name}-${n}.${opts.format}`);
    const proxy = opts.proxy && path.join(dir, `${name}-${n}.proxy.mp4`);
    return {
      file,
      proxy,
      frames,
      opts: { ...opts, output: file, proxy: opts.proxy && { ...opts.proxy, output: proxy! }, frameCount: frames },
    };
  };
  const start = async (p: Piece & { opts: EncodeOptions }) => {
    const encoder = await startEncoder(tools, p.opts);
    running.push(encoder);
    return encoder;
  };
  // The live piece: its encoder and the frame it starts at.
  let live: { encoder: Encoder; from: number; piece: Piece } | undefined;
  // Every band's latest image, and the last frame where any band changed.
  let latest: Buffer[] = [];
  let lastAt = -1;

  /** Ends the live piece at frame `end` (inclusive), writing the held picture there when it was not written. */
  const close = (end: number) => {
    const { encoder, from, piece: p } = live!;
    const wrote = encoder.writeAll(end - from);
    settle(wrote.then(() => encoder.finish()));
    pieces.push({ file: p.file, proxy: p.proxy, frames: end + 1 - from });
    live = undefined;
  };
  /**
   * Holds the run of `length` repeated frames after `lastAt` when it is long enough: the live piece keeps the frames it
   * needs to reach MIN_PIECE_FRAMES, then `units` copies of a unit of `size` frames follow, the size stretched from
   * `unit` so that the remainder the live piece also keeps is below `units` frames. Answers whether it held.
   */
  const hold = async (length: number): Promise<boolean> => {
    const keep = Math.max(0, MIN_PIECE_FRAMES - (lastAt + 1 - live!.from));
    const held = length - keep;
    if (held < holdMin) return false;
    const units = Math.floor(held / unit);
    const size = Math.floor(held / units);
    close(lastAt + keep + (held - units * size));
    const u = piece(size);
    const encoder = await start(u);
    const picture = latest;
    settle(
      (async () => {
        await encoder.write(picture, 0);
        await encoder.writeAll(size - 1);
        await encoder.finish();
      })(),
    );
    for (let i = 0; i < units; i++) pieces.push({ file: u.file, proxy: u.proxy, frames: size });
    return true;
  };

  try {
    let index = 0;
    await produce(async (picture) => {
      const f = index;
      if (failure) throw failure.err;
      if (f >= opts.frameCount) throw new Error('more frames than the video has');
      if (f === 0 && !picture.every(Boolean)) throw new Error('the first frame has no picture');
      if (picture.some(Boolean)) {
        const run = f - lastAt - 1;
        // A live piece started after a hold must reach MIN_PIECE_FRAMES before the range ends.
        if (live && opts.frameCount - f >= MIN_PIECE_FRAMES) await hold(run);
        latest = latest.length ? latest.map((image, band) => picture[band] ?? image) : (picture as Buffer[]);
        if (live) await live.encoder.write(picture, f - live.from);
        else {
          // A new piece starts with every band.
          const p = piece(opts.frameCount - f);
          live = { encoder: await start(p), from: f, piece: p };
          await live.encoder.write(latest, 0);
        }
        lastAt = f;
      }
      if (f === opts.frameCount - 1) {
        const run = f - lastAt;
        if (!(await hold(run))) close(f);
      }
      index++;
    });
    if (index !== opts.frameCount) throw new Error(`${index} frames were produced for a video of ${opts.frameCount}`);
    await Promise.all(done);
    if (failure) throw failure.err;
    return pieces;
  } catch (err) {
    await Promise.all(running.map((e) => e.fail(err)));
    await Promise.all(done);
    throw opts.signal.aborted ? opts.signal.reason : err;
  }
}

/**
 * Joins the pieces `encodePieces` encoded (consecutive frames; a held unit may be listed several times) into one file
 * without re-encoding (ffmpeg's concat demuxer, stream copy): each part starts on a key frame and refers to no frame
 * of another (every encode starts with a closed GOP), so the joined video decodes to exactly the parts' frames. `frames[i]` is the length of
 * part i: its duration is written in the list, so the timestamps go on without a gap or an overlap. `output` is the
 * empty file `captureVideo` created for the render at its fresh temp path, and is overwritten.
 */
export async function joinParts(
  tools: Tools,
  parts: string[],
  frames: number[],
  fps: number,
  format: VideoFormat,
  output: string,
  opts: { signal: AbortSignal; timeoutMs: number },
): Promise<void> {
  // Beside the parts (a scratch folder), never beside the output (a board folder).
  const list = path.join(path.dirname(parts[0]), 'parts.ffconcat');
  const lines = ['ffconcat version 1.0'];
  parts.forEach((part, i) => lines.push(`file '${part.replace(/'/g, "'\\''")}'`, `duration ${frames[i] / fps}`));
  await fsp.writeFile(list, `${lines.join('\n')}\n`, { flag: 'wx' });
  try {
    const container = containerArgs(format, { muxer: true });
    await runFfmpeg(
      tools,
      [
        '-loglevel',
        'error',
        '-y',
        '-f',
        'concat',
        '-safe',
        '0',
        '-i',
        list,
        '-map',
        '0:v',
        '-c',
        'copy',
        ...container,
        ...BITEXACT,
        output,
      ],
      { signal: opts.signal, timeoutMs: opts.timeoutMs },
    );
  } finally {
    await fsp.rm(list, { force: true });
  }
}
