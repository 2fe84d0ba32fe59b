import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Static } from 'typebox';
import sharp from 'sharp';
import type { BoardOutputs, CommittedOutput, OutputElement, PendingOutput } from '../boards/outputs.js';
import type { BoardService } from '../boards/service.js';
import { TimedOut } from '../errors.js';
import { commitUnique, moveIntoUnique } from '../files/atomic.js';
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

/** The params of `html.render` and `html.render-frame` jobs: the whole request, the card's HTML included, so the job needs no board. */
export type HtmlRenderParams = VideoRequest;
export type HtmlFrameParams = FrameRequest;

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

/** The `html.render-frame` job's work: like `renderHtmlJob`, only the job and the render environment. */
export const renderHtmlFrameJob = (env: RenderEnv, job: JobContext<HtmlFrameParams>): Promise<RenderedFrame> =>
  renderFrameFile(env, job.params, (name) => job.output(job.params.boardId, name), {
    signal: job.signal,
    onProgress: job.progress,
  });

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
 * The `html.render` job's work. It uses only the job (params, progress, signal, outputs) and the render environment,
 * never the board: a worker on another machine can run it. Reports the share of frames captured as progress.
 */
export const renderHtmlJob = (env: RenderEnv, job: JobContext<HtmlRenderParams>): Promise<RenderedVideo> =>
  renderVideoFiles(env, job.params, (name) => job.output(job.params.boardId, name), {
    signal: job.signal,
    onProgress: job.progress,
  });

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
    return this.withOutputs(req.boardId, async (reserve) =>
      this.finishFrame(req, await renderFrameFile(this.env, req, reserve, { signal })),
    );
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

  /**
   * The frame job's outcome: the PNG is filed here, on the service (a unique name in the board folder, no element:
   * frames sample previews and would litter the board), since the runner's commit always adds an element.
   */
  async frameOutcome(req: HtmlFrameParams, rendered: RenderedFrame): Promise<JobOutcome> {
    const result = await this.finishFrame(req, rendered);
    return { output_url: result.url, result };
  }

  private async finishFrame(req: FrameRequest, rendered: RenderedFrame): Promise<FrameResult> {
    const { png } = rendered;
    const filename = await commitUnique(png.temp, path.dirname(png.temp), png.name);
    return {
      type: 'image',
      filename,
      url: this.media.urlFor(req.boardId, filename),
      blocked_requests: rendered.blocked,
    };
  }

  /** A video rendered in the request: the same files and answer as the `html.render` job. */
  async renderVideo(req: VideoRequest, signal?: AbortSignal): Promise<VideoResult> {
    this.check(req);
    return this.withOutputs(req.boardId, async (reserve) => {
      const rendered = await renderVideoFiles(this.env, req, reserve, { signal });
      return this.finish(req, rendered, await this.outputs.commit(rendered.video, videoElement(req, rendered)));
    });
  }

  /** The job's outcome: the video for the runner to commit, and its side files as data for `jobResult`. */
  outcome(req: HtmlRenderParams, rendered: RenderedVideo): JobOutcome {
    const { video, ...sides } = rendered;
    return { output: { file: video, element: videoElement(req, rendered), data: { sides } } };
  }

  /** The job's result once the runner committed the video: the same answer as `renderVideo`. */
  jobResult(req: HtmlRenderParams, data: Record<string, unknown>, committed: CommittedOutput): Promise<VideoResult> {
    return this.finish(req, data.sides as SideFiles, committed);
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
