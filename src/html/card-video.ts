import fsp from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import type { Element } from '../boards/schemas.js';
import type { BoardService } from '../boards/service.js';
import { Cancelled, InvalidInput, NotFound } from '../errors.js';
import { tempPathIn } from '../files/atomic.js';
import { renameRetrying } from '../files/retry.js';
import type { MediaRoot } from '../files/media-root.js';
import { abortable } from '../render/page.js';
import type { HtmlCardService } from './card-html.js';
import { RENDER_LIMITS } from './limits.js';
import type { HtmlRenderer } from './render.js';

/** A card's video: rendered once per html version and size, kept under `media/html-renders/<board_id>/cards/`. */
export interface CardVideo {
  /** Absolute path of the H.264 mp4. */
  path: string;
  /** Its `/media/...` URL. */
  url: string;
  /** Absolute path of the poster (JPEG of the middle frame). */
  posterPath: string;
  posterUrl: string;
  /** The card version the video shows. */
  htmlVersion: number;
  width: number;
  height: number;
  duration: number;
}

/** Defaults of a card video; docs/html.md ("Card videos") lists them. */
export const CARD_VIDEO = {
  /** The longest side of a card video, in pixels (the card's own size is scaled down to fit). */
  maxSide: 1280,
  /** Size when the element has none. */
  fallback: { width: 640, height: 360 },
  fps: 30,
  /** Seconds, unless the element's `data.duration` says otherwise (within the renderer's bounds). */
  duration: 4,
} as const;

const even = (n: number) => Math.max(RENDER_LIMITS.minSize, 2 * Math.round(n / 2));

/** The size, fps and duration a card's video is rendered at, from the element's size and `data.duration`. */
export function cardVideoSpec(element: Element): { width: number; height: number; fps: number; duration: number } {
  let width: number = CARD_VIDEO.fallback.width;
  let height: number = CARD_VIDEO.fallback.height;
  if (element.width && element.height && element.width > 0 && element.height > 0) {
    const scale = Math.min(1, CARD_VIDEO.maxSide / Math.max(element.width, element.height));
    width = element.width * scale;
    height = element.height * scale;
  }
  const d = element.data.duration;
  const duration =
    typeof d === 'number' && Number.isFinite(d) && d > 0 && d <= RENDER_LIMITS.maxDurationSeconds
      ? d
      : CARD_VIDEO.duration;
  return { width: even(width), height: even(height), fps: CARD_VIDEO.fps, duration };
}

interface InFlight {
  done: Promise<CardVideo>;
  /** Aborts the render once every caller waiting for it went away. */
  stop: AbortController;
  waiters: number;
}

async function exists(file: string): Promise<boolean> {
  return fsp.access(file).then(
    () => true,
    () => false,
  );
}

/**
 * The video of an html card's current version, rendered through the HtmlRenderer on first use and cached per
 * `htmlVersion` (and size and duration): a later call for the same version answers the cached file at once, and
 * concurrent calls share one render. Nothing is added to the board. Used by sharing and the motion-editor panel.
 */
export class CardVideos {
  private readonly inFlight = new Map<string, InFlight>();

  constructor(
    private readonly media: MediaRoot,
    private readonly boards: BoardService,
    private readonly cards: HtmlCardService,
    /**
     * A renderer without service origins: a card's absolute http://127.0.0.1:<port>/media URLs are refused (relative
     * /media URLs load), which is also what a copy of the video shown outside this machine needs.
     */
    private readonly renderer: HtmlRenderer,
  ) {}

  /** The HTML of the card's current version (its kept copy; the backing file when the copy is not written yet). */
  private async currentHtml(element: Element, version: number): Promise<string> {
    try {
      return (await this.cards.read(element.board_id, element.id, version)).html;
    } catch (err) {
      if (!(err instanceof NotFound) || !element.url) throw err;
      return fsp.readFile((await this.media.resolveUrl(element.url)).path, 'utf8');
    }
  }

  /** `signal` stops waiting; the render itself stops only when every caller waiting for it has gone. */
  async get(boardId: string, elementId: string, signal?: AbortSignal): Promise<CardVideo> {
    const element = this.boards.requireElement(boardId, elementId);
    if (element.type !== 'html') throw new InvalidInput(`Element ${elementId} is of type ${element.type}, not html`);
    const version = Number.isInteger(element.data.htmlVersion) ? (element.data.htmlVersion as number) : 1;
    const spec = cardVideoSpec(element);
    const dir = path.join(this.media.root, 'html-renders', boardId, 'cards');
    const stem = `${elementId}-v${version}-${spec.width}x${spec.height}-${spec.fps}fps-${spec.duration}s`;
    const rel = (file: string) => this.media.rootUrl(path.relative(this.media.root, file));
    const video: CardVideo = {
      path: path.join(dir, `${stem}.mp4`),
      posterPath: path.join(dir, `${stem}.jpg`),
      url: '',
      posterUrl: '',
      htmlVersion: version,
      ...spec,
    };
    video.url = rel(video.path);
    video.posterUrl = rel(video.posterPath);
    if ((await exists(video.path)) && (await exists(video.posterPath))) return video;

    const inFlight = this.inFlight;
    let entry = inFlight.get(video.path);
    if (!entry) {
      const stop = new AbortController();
      const done = (async () => {
        await fsp.mkdir(dir, { recursive: true });
        const html = await this.currentHtml(element, version);
        const temp = tempPathIn(dir, `${stem}.mp4`);
        const posterTemp = tempPathIn(dir, `${stem}.jpg`);
        try {
          const { middleFrame } = await this.renderer.renderToFile({ html, ...spec, format: 'mp4' }, temp, stop.signal);
          await fsp.writeFile(posterTemp, await sharp(middleFrame).jpeg({ quality: 82 }).toBuffer());
          // Poster first: the video's presence is what marks the pair as complete.
          await renameRetrying(posterTemp, video.posterPath);
          await renameRetrying(temp, video.path);
          return video;
        } finally {
          await Promise.all([fsp.rm(temp, { force: true }), fsp.rm(posterTemp, { force: true })]);
        }
      })();
      const created: InFlight = { done, stop, waiters: 0 };
      entry = created;
      inFlight.set(video.path, created);
      done.then(
        () => inFlight.delete(video.path),
        () => inFlight.delete(video.path),
      );
    }
    const current = entry;
    current.waiters++;
    const leave = () => {
      if (--current.waiters === 0) current.stop.abort(new Cancelled('The request was cancelled', 'aborted'));
    };
    if (!signal) return current.done.finally(() => current.waiters--);
    const onAbort = () => leave();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await abortable(current.done, signal);
    } finally {
      signal.removeEventListener('abort', onAbort);
      if (!signal.aborted) current.waiters--;
    }
  }
}
