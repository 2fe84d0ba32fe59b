import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Static } from 'typebox';
import sharp from 'sharp';
import type { CommittedOutput, OutputElement, PendingOutput } from '../boards/outputs.js';
import type { BoardService } from '../boards/service.js';
import { moveIntoUnique } from '../files/atomic.js';
import { folderInside, type MediaRoot } from '../files/media-root.js';
import { filenameFromTitle } from '../files/names.js';
import type { JobContext, JobOutcome } from '../jobs/runner.js';
import { frameCount, wholeFrame } from '../render/capture.js';
import type { VideoFormat } from '../render/encode.js';
import { mediaRootFiles, type CardSpec } from '../render/page.js';
import { renderPage, type ClockPage, type PageEnv } from '../render/render-page.js';
import { loadHtmlConfig } from './config.js';
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
  interface JobResults {
    'html.render': VideoResult;
    'html.render-frame': Static<typeof FrameResponse>;
  }
}

/** Folder under the media root for the proxies and thumbnails of renders: `media/html-renders/<board_id>/`. */
const SIDE_FILES = 'html-renders';

/** How a card is drawn: the page's environment (the card reads the board's media) and the render time limit. */
interface CardDraw {
  env: PageEnv;
  timeoutMs: number;
}

/** A card on the virtual clock under the render time limit (`renderPage`). */
const drawCard = <T>(draw: CardDraw, signal: AbortSignal, fn: (page: ClockPage) => Promise<T>): Promise<T> =>
  renderPage(draw.env, { signal, timeoutMs: draw.timeoutMs, what: 'render' }, fn);

/**
 * A job's card drawing: the browsers and card media of wherever it runs, and the settings it was queued (or run now)
 * with.
 */
const jobDraw = (job: JobContext<JobRenderSettings>): CardDraw => ({
  env: {
    tools: job.env.tools,
    pool: job.env.browsers,
    media: { files: (url, signal) => job.env.media(url, signal), serviceOrigins: job.params.serviceOrigins ?? [] },
  },
  timeoutMs: job.params.timeoutMs ?? loadHtmlConfig({}).htmlRenderTimeoutMs,
});

/**
 * The `html.render-frame` job (queued or run in the request): one frame as a PNG with a unique name in the board
 * folder and no element (frames sample previews and would litter the board). Progress is the share of the frames up to
 * it the page has stepped through.
 */
export async function renderHtmlFrameJob(job: JobContext<HtmlFrameParams>): Promise<JobOutcome> {
  const out = await job.output(job.params.boardId, filenameFromTitle(job.params.title, 'HTML frame', 'png'));
  const { png, blocked } = await drawCard(jobDraw(job), job.signal, (page) => page.png(job.params, job.progress));
  await fsp.writeFile(out.temp, png, { flag: 'wx' });
  return { output: { file: out, element: false, data: { type: 'image', blocked_requests: blocked } } };
}

/**
 * Renders a card to a video at `output` (and its proxy at `proxyOutput`) under the render time limit; the caller owns
 * both paths (and removes them on failure). `onProgress` gets the share of frames done. Frames travel as JPEG (the
 * video is lossy anyway); answers the middle frame's JPEG, for a thumbnail or poster.
 */
async function renderToFile(
  draw: CardDraw,
  spec: CardSpec & { duration: number; format: VideoFormat },
  output: string,
  opts: { signal: AbortSignal; proxyOutput?: string; onProgress?: (fraction: number) => void },
): Promise<{ frames: number; blocked: string[]; middleFrame: Buffer }> {
  const frames = frameCount(spec.fps, spec.duration);
  const thumbAt = Math.floor(frames / 2);
  let middleFrame: Buffer[] | undefined;
  let done = 0;
  const { blocked } = await drawCard(draw, opts.signal, (page) =>
    page.video(
      spec,
      {
        fps: spec.fps,
        format: spec.format,
        output,
        proxy: opts.proxyOutput ? { output: opts.proxyOutput, height: RENDER_LIMITS.proxyHeight } : undefined,
        frameCount: frames,
        frames: 'jpeg',
      },
      (f, picture) => {
        if (f === thumbAt) middleFrame = picture;
        opts.onProgress?.(++done / frames);
      },
    ),
  );
  // The capture hands every frame to onFrame before it resolves, so the middle one was seen.
  return { frames, blocked, middleFrame: await wholeFrame(middleFrame!) };
}

/** What a render leaves besides its video, filed after the video is committed. */
interface SideFiles {
  proxy?: PendingOutput;
  thumbnail: PendingOutput;
  frames: number;
  blocked: string[];
}

/**
 * The `html.render` job (queued or run in the request). It uses only the job (params, progress, signal, outputs,
 * env), never the board: a render worker on another machine runs it as well. Reports the share of frames captured as
 * progress. The video goes to the board folder (named from the title) with a proxy for taller videos and a thumbnail
 * of the middle frame, handed back as side files, which `HtmlRenderer.jobResult` files once the video is committed.
 */
export async function renderHtmlJob(job: JobContext<HtmlRenderParams>): Promise<JobOutcome> {
  const req = job.params;
  const reserve = (name: string) => job.output(req.boardId, name);
  const video = await reserve(filenameFromTitle(req.title, 'HTML render', req.format));
  const proxy = req.height > RENDER_LIMITS.proxyHeight ? await reserve('proxy.mp4') : undefined;
  const thumbnail = await reserve('thumbnail.jpg');
  const { frames, blocked, middleFrame } = await renderToFile(jobDraw(job), req, video.temp, {
    signal: job.signal,
    onProgress: job.progress,
    proxyOutput: proxy?.temp,
  });
  const size = RENDER_LIMITS.thumbnailSize;
  const jpeg = await sharp(middleFrame)
    .resize(size, size, { fit: 'inside', withoutEnlargement: true })
    .jpeg({ quality: 82 })
    .toBuffer();
  await fsp.writeFile(thumbnail.temp, jpeg, { flag: 'wx' });
  return {
    output: {
      file: video,
      element: videoElement(req, frames),
      data: { frames, blocked },
      sides: { thumbnail, ...(proxy ? { proxy } : {}) },
    },
  };
}

/**
 * The HTML feature's renders outside the job kinds: a frame's PNG written nowhere (the agents' card previews) and a
 * card video outside any board (card videos of a share, `CardVideos`), both on this service's browsers and media; and
 * `jobResult`, which finishes an `html.render` once the runner committed its video.
 */
export class HtmlRenderer {
  constructor(
    private readonly tools: PageEnv['tools'],
    private readonly pool: PageEnv['pool'],
    private readonly media: MediaRoot,
    private readonly boards: BoardService,
    /** Origins of this service whose absolute /media URLs a card may use (asked per render: the port is known late). */
    private readonly serviceOrigins: () => string[],
    /** Time limit of one render (HTML_RENDER_TIMEOUT_SECONDS). */
    private readonly timeoutMs: number,
  ) {}

  private draw(): CardDraw {
    return {
      env: {
        tools: this.tools,
        pool: this.pool,
        media: { files: mediaRootFiles(this.media), serviceOrigins: this.serviceOrigins() },
      },
      timeoutMs: this.timeoutMs,
    };
  }

  /** One frame as PNG bytes, written nowhere. */
  capturePng(req: CardSpec & { frame: number }, signal: AbortSignal): Promise<{ png: Buffer; blocked: string[] }> {
    return drawCard(this.draw(), signal, (page) => page.png(req));
  }

  /** A video file outside any board (card videos of a share); see `renderToFile`. */
  renderToFile(
    spec: CardSpec & { duration: number; format: VideoFormat },
    output: string,
    signal: AbortSignal,
  ): Promise<{ frames: number; blocked: string[]; middleFrame: Buffer }> {
    return renderToFile(this.draw(), spec, output, { signal });
  }

  /** The checks a render makes before any work: its board exists. */
  check(req: { boardId: string }): void {
    this.boards.requireBoard(req.boardId);
  }

  /**
   * The `html.render` job's result once the runner committed the video: its proxy and thumbnail move to
   * `media/html-renders/<board_id>/`, named after the video's final name, and the proxy's URL goes into the element's
   * data.
   */
  async jobResult(
    req: HtmlRenderParams,
    committed: CommittedOutput,
    data: Record<string, unknown>,
    sides: Record<string, PendingOutput>,
  ): Promise<VideoResult> {
    const { frames, blocked } = data as { frames: number; blocked: string[] };
    const rendered: SideFiles = { proxy: sides.proxy, thumbnail: sides.thumbnail, frames, blocked };
    const sideDir = await folderInside(this.media.root, [SIDE_FILES, req.boardId]);
    const stem = path.parse(committed.filename).name;
    const sideUrl = async (out: PendingOutput, name: string) =>
      this.media.rootUrl(path.join(SIDE_FILES, req.boardId, await moveIntoUnique(out.temp, sideDir, name)));
    const proxyUrl = rendered.proxy ? await sideUrl(rendered.proxy, `${stem}.proxy.mp4`) : undefined;
    const thumbnailUrl = await sideUrl(rendered.thumbnail, `${stem}.jpg`);
    const element = proxyUrl
      ? this.boards.mutateElementData(committed.element.id, (d) => ({ ...d, proxy_url: proxyUrl }))
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

const videoElement = (req: VideoRequest, frames: number): OutputElement => ({
  type: 'video',
  data: {
    source: 'html-render',
    render: {
      width: req.width,
      height: req.height,
      fps: req.fps,
      duration: req.duration,
      format: req.format,
      frames,
    },
  },
});
