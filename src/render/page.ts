import type { CDPSession } from 'puppeteer-core';
import { DomainError, Unprocessable } from '../errors.js';
import type { MediaRoot } from '../files/media-root.js';
import type { BrowserPage, BrowserPool } from '../tools/browser.js';
import { CARD_URL, installSandbox } from './sandbox.js';
import { VIRTUAL_CLOCK_SCRIPT } from './virtual-clock.js';

/**
 * Part of a render's time limit allowed for loading the page with its fonts, images and media (a card's or a prepared
 * page's).
 */
const LOAD_TIMEOUT_MS = 30_000;

/**
 * Where the card page's `/media/...` requests are read from: the local path of the file a media URL names, or a
 * throw when there is none (or it may not be read). The service backs it with its media root (every containment
 * check, links included: `mediaRootFiles`); in a job it is `job.env.media`, which on a render worker asks the service
 * and answers the copy in the worker's input cache.
 */
export type MediaFiles = (url: string, signal?: AbortSignal) => Promise<string>;

/** The media files of this service: `/media/...` URLs resolved through the media root. */
export const mediaRootFiles =
  (media: MediaRoot): MediaFiles =>
  async (url) =>
    (await media.resolveUrl(url)).path;

export interface CardSpec {
  html: string;
  width: number;
  height: number;
  fps: number;
  /** Transparent page background: captured frames keep alpha 0 wherever the card draws nothing. */
  transparent?: boolean;
  /**
   * A page the service writes itself (a mockup, a motion preview), which does everything on the clock's steps. Only
   * user cards get the stopped document timeline below: with it, mockup renders differed between runs (about one in
   * two on Node 24; not yet understood), and these pages have no animations of their own to hold.
   */
  ownPage?: boolean;
}

export interface CardEnv {
  pool: BrowserPool;
  media: MediaFiles;
  /** Origins of this service whose absolute /media URLs the card may use. */
  serviceOrigins: string[];
}

/** A card loaded in a sandboxed page, on the virtual clock, ready to be stepped frame by frame. */
export interface CardPage {
  /**
   * Moves the virtual clock forward to frame `index` (never backwards), running every frame in between; `onFrame`
   * sees each frame reached on the way (a frame render's progress).
   */
  seek(index: number, onFrame?: (frame: number) => void): Promise<void>;
  /** The viewport as a PNG. */
  capture(): Promise<Buffer>;
  /**
   * The viewport as a PNG (or a JPEG of `quality`), or undefined when nothing was drawn differently since this card's
   * previous `captureChanged`: the compositor's damage under begin-frame control (`BrowserPage.captureChanged`), the
   * virtual clock's `takeChanged` with screenshots. The first call answers an image.
   */
  captureChanged(jpegQuality?: number): Promise<Buffer | undefined>;
  /** Requests of the card that were refused. */
  blocked: string[];
  /** Whether the page is captured under begin-frame control (damage reported by the compositor). */
  beginFrame: boolean;
  /**
   * The rows (CSS px from the top) that can move until `untilMs` of virtual time, or null when that cannot be told
   * (the virtual clock's `motion`). Call before the first `seek`.
   */
  motion(untilMs: number): Promise<{ top: number; bottom: number } | null>;
  /**
   * Shows and captures only the rows `top`..`top + height` of the card (the page still lays out the whole frame, and
   * sees no difference). Call before the first `seek`.
   */
  band(top: number, height: number): Promise<void>;
}

/** Rejects as soon as `signal` aborts, with the signal's reason; the work itself is stopped by closing the page. */
export function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

async function evaluate(cdp: CDPSession, expression: string): Promise<unknown> {
  const res = await cdp.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
  if (res.exceptionDetails) {
    throw new Unprocessable(
      'render_failed',
      `The virtual clock failed: ${res.exceptionDetails.exception?.description ?? res.exceptionDetails.text}`,
    );
  }
  return res.result.value;
}

/**
 * Opens a page from the pool, installs the sandbox and the virtual clock, loads the card and waits for its fonts,
 * images and media, then hands the card to `fn`. Everything is bounded by `signal` (the render's time limit and the
 * client going away); the page and its context are closed afterwards in every case.
 */
export function withCardPage<T>(
  env: CardEnv,
  spec: CardSpec,
  signal: AbortSignal,
  fn: (card: CardPage) => Promise<T>,
): Promise<T> {
  return withCardPages(env, spec, 1, signal, ([card]) => fn(card));
}

/** Like `withCardPage` with up to `count` identical copies of the card, each in its own page (and renderer process). */
export function withCardPages<T>(
  env: CardEnv,
  spec: CardSpec,
  count: number,
  signal: AbortSignal,
  fn: (cards: CardPage[]) => Promise<T>,
): Promise<T> {
  return env.pool.withPages(
    count,
    { width: spec.width, height: spec.height },
    async (pages) => fn(await Promise.all(pages.map((lent) => loadCard(lent, env, spec, signal)))),
    signal,
  );
}

async function loadCard(lent: BrowserPage, env: CardEnv, spec: CardSpec, signal: AbortSignal): Promise<CardPage> {
  const { page, cdp } = lent;
  let crashed: Error | undefined;
  page.on('error', (err) => (crashed = err));
  if (spec.transparent)
    await abortable(
      cdp.send('Emulation.setDefaultBackgroundColorOverride', { color: { r: 0, g: 0, b: 0, a: 0 } }),
      signal,
    );
  const sandbox = await abortable(
    installSandbox(page, { html: spec.html, media: env.media, serviceOrigins: env.serviceOrigins }),
    signal,
  );
  await abortable(page.evaluateOnNewDocument(VIRTUAL_CLOCK_SCRIPT), signal);
  // The clock adopts the page's animations at its first step; until then they would run on real time, and on a busy
  // machine their events (animationiteration, finish) fired before frame 0. A stopped document timeline (every frame,
  // every navigation of this page) keeps them at 0 until the clock sets their time.
  if (!spec.ownPage) {
    await abortable(cdp.send('Animation.enable'), signal);
    await abortable(cdp.send('Animation.setPlaybackRate', { playbackRate: 0 }), signal);
  }
  try {
    await abortable(page.goto(CARD_URL, { waitUntil: 'load', timeout: LOAD_TIMEOUT_MS }), signal);
  } catch (err) {
    if (signal.aborted || err instanceof DomainError) throw err;
    throw new Unprocessable('render_failed', `The card did not load: ${(err as Error).message.split('\n')[0]}`);
  }
  await abortable(evaluate(cdp, `window.__bmsClock.ready(${LOAD_TIMEOUT_MS}, ${!lent.beginFrameControl})`), signal);
  let frame = -1;
  let captured = false;
  // With screenshots: whether anything that draws changed by the frame last reached (the clock's takeChanged).
  let changed = true;
  const check = () => {
    if (crashed) throw new Unprocessable('render_failed', `The card's page crashed: ${crashed.message}`);
  };
  return {
    blocked: sandbox.blocked,
    beginFrame: lent.beginFrameControl,
    async motion(untilMs: number) {
      check();
      return (await abortable(evaluate(cdp, `window.__bmsClock.motion(${untilMs})`), signal)) as {
        top: number;
        bottom: number;
      } | null;
    },
    async band(top: number, height: number) {
      check();
      await abortable(
        cdp.send('Emulation.setDeviceMetricsOverride', {
          width: spec.width,
          height: spec.height,
          deviceScaleFactor: 1,
          mobile: false,
          viewport: { x: 0, y: top, width: spec.width, height, scale: 1 },
        }),
        signal,
      );
    },
    async seek(index: number, onFrame?: (frame: number) => void) {
      while (frame < index) {
        frame++;
        check();
        // Only the frame asked for is drawn; those before it are stepped through. The step of a drawn frame also
        // answers whether anything changed since the last one (used with screenshots).
        const answer = await abortable(
          evaluate(
            cdp,
            `window.__bmsClock.step(${(frame * 1000) / spec.fps}, ${!lent.beginFrameControl}, ${frame === index})`,
          ),
          signal,
        );
        if (frame === index) changed = answer === true;
        onFrame?.(frame);
      }
    },
    async capture() {
      check();
      return abortable(lent.capture({ format: 'png' }), signal);
    },
    async captureChanged(quality?: number) {
      check();
      const opts = quality === undefined ? { format: 'png' as const } : { format: 'jpeg' as const, quality };
      if (!lent.beginFrameControl) {
        // Screenshots come with no damage report: the clock tells whether anything that draws may have changed, unless
        // an image that moves on the browser's own timer is on the page.
        if (captured && !changed && !sandbox.movingImages) return undefined;
        captured = true;
      }
      return abortable(lent.captureChanged(opts), signal);
    },
  };
}
