import fsp from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { writeNewFile } from '../files/atomic.js';
import type { HtmlRenderer } from '../html/render.js';
import { RENDER_LIMITS } from '../html/limits.js';

/** Folder under the media root for card previews: `media/agent-previews/<session_id>/<card_id>.png`. */
const FOLDER = 'agent-previews';

/** An even number of pixels within the renderer's bounds (x264-style evenness is what the renderer asks for). */
function even(n: number | null | undefined, fallback: number, max: number): number {
  if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0) return fallback;
  return Math.min(max, Math.max(RENDER_LIMITS.minSize, Math.round(n / 2) * 2));
}

/** What the html previews show besides the document: its first frame, or why there is none. */
export interface FramePreview {
  image_url: string | null;
  width: number;
  height: number;
  image_error?: string;
}

/**
 * PNG previews of html cards: frame 0 through the HTML renderer, kept outside the board folder (a preview is not the
 * user's file) and removed with their session. Nothing here outlives a restart: the folder is emptied at start.
 */
export class Previews {
  readonly root: string;

  constructor(
    private readonly ctx: AppContext,
    private readonly renderer: HtmlRenderer,
  ) {
    this.root = path.join(ctx.media.root, FOLDER);
  }

  /** Size of a card's preview: the element's own size on the board when it has one, else 1280x720. */
  static size(width?: number | null, height?: number | null): { width: number; height: number } {
    return { width: even(width, 1280, RENDER_LIMITS.maxWidth), height: even(height, 720, RENDER_LIMITS.maxHeight) };
  }

  /**
   * Renders the first frame. An HTML the renderer refuses (422: it crashed the page, the clock failed) is the
   * model's mistake and is thrown for it to fix; a renderer that cannot run here (no Chromium, time limit) leaves
   * the card without an image, saying why.
   */
  async frame(
    sessionId: string,
    cardId: string,
    html: string,
    size: { width: number; height: number },
    signal: AbortSignal,
  ): Promise<FramePreview> {
    try {
      const { png } = await this.renderer.capturePng({ html, ...size, fps: 30, frame: 0 }, signal);
      const stored = await writeNewFile(path.join(this.root, sessionId), `${cardId}.png`, png);
      return { image_url: this.ctx.media.rootUrl(path.join(FOLDER, sessionId, stored)), ...size };
    } catch (err) {
      if (signal.aborted) throw err;
      if (err instanceof DomainError && err.kind === 'unprocessable')
        throw new Error(`The HTML could not be rendered: ${err.message}`, { cause: err });
      const why = err instanceof Error ? err.message : String(err);
      this.ctx.log.warn({ err }, 'agent card preview not rendered');
      return { image_url: null, ...size, image_error: why };
    }
  }

  async removeSession(sessionId: string): Promise<void> {
    await fsp.rm(path.join(this.root, sessionId), { recursive: true, force: true });
  }

  async removeAll(): Promise<void> {
    await fsp.rm(this.root, { recursive: true, force: true });
  }
}
