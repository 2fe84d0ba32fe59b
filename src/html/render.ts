import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Static } from 'typebox';
import sharp from 'sharp';
import type { BoardOutputs, CommittedOutput, OutputElement, PendingOutput } from '../boards/outputs.js';
import type { BoardService } from '../boards/service.js';
import { TimedOut } from '../errors.js';
import { moveIntoUnique } from '../files/atomic.js';
import { folderInside, type MediaRoot } from '../files/media-root.js';
import { filenameFromTitle } from '../files/names.js';
import type { JobContext, JobOutcome } from '../jobs/runner.js';
import { timeLimit } from '../jobs/time-limit.js';
import type { BrowserPool } from '../tools/browser.js';
import type { Tools } from '../tools/locate.js';
import {
  withCardPage,
  withCardPages,
  type CardEnv,
  type CardPage,
  type CardSpec,
  type MediaFiles,
} from './card-page.js';
import { loadHtmlConfig } from './config.js';
import {
  encodeFrames,
  encodePieces,
  joinParts,
  JPEG_QUALITY,
  type EncodeOptions,
  type FrameFormat,
  type FrameSink,
  type Piece,
  type VideoFormat,
} from './encode.js';
import { RENDER_LIMITS } from './limits.js';
import type { FrameResponse, VideoResponse } from './schemas.js';

export interface VideoRequest extends CardSpec {
  duration: number;
  format: VideoFormat;
  title?: string;
  boardId: string;
}

export interface FrameRequest extends CardSpec {
  frame: number;
  title?: string;
  boardId: string;
}

export type VideoResult = Static<typeof VideoResponse>;
export type FrameResult = Static<typeof FrameResponse>;

/**
 * What the service decided for a queued render, carried with it so it holds wherever the render runs: the origins
 * of its absolute /media URLs (the port is known once it listens) and the render time limit. Records queued before
 * these were kept lack them (no origins, the default limit).
 */
export interface JobRenderSettings {
  serviceOrigins?: string[];
  timeoutMs?: number;
}

/** The params of `html.render` and `html.render-frame` jobs: the whole request, the card's HTML included, so the job needs no board. */
export type HtmlRenderParams = VideoRequest & JobRenderSettings;
export type HtmlFrameParams = FrameRequest & JobRenderSettings;

export const HTML_RENDER_JOB = 'html.render';
export const HTML_FRAME_JOB = 'html.render-frame';

declare module '../jobs/kinds.js' {
  interface JobKinds {
    'html.render': HtmlRenderParams;
    'html.render-frame': HtmlFrameParams;
  }
}

/** Folder under the media root for the proxies and thumbnails of renders: `media/html-renders/<board_id>/`. */
const SIDE_FILES = 'html-renders';

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

/**
 * What a render needs, and nothing of the board (no database, BoardService or media root): the tools, the browser
 * pool and a way to read the card's media. Work built on it alone (`renderHtmlJob`) can run on another machine.
 */
export interface RenderEnv {
  tools: Tools;
  pool: BrowserPool;
  media: MediaFiles;
  /** Origins of this service whose absolute /media URLs a card may use (asked per render: the port is known late). */
  serviceOrigins: () => string[];
  /** Time limit of one render (HTML_RENDER_TIMEOUT_SECONDS). */
  timeoutMs: number;
}

const cardEnv = (env: RenderEnv): CardEnv => ({
  pool: env.pool,
  media: env.media,
  serviceOrigins: env.serviceOrigins(),
});

/**
 * Runs `fn` under the render time limit over the caller's signal (the client going away, a job's cancel); what stopped
 * it is thrown as TimedOut `render_timeout` or Cancelled `aborted` (or the job's own reason).
 */
async function limited<T>(
  env: RenderEnv,
  signal: AbortSignal | undefined,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const limit = timeLimit(
    signal,
    env.timeoutMs,
    () =>
      new TimedOut(`The render took longer than its limit of ${Math.round(env.timeoutMs / 1000)} s`, 'render_timeout'),
    'The request was cancelled',
  );
  try {
    return await fn(limit.signal);
  } catch (err) {
    throw limit.stopped() ?? err;
  }
}

/**
 * One frame as PNG bytes, written nowhere (the agents' card previews keep them outside the board folder).
 * `onProgress` gets the share of the frames up to `frame` the page has stepped through.
 */
export function capturePng(
  env: RenderEnv,
  req: CardSpec & { frame: number },
  signal?: AbortSignal,
  onProgress?: (fraction: number) => void,
): Promise<{ png: Buffer; blocked: string[] }> {
  return limited(env, signal, (s) =>
    withCardPage(cardEnv(env), req, s, async (card) => {
      await card.seek(req.frame, onProgress && ((f) => onProgress((f + 1) / (req.frame + 1))));
      return { png: await card.capture(), blocked: card.blocked };
    }),
  );
}

/** A rendered frame's PNG, still pending in the board folder. */
export interface RenderedFrame {
  png: PendingOutput;
  blocked: string[];
}

/** Renders one frame into a PNG file `reserve` hands out in the board folder, and leaves it pending. */
export async function renderFrameFile(
  env: RenderEnv,
  req: FrameRequest,
  reserve: (filename: string) => Promise<PendingOutput>,
  opts: { signal?: AbortSignal; onProgress?: (fraction: number) => void } = {},
): Promise<RenderedFrame> {
  const out = await reserve(filenameFromTitle(req.title, 'HTML frame', 'png'));
  const { png, blocked } = await capturePng(env, req, opts.signal, opts.onProgress);
  await fsp.writeFile(out.temp, png, { flag: 'wx' });
  return { png: out, blocked };
}

/** A job's render environment: its own (the browsers and card media of wherever it runs) and its settings. */
const jobRenderEnv = (job: JobContext<JobRenderSettings>): RenderEnv => ({
  tools: job.env.tools,
  pool: job.env.browsers,
  media: (url, signal) => job.env.media(url, signal),
  serviceOrigins: () => job.params.serviceOrigins ?? [],
  timeoutMs: job.params.timeoutMs ?? loadHtmlConfig({}).htmlRenderTimeoutMs,
});

/**
 * The `html.render-frame` job: like `renderHtmlJob`, only the job. The PNG gets a unique name in the board folder and
 * no element (frames sample previews and would litter the board); the result is the synchronous answer.
 */
export async function renderHtmlFrameJob(job: JobContext<HtmlFrameParams>): Promise<JobOutcome> {
  const { png, blocked } = await renderFrameFile(
    jobRenderEnv(job),
    job.params,
    (name) => job.output(job.params.boardId, name),
    { signal: job.signal, onProgress: job.progress },
  );
  return { output: { file: png, element: false, data: { type: 'image', blocked_requests: blocked } } };
}

/**
 * Renders a card to a video at `output` (and its proxy at `proxyOutput`) under the render time limit; the caller owns
 * both paths (and removes them on failure). `onProgress` gets the share of frames done. Frames travel as JPEG (the
 * video is lossy anyway); answers the middle frame's JPEG, for a thumbnail or poster.
 */
export async function renderToFile(
  env: RenderEnv,
  spec: CardSpec & { duration: number; format: VideoFormat },
  output: string,
  opts: { signal?: AbortSignal; proxyOutput?: string; onProgress?: (fraction: number) => void } = {},
): Promise<{ frames: number; blocked: string[]; middleFrame: Buffer }> {
  const frames = frameCount(spec.fps, spec.duration);
  const thumbAt = Math.floor(frames / 2);
  let middleFrame: Buffer[] | undefined;
  let done = 0;
  const { blocked } = await limited(env, opts.signal, (s) =>
    captureVideo(
      env.tools,
      cardEnv(env),
      spec,
      {
        fps: spec.fps,
        format: spec.format,
        output,
        proxy: opts.proxyOutput ? { output: opts.proxyOutput, height: RENDER_LIMITS.proxyHeight } : undefined,
        frameCount: frames,
        signal: s,
        timeoutMs: env.timeoutMs,
        frames: 'jpeg',
      },
      (f, picture) => {
        if (f === thumbAt) middleFrame = picture;
        opts.onProgress?.(++done / frames);
      },
    ),
  );
  // captureVideo hands every frame to onFrame before it resolves, so the middle one was seen.
  return { frames, blocked, middleFrame: await wholeFrame(middleFrame!) };
}

/** A rendered video's files, still pending in the board folder: the video, its proxy (taller videos), its thumbnail. */
export interface RenderedVideo {
  video: PendingOutput;
  proxy?: PendingOutput;
  thumbnail: PendingOutput;
  frames: number;
  blocked: string[];
}

/** What a render leaves besides its video, filed after the video is committed. */
type SideFiles = Omit<RenderedVideo, 'video'>;

/**
 * Renders a card video into files `reserve` hands out in the board folder (the job runner's `job.output`, or
 * `BoardOutputs.reserve` in the request) and leaves them pending: the caller commits them or discards them.
 */
export async function renderVideoFiles(
  env: RenderEnv,
  req: VideoRequest,
  reserve: (filename: string) => Promise<PendingOutput>,
  opts: { signal?: AbortSignal; onProgress?: (fraction: number) => void } = {},
): Promise<RenderedVideo> {
  const video = await reserve(filenameFromTitle(req.title, 'HTML render', req.format));
  const proxy = req.height > RENDER_LIMITS.proxyHeight ? await reserve('proxy.mp4') : undefined;
  const thumbnail = await reserve('thumbnail.jpg');
  const { frames, blocked, middleFrame } = await renderToFile(env, req, video.temp, {
    ...opts,
    proxyOutput: proxy?.temp,
  });
  const size = RENDER_LIMITS.thumbnailSize;
  const jpeg = await sharp(middleFrame)
    .resize(size, size, { fit: 'inside', withoutEnlargement: true })
    .jpeg({ quality: 82 })
    .toBuffer();
  await fsp.writeFile(thumbnail.temp, jpeg, { flag: 'wx' });
  return { video, proxy, thumbnail, frames, blocked };
}

/**
 * The `html.render` job. It uses only the job (params, progress, signal, outputs, env), never the board: a render
 * worker on another machine runs it as well. Reports the share of frames captured as progress. The video is handed
 * back with its proxy and thumbnail as side files, which `HtmlRenderer.jobResult` files once the video is committed.
 */
export async function renderHtmlJob(job: JobContext<HtmlRenderParams>): Promise<JobOutcome> {
  const rendered = await renderVideoFiles(
    jobRenderEnv(job),
    job.params,
    (name) => job.output(job.params.boardId, name),
    {
      signal: job.signal,
      onProgress: job.progress,
    },
  );
  const { video, proxy, thumbnail, frames, blocked } = rendered;
  return {
    output: {
      file: video,
      element: videoElement(job.params, rendered),
      data: { frames, blocked },
      sides: { thumbnail, ...(proxy ? { proxy } : {}) },
    },
  };
}

/**
 * Renders HTML cards for this service: a video of every frame (added to its board), or one frame as a PNG. Renders
 * run under the time limit and stop when the caller's signal aborts (the client went away); partial files are removed.
 * A video asked as a job runs `renderHtmlJob`; `outcome` finishes it here, once the runner committed the video.
 */
export class HtmlRenderer {
  constructor(
    readonly env: RenderEnv,
    private readonly media: MediaRoot,
    private readonly boards: BoardService,
    private readonly outputs: BoardOutputs,
  ) {}

  capturePng(req: CardSpec & { frame: number }, signal?: AbortSignal): Promise<{ png: Buffer; blocked: string[] }> {
    return capturePng(this.env, req, signal);
  }

  /** A video file outside any board (card videos of a share); see `renderToFile`. */
  renderToFile(
    spec: CardSpec & { duration: number; format: VideoFormat },
    output: string,
    signal?: AbortSignal,
  ): Promise<{ frames: number; blocked: string[]; middleFrame: Buffer }> {
    return renderToFile(this.env, spec, output, { signal });
  }

  /** The checks a render makes before any work: its board exists. */
  check(req: { boardId: string }): void {
    this.boards.requireBoard(req.boardId);
  }

  /** A frame rendered in the request: the same file and answer as the `html.render-frame` job. */
  async renderFrame(req: FrameRequest, signal?: AbortSignal): Promise<FrameResult> {
    this.check(req);
    return this.withOutputs(req.boardId, async (reserve) => {
      const { png, blocked } = await renderFrameFile(this.env, req, reserve, { signal });
      return { type: 'image' as const, ...(await this.outputs.file(png)), blocked_requests: blocked };
    });
  }

  /**
   * Runs `fn` with `reserve`, which hands out pending outputs in the board folder as the job runner's `job.output`
   * does; whatever was not committed or filed by the end (a failure, the client gone) is removed.
   */
  private async withOutputs<T>(
    boardId: string,
    fn: (reserve: (filename: string) => Promise<PendingOutput>) => Promise<T>,
  ): Promise<T> {
    const reserved: PendingOutput[] = [];
    try {
      return await fn(async (name) => {
        const out = await this.outputs.reserve(boardId, name);
        reserved.push(out);
        return out;
      });
    } finally {
      await Promise.all(reserved.map((out) => this.outputs.discard(out)));
    }
  }

  /** A video rendered in the request: the same files and answer as the `html.render` job. */
  async renderVideo(req: VideoRequest, signal?: AbortSignal): Promise<VideoResult> {
    this.check(req);
    return this.withOutputs(req.boardId, async (reserve) => {
      const rendered = await renderVideoFiles(this.env, req, reserve, { signal });
      return this.finish(req, rendered, await this.outputs.commit(rendered.video, videoElement(req, rendered)));
    });
  }

  /** The `html.render` job's result once the runner committed the video: the same answer as `renderVideo`. */
  jobResult(
    req: HtmlRenderParams,
    committed: CommittedOutput,
    data: Record<string, unknown>,
    sides: Record<string, PendingOutput>,
  ): Promise<VideoResult> {
    const { frames, blocked } = data as { frames: number; blocked: string[] };
    return this.finish(req, { proxy: sides.proxy, thumbnail: sides.thumbnail, frames, blocked }, committed);
  }

  /**
   * After the video was committed: its proxy and thumbnail move to `media/html-renders/<board_id>/`, named after the
   * video's final name, and the proxy's URL goes into the element's data.
   */
  private async finish(req: VideoRequest, rendered: SideFiles, committed: CommittedOutput): Promise<VideoResult> {
    const sideDir = await folderInside(this.media.root, [SIDE_FILES, req.boardId]);
    const stem = path.parse(committed.filename).name;
    const sideUrl = async (out: PendingOutput, name: string) =>
      this.media.rootUrl(path.join(SIDE_FILES, req.boardId, await moveIntoUnique(out.temp, sideDir, name)));
    const proxyUrl = rendered.proxy ? await sideUrl(rendered.proxy, `${stem}.proxy.mp4`) : undefined;
    const thumbnailUrl = await sideUrl(rendered.thumbnail, `${stem}.jpg`);
    const element = proxyUrl
      ? this.boards.mutateElementData(committed.element.id, (data) => ({ ...data, proxy_url: proxyUrl }))
      : committed.element;
    return {
      type: 'video',
      filename: committed.filename,
      url: committed.url,
      proxy_url: proxyUrl,
      thumbnail_url: thumbnailUrl,
      element,
      frames: rendered.frames,
      blocked_requests: rendered.blocked,
    };
  }
}

const videoElement = (req: VideoRequest, rendered: RenderedVideo): OutputElement => ({
  type: 'video',
  data: {
    source: 'html-render',
    render: {
      width: req.width,
      height: req.height,
      fps: req.fps,
      duration: req.duration,
      format: req.format,
      frames: rendered.frames,
    },
  },
});
