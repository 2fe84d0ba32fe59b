import path from 'node:path';
import { DomainError, TimedOut, Unprocessable } from '../errors.js';
import { timeLimit } from '../jobs/time-limit.js';
import type { BrowserPool } from '../tools/browser.js';
import type { Tools } from '../tools/locate.js';
import { captureVideo } from './capture.js';
import type { EncodeOptions } from './encode.js';
import { withCardPage, type CardSpec, type MediaFiles } from './page.js';

/**
 * The URL under which a page of prepared files reads them (a mockup's screen and backgrounds, a preview's display
 * lists, pictures and fonts): answered from those files alone, never the media root.
 */
const WORK_URL = '/media/work/';

/** The URL of a prepared file served as `name`; with a name that is a prefix, the start of the URLs of a numbered series. */
export const workUrl = (name: string): string => WORK_URL + encodeURIComponent(name);

/** Files prepared for a page (in a scratch folder), by the URL the page reads each from. */
export class PreparedFiles {
  private readonly byUrl = new Map<string, string>();

  /** Serves `file` as `name` (default: its own name); answers its URL. */
  serve(file: string, name = path.basename(file)): string {
    const url = workUrl(name);
    this.byUrl.set(url, file);
    return url;
  }

  /** The page's file reader: a prepared file, or a refusal for anything else. */
  readonly media: MediaFiles = async (url) => {
    const file = this.byUrl.get(url.split(/[?#]/)[0]);
    if (!file) throw new Error(`not a file prepared for this page: ${url}`);
    return file;
  };
}

/**
 * The one mapping of a render's encoder failure: ffmpeg refusing what a render made of the user's input (a page, a
 * timeline, aerender's output) is 422 `render_failed` ("<what>: <ffmpeg's reason>"); anything else is left as it is.
 */
export function asRenderFailure(err: unknown, what: string): unknown {
  return err instanceof DomainError && err.code === 'ffmpeg_failed'
    ? new Unprocessable('render_failed', `${what}: ${err.message}`)
    : err;
}

/** What drawing a page needs, wherever it runs (the service or a render worker). */
export interface PageEnv {
  tools: Tools;
  pool: BrowserPool;
  /**
   * Where the page's `/media/...` requests are read from, and the origins of this service whose absolute /media URLs
   * it may use: an HTML card's (the board's media). Absent: the page reads only the files prepared for it (`files`).
   */
  media?: { files: MediaFiles; serviceOrigins: string[] };
}

export interface RenderPageOptions {
  /** The caller's signal: the client going away, a job's cancel. */
  signal: AbortSignal;
  /** The time limit of the whole render, preparing included (HTML_RENDER_TIMEOUT_SECONDS for cards and previews). */
  timeoutMs: number;
  /** What the time limit and a failure name: `render`, `preview`. */
  what: string;
  /**
   * ffmpeg failing becomes 422 `render_failed` ("<What> failed: ..."): the page or the prepared files made a video
   * ffmpeg refused. Off for HTML cards, whose answers keep ffmpeg's own error.
   */
  failedAsRender?: boolean;
}

/** A page on the virtual clock, under the render's time limit. */
export interface ClockPage {
  /** Aborts at the time limit or with the caller's signal: the signal for the work before the capture too. */
  signal: AbortSignal;
  /** The files the page reads (unused when the env names its media). */
  files: PreparedFiles;
  /** Frame `frame` as PNG bytes; `onProgress` gets the share of the frames up to it the page has stepped through. */
  png(
    spec: CardSpec & { frame: number },
    onProgress?: (fraction: number) => void,
  ): Promise<{ png: Buffer; blocked: string[] }>;
  /** Every frame into a video file (`captureVideo`); `onFrame` as there. */
  video(
    spec: CardSpec,
    encode: Omit<EncodeOptions, 'signal' | 'timeoutMs'>,
    onFrame?: (index: number, picture: Buffer[]) => void,
  ): Promise<{ blocked: string[]; bands: number[] }>;
}

/**
 * The one way a feature draws a page on the virtual clock (an HTML card, a mockup, a motion preview): runs `fn` under
 * the time limit over the caller's signal, with the page's files and its captures. What stopped it is thrown as
 * TimedOut `render_timeout` or Cancelled `aborted` (or the job's own reason); with `failedAsRender`, ffmpeg's failure
 * as `render_failed`.
 */
export async function renderPage<T>(
  env: PageEnv,
  opts: RenderPageOptions,
  fn: (page: ClockPage) => Promise<T>,
): Promise<T> {
  const limit = timeLimit(
    opts.signal,
    opts.timeoutMs,
    () =>
      new TimedOut(
        `The ${opts.what} took longer than its limit of ${Math.round(opts.timeoutMs / 1000)} s`,
        'render_timeout',
      ),
    'The request was cancelled',
  );
  const signal = limit.signal;
  const files = new PreparedFiles();
  const cardEnv = {
    pool: env.pool,
    media: env.media?.files ?? files.media,
    serviceOrigins: env.media?.serviceOrigins ?? [],
  };
  const page: ClockPage = {
    signal,
    files,
    png: (spec, onProgress) =>
      withCardPage(cardEnv, spec, signal, async (card) => {
        await card.seek(spec.frame, onProgress && ((f) => onProgress((f + 1) / (spec.frame + 1))));
        return { png: await card.capture(), blocked: card.blocked };
      }),
    video: (spec, encode, onFrame) =>
      captureVideo(env.tools, cardEnv, spec, { ...encode, signal, timeoutMs: opts.timeoutMs }, onFrame),
  };
  try {
    return await fn(page);
  } catch (err) {
    const stopped = limit.stopped();
    if (stopped) throw stopped;
    const what = opts.what[0].toUpperCase() + opts.what.slice(1);
    throw opts.failedAsRender ? asRenderFailure(err, `${what} failed`) : err;
  }
}
