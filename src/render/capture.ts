import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import type { Tools } from '../tools/locate.js';
import { withCardPages, type CardEnv, type CardPage, type CardSpec } from './page.js';
import {
  encodeFrames,
  encodePieces,
  joinParts,
  JPEG_QUALITY,
  type EncodeOptions,
  type FrameFormat,
  type FrameSink,
  type Piece,
} from './encode.js';

/**
 * The capture engine: frames of a page on the virtual clock (page.ts) into a video file, split into frame ranges and
 * horizontal bands captured side by side, encoded as they come (encode.ts). It knows no feature: HTML cards, mockups
 * and motion previews reach it through `renderPage` (render-page.ts).
 */

/**
 * Frames of the shortest range worth its own page: a range's page steps through every frame before its first (the
 * card's state there is exactly that of a single page), which costs about a clock step per frame.
 */
const MIN_RANGE_FRAMES = 8;

/**
 * Consecutive frame ranges [start, end) covering 0..frames-1: `wanted` of them, fewer when the ranges would be
 * shorter than MIN_RANGE_FRAMES, one when the video keeps alpha (the parts of a transparent file are not joined).
 */
export function frameRanges(frames: number, wanted: number, alpha = false): { start: number; end: number }[] {
  const n = alpha ? 1 : Math.max(1, Math.min(wanted, Math.floor(frames / MIN_RANGE_FRAMES)));
  return Array.from({ length: n }, (_, i) => ({
    start: Math.floor((i * frames) / n),
    end: Math.floor(((i + 1) * frames) / n),
  }));
}

/**
 * Captures frames start..end-1 of a card into `sink`, in order, from one page per band (one page for the whole
 * frame): each page first steps through every frame before `start` (so canvases, videos and timers are where a single
 * page would have them), then draws each frame; a band the compositor drew no differently from the frame before goes
 * to the sink as a repeat. `onFrame` sees every frame with its bands' pictures (a repeat with the previous one).
 */
async function captureRange(
  bands: CardPage[],
  range: { start: number; end: number },
  sink: FrameSink,
  onFrame: (index: number, picture: Buffer[]) => void,
  frames: FrameFormat = 'png',
): Promise<void> {
  const quality = frames === 'jpeg' ? JPEG_QUALITY : undefined;
  let latest: Buffer[] = [];
  for (let f = range.start; f < range.end; f++) {
    await Promise.all(bands.map((band) => band.seek(f)));
    const picture = await Promise.all(bands.map((band) => band.captureChanged(quality)));
    await sink(picture);
    latest = picture.map((image, i) => image ?? latest[i]);
    onFrame(f, latest);
  }
}

/** A frame whole from its bands' images (`captureVideo`'s `onFrame`), as a PNG or JPEG. */
export async function wholeFrame(picture: Buffer[]): Promise<Buffer> {
  if (picture.length === 1) return picture[0];
  const metas = await Promise.all(picture.map((image) => sharp(image).metadata()));
  let top = 0;
  const layers = picture.map((input, i) => {
    const layer = { input, top, left: 0 };
    top += metas[i].height ?? 0;
    return layer;
  });
  return sharp({ create: { width: metas[0].width ?? 1, height: top, channels: 3, background: '#000' } })
    .composite(layers)
    .png()
    .toBuffer();
}

/**
 * Rows added around the moving elements' boxes, for a shadow or outline just past them. Only the cost depends on it:
 * where a change reaches the still band anyway, that band's page sees the damage and captures it.
 */
const MOTION_MARGIN = 16;
/** Band boundaries fall on whole JPEG blocks (16 rows at 4:2:0). */
const BAND_ALIGN = 16;
/** Bands pay off only when the band that moves is at most this share of the frame. */
const MAX_MOVING_SHARE = 0.6;

/**
 * How a frame is cut into horizontal bands, each captured by its own page, when only some rows of it move: the rows
 * `motion` covers (see the virtual clock's `motion`; null when anything but declarative animations may change the
 * picture) with a margin go in one band, the rest in the other, so the still band is captured once and its frames
 * cost nothing. Band heights from the top, or undefined for one band.
 */
export function bandLayout(
  height: number,
  motion: { top: number; bottom: number } | null,
  pages: number,
): number[] | undefined {
  if (!motion || pages < 2 || !Number.isFinite(motion.top) || !Number.isFinite(motion.bottom)) return undefined;
  if (motion.bottom <= motion.top) return undefined;
  const top = Math.max(0, Math.floor((motion.top - MOTION_MARGIN) / BAND_ALIGN) * BAND_ALIGN);
  const bottom = Math.min(height, Math.ceil((motion.bottom + MOTION_MARGIN) / BAND_ALIGN) * BAND_ALIGN);
  // The moving rows at the top of the frame ([0, bottom) moves) or at its bottom ([top, height) moves).
  const split = bottom <= height - top ? bottom : top;
  const moving = Math.min(bottom, height - top);
  if (split <= 0 || split >= height || moving > MAX_MOVING_SHARE * height) return undefined;
  return [split, height - split];
}

/**
 * Captures frames 0..opts.frameCount-1 of a card into a video file. Long videos are split into frame ranges
 * (`opts.ranges`, default the pool's `pagesPerRender`), each captured by its own page and encoded into pieces by its
 * own ffmpeg at the same time (`encodePieces`: held stretches of one picture are encoded once), then the pieces are
 * joined without re-encoding (`joinParts`); the proxy likewise. When only some rows of the card move (`bandLayout`),
 * each range is captured by two pages instead, one per horizontal band, so the still band is captured once. A video
 * that keeps alpha is one range encoded straight into its file (`encodeFrames`). `onFrame` sees each frame (its
 * bands' images) once it went to the encoder: in order within a range, the ranges side by side. Answers the requests
 * the sandbox refused and the band heights used. For renders other features run inside their own jobs (their signal,
 * their progress); the caller owns the output file.
 */
export async function captureVideo(
  tools: Tools,
  env: CardEnv,
  spec: CardSpec,
  opts: EncodeOptions,
  onFrame?: (index: number, picture: Buffer[]) => void,
): Promise<{ blocked: string[]; bands: number[] }> {
  const wanted = frameRanges(opts.frameCount, opts.ranges ?? env.pool.pagesPerRender, opts.alpha).length;
  const seen = (f: number, picture: Buffer[]) => onFrame?.(f, picture);
  return withCardPages(env, spec, wanted, opts.signal, async (cards) => {
    let layout: number[] | undefined;
    if (opts.alpha) {
      const [range] = frameRanges(opts.frameCount, 1, true);
      await encodeFrames(tools, opts, (sink) => captureRange([cards[0]], range, sink, seen, opts.frames));
    } else {
      // Bands need begin-frame capture (its damage report is per page) and lossy frames (they are stacked in YUV).
      const bands =
        opts.frames === 'jpeg' && cards[0].beginFrame
          ? bandLayout(spec.height, await cards[0].motion(((opts.frameCount - 1) * 1000) / spec.fps), cards.length)
          : undefined;
      const perRange = bands?.length ?? 1;
      // The pool lends no more pages than it has slots: a range per page (or per set of band pages) it lent.
      const ranges = frameRanges(opts.frameCount, Math.floor(cards.length / perRange));
      const groups = ranges.map((_, r) => cards.slice(r * perRange, (r + 1) * perRange));
      if (bands) {
        const tops = bands.map((_, i) => bands.slice(0, i).reduce((a, b) => a + b, 0));
        await Promise.all(groups.flatMap((group) => group.map((card, i) => card.band(tops[i], bands[i]))));
      }
      await encodeRanges(tools, groups, ranges, { ...opts, bands }, seen);
      layout = bands;
    }
    return { blocked: [...new Set(cards.flatMap((c) => c.blocked))], bands: layout ?? [spec.height] };
  });
}

/** Encodes each range into pieces of its own (in a scratch folder), all at once, then joins the pieces. */
async function encodeRanges(
  tools: Tools,
  groups: CardPage[][],
  ranges: { start: number; end: number }[],
  opts: EncodeOptions,
  onFrame: (index: number, picture: Buffer[]) => void,
): Promise<void> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-html-parts-'));
  // One range failing stops the others (their ffmpeg is killed, so their capture stops at its next frame).
  const stop = new AbortController();
  const onAbort = () => stop.abort(opts.signal.reason);
  opts.signal.addEventListener('abort', onAbort, { once: true });
  try {
    // The output files exist from the start: whoever watches the output folder sees the render writing. The join
    // fills them.
    for (const file of [opts.output, ...(opts.proxy ? [opts.proxy.output] : [])])
      await fsp.writeFile(file, '', { flag: 'wx' });
    // Settled, not raced: the folder is removed only once every range's ffmpeg has exited.
    const encoded = await Promise.allSettled(
      ranges.map((range, i) =>
        encodePieces(
          tools,
          { ...opts, frameCount: range.end - range.start, signal: stop.signal },
          dir,
          `range${i}`,
          (sink) => captureRange(groups[i], range, sink, onFrame, opts.frames),
        ).catch((err: unknown) => {
          stop.abort(err);
          throw err;
        }),
      ),
    );
    const failed = encoded.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    const pieces = encoded.flatMap((r) => (r as PromiseFulfilledResult<Piece[]>).value);
    const lengths = pieces.map((p) => p.frames);
    const join = { signal: opts.signal, timeoutMs: opts.timeoutMs };
    await joinParts(
      tools,
      pieces.map((p) => p.file),
      lengths,
      opts.fps,
      opts.format,
      opts.output,
      join,
    );
    if (opts.proxy)
      await joinParts(
        tools,
        pieces.map((p) => p.proxy!),
        lengths,
        opts.fps,
        'mp4',
        opts.proxy.output,
        join,
      );
  } catch (err) {
    throw opts.signal.aborted ? opts.signal.reason : err;
  } finally {
    opts.signal.removeEventListener('abort', onAbort);
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

/** Frames of a video of `duration` seconds at `fps` (at least one). */
export const frameCount = (fps: number, duration: number): number => Math.max(1, Math.round(fps * duration));
