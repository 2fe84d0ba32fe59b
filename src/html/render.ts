import fsp from 'node:fs/promises';
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
import { encodeFrames, type EncodeOptions, type VideoFormat } from './encode.js';
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
 * Copies of the card that capture a video together: each steps through every frame (so its state is exactly that of
 * a single page) and captures every second one, which keeps two renderer processes busy.
 */
const PAGES_PER_VIDEO = 2;

/**
 * Captures frames 0..count-1 with the cards taking turns (card k captures frames k, k+n, ...), and hands them to
 * `deliver` strictly in order; a card waits with its frame until the one before was delivered, so at most one frame
 * per card is held in memory.
 */
async function captureInOrder(
  cards: CardPage[],
  count: number,
  deliver: (index: number, png: Buffer) => Promise<void>,
): Promise<void> {
  const delivered: Promise<void>[] = [];
  const markDelivered: (() => void)[] = [];
  for (let f = 0; f < count; f++) delivered.push(new Promise<void>((resolve) => markDelivered.push(resolve)));
  const failed = new AbortController();
  const stopped = new Promise<never>((_, reject) =>
    failed.signal.addEventListener('abort', () => reject(failed.signal.reason), { once: true }),
  );
  stopped.catch(() => undefined);
  await Promise.all(
    cards.map(async (card, k) => {
      try {
        for (let f = k; f < count; f += cards.length) {
          await card.seek(f);
          const png = await card.capture();
          if (f > 0) await Promise.race([delivered[f - 1], stopped]);
          await deliver(f, png);
          markDelivered[f]();
        }
      } catch (err) {
        failed.abort(err);
        throw err;
      }
    }),
  );
}

/**
 * Captures frames 0..opts.frameCount-1 of a card into a video file (see encodeFrames), with the card's copies taking
 * turns; `onFrame` sees each frame once it went to the encoder. Answers the requests the sandbox refused. For renders
 * other features run inside their own jobs (their signal, their progress); the caller owns the output file.
 */
export async function captureVideo(
  tools: Tools,
  env: CardEnv,
  spec: CardSpec,
  opts: EncodeOptions,
  onFrame?: (index: number, png: Buffer) => void,
): Promise<string[]> {
  const frames = opts.frameCount;
  return withCardPages(env, spec, Math.min(PAGES_PER_VIDEO, frames), opts.signal, async (cards) => {
    await encodeFrames(tools, opts, (write) =>
      captureInOrder(cards, frames, async (f, png) => {
        await write(png);
        onFrame?.(f, png);
      }),
    );
    return [...new Set(cards.flatMap((c) => c.blocked))];
  });
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
 * both paths (and removes them on failure). `onProgress` gets the share of frames done. Answers the middle frame as a
 * PNG, for a thumbnail or poster.
 */
export async function renderToFile(
  env: RenderEnv,
  spec: CardSpec & { duration: number; format: VideoFormat },
  output: string,
  opts: { signal?: AbortSignal; proxyOutput?: string; onProgress?: (fraction: number) => void } = {},
): Promise<{ frames: number; blocked: string[]; middleFrame: Buffer }> {
  const frames = frameCount(spec.fps, spec.duration);
  const thumbAt = Math.floor(frames / 2);
  let middleFrame: Buffer | undefined;
  const blocked = await limited(env, opts.signal, (s) =>
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
      },
      (f, png) => {
        if (f === thumbAt) middleFrame = png;
        opts.onProgress?.((f + 1) / frames);
      },
    ),
  );
  // captureInOrder delivers every frame before encodeFrames resolves, so the middle one was seen.
  return { frames, blocked, middleFrame: middleFrame! };
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
