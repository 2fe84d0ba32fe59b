import fsp from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import type { AppContext } from '../context.js';
import type { Element } from '../boards/types.js';
import { commitUnique, tempPathIn, writeNewFile } from '../files/atomic.js';
import { folderInside } from '../files/media-root.js';
import { filenameFromTitle } from '../files/names.js';
import { ApiError } from '../http/errors.js';
import { browserPool } from '../tools/browser.js';
import type { Tools } from '../tools/locate.js';
import { withCardPage, withCardPages, type CardEnv, type CardPage, type CardSpec } from './card-page.js';
import { encodeFrames, type EncodeOptions, type VideoFormat } from './encode.js';
import { RENDER_LIMITS } from './limits.js';

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

export interface VideoResult {
  type: 'video';
  filename: string;
  url: string;
  proxy_url?: string;
  thumbnail_url?: string;
  element: Element;
  frames: number;
  blocked_requests: string[];
}

export interface FrameResult {
  type: 'image';
  filename: string;
  url: string;
  blocked_requests: string[];
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
 * Renders HTML cards: a video of every frame, or one frame as a PNG. Each render runs under its own time limit and
 * stops when the caller's signal aborts (the client went away); partial files are removed.
 */
export class HtmlRenderer {
  private readonly timeoutMs: number;

  constructor(
    private readonly ctx: AppContext,
    private readonly serviceOrigins: () => string[],
  ) {
    this.timeoutMs = ctx.config.htmlRenderTimeoutMs;
  }

  private env(): CardEnv {
    return { pool: browserPool(this.ctx), media: this.ctx.media, serviceOrigins: this.serviceOrigins() };
  }

  /** Runs `fn` with a signal that aborts on the caller's signal or after the render time limit (504). */
  private async limited<T>(signal: AbortSignal | undefined, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const limit = new AbortController();
    const timer = setTimeout(
      () =>
        limit.abort(
          new ApiError(
            504,
            'render_timeout',
            `The render took longer than its limit of ${Math.round(this.timeoutMs / 1000)} s`,
          ),
        ),
      this.timeoutMs,
    );
    const onAbort = () => limit.abort(new ApiError(499, 'aborted', 'The request was cancelled'));
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await fn(limit.signal);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** One frame as PNG bytes, written nowhere (the agents' card previews keep them outside the board folder). */
  capturePng(req: CardSpec & { frame: number }, signal?: AbortSignal): Promise<{ png: Buffer; blocked: string[] }> {
    return this.limited(signal, (s) =>
      withCardPage(this.env(), req, s, async (card) => {
        await card.seek(req.frame);
        return { png: await card.capture(), blocked: card.blocked };
      }),
    );
  }

  async renderFrame(req: FrameRequest, signal?: AbortSignal): Promise<FrameResult> {
    this.ctx.boards.requireBoard(req.boardId);
    const { png, blocked } = await this.capturePng(req, signal);
    const dir = await this.ctx.media.boardDir(req.boardId);
    const filename = await writeNewFile(dir, filenameFromTitle(req.title, 'HTML frame', 'png'), png);
    return { type: 'image', filename, url: this.ctx.media.urlFor(req.boardId, filename), blocked_requests: blocked };
  }

  async renderVideo(req: VideoRequest, signal?: AbortSignal): Promise<VideoResult> {
    this.ctx.boards.requireBoard(req.boardId);
    const dir = await this.ctx.media.boardDir(req.boardId);
    const filename = filenameFromTitle(req.title, 'HTML render', req.format);
    const sideDir = await folderInside(this.ctx.media.root, [SIDE_FILES, req.boardId]);
    const temp = tempPathIn(dir, filename);
    const wantProxy = req.height > RENDER_LIMITS.proxyHeight;
    const proxyTemp = wantProxy ? tempPathIn(sideDir, 'proxy.mp4') : undefined;
    try {
      const { frames, blocked, middleFrame } = await this.renderToFile(req, temp, signal, proxyTemp);
      const stored = await commitUnique(temp, dir, filename);
      const stem = path.parse(stored).name;
      const url = this.ctx.media.urlFor(req.boardId, stored);
      const proxyUrl = proxyTemp
        ? this.ctx.media.rootUrl(
            path.join(SIDE_FILES, req.boardId, await commitUnique(proxyTemp, sideDir, `${stem}.proxy.mp4`)),
          )
        : undefined;
      const thumbnailUrl = this.ctx.media.rootUrl(
        path.join(SIDE_FILES, req.boardId, await this.writeThumbnail(middleFrame, sideDir, `${stem}.jpg`)),
      );
      const element = await this.ctx.boards.addElement(req.boardId, {
        type: 'video',
        url,
        name: stored,
        data: {
          source: 'html-render',
          proxy_url: proxyUrl,
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
      return {
        type: 'video',
        filename: stored,
        url,
        proxy_url: proxyUrl,
        thumbnail_url: thumbnailUrl,
        element,
        frames,
        blocked_requests: blocked,
      };
    } finally {
      await fsp.rm(temp, { force: true });
      if (proxyTemp) await fsp.rm(proxyTemp, { force: true });
    }
  }

  /**
   * Renders a card to a video at `output` (and its proxy at `proxyOutput`) without touching the board; the caller
   * owns both paths (and removes them on failure). Used by renderVideo and by features that keep their own renders
   * (card videos of a share). Answers the middle frame as a PNG, for a thumbnail or poster.
   */
  async renderToFile(
    spec: CardSpec & { duration: number; format: VideoFormat },
    output: string,
    signal?: AbortSignal,
    proxyOutput?: string,
  ): Promise<{ frames: number; blocked: string[]; middleFrame: Buffer }> {
    const frames = frameCount(spec.fps, spec.duration);
    const thumbAt = Math.floor(frames / 2);
    let middleFrame: Buffer | undefined;
    let blocked: string[] = [];
    await this.limited(signal, async (s) => {
      blocked = await captureVideo(
        this.ctx.tools,
        this.env(),
        spec,
        {
          fps: spec.fps,
          format: spec.format,
          output,
          proxy: proxyOutput ? { output: proxyOutput, height: RENDER_LIMITS.proxyHeight } : undefined,
          frameCount: frames,
          signal: s,
          timeoutMs: this.timeoutMs,
        },
        (f, png) => {
          if (f === thumbAt) middleFrame = png;
        },
      );
    });
    // captureInOrder delivers every frame before encodeFrames resolves, so the middle one was seen.
    return { frames, blocked, middleFrame: middleFrame! };
  }

  private async writeThumbnail(png: Buffer, dir: string, filename: string): Promise<string> {
    const size = RENDER_LIMITS.thumbnailSize;
    const jpeg = await sharp(png)
      .resize(size, size, { fit: 'inside', withoutEnlargement: true })
      .jpeg({ quality: 82 })
      .toBuffer();
    return writeNewFile(dir, filename, jpeg);
  }
}

const renderers = new WeakMap<AppContext, HtmlRenderer>();

/** The renderer of a service instance, for other features (agent previews); the html feature registers it. */
export function htmlRendererOf(ctx: AppContext): HtmlRenderer | undefined {
  return renderers.get(ctx);
}

export function registerHtmlRenderer(ctx: AppContext, renderer: HtmlRenderer): void {
  renderers.set(ctx, renderer);
}
