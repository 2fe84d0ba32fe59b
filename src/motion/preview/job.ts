import fsp from 'node:fs/promises';
import type { PendingOutput } from '../../boards/outputs.js';
import { DomainError, TimedOut, Unprocessable } from '../../errors.js';
import { timeLimit } from '../../jobs/time-limit.js';
import { captureVideo, capturePng, frameCount } from '../../html/render.js';
import type { JobContext, JobOutcome } from '../../jobs/runner.js';
import type { BrowserPool } from '../../tools/browser.js';
import type { Tools } from '../../tools/locate.js';
import type { Approximation } from '../schemas.js';
import { previewFilename } from './request.js';
import { prepareFrames } from './frames.js';
import { previewHtml } from './page.js';

export const MOTION_PREVIEW_JOB = 'motion.preview';

/** A preview checked against its project (request.ts): everything the drawing needs, files by `/media` URL. */
export interface PreviewParams {
  boardId: string;
  project: { url: string; name: string };
  composition: { id: number; name: string };
  format: 'png' | 'mp4' | 'webm';
  width: number;
  height: number;
  fps: number;
  /** png: the time asked for (the frame drawn is floor(time x fps)). */
  time?: number;
  /** Videos: first second, and seconds (absent: the work area's length from start, at most 60 s). */
  start?: number;
  duration?: number;
  /** Text edits by layer index of the composition (checked as a render checks them). */
  text: { layer: number; text: string }[];
  /** Media edits: a board file replaces the layer's source. */
  media: { layer: number; url: string }[];
  /** Whether the composition or a precomp it shows has expressions (evaluated in a sandbox, off the event loop). */
  expressions?: boolean;
  /** The project's footage files found (by item id). */
  footage: { id: number; url: string }[];
  addToBoard: boolean;
  /** HTML_RENDER_TIMEOUT_SECONDS of the service that queued it. */
  timeoutMs: number;
}

declare module '../../jobs/kinds.js' {
  interface JobKinds {
    'motion.preview': PreviewParams;
  }
}

/** What a preview hands back with its file (the answer without the file's final name). */
export interface PreviewData {
  type: 'image' | 'video';
  width: number;
  height: number;
  fps: number;
  time?: number;
  duration?: number;
  approximations: Approximation[];
}

/** What a preview run uses: the same in the request and in a job (wherever it runs). */
export interface PreviewRun {
  tools: Tools;
  pool: BrowserPool;
  /** The local path of a declared input (the project, its footage, the edits' files). */
  input(url: string): string;
  scratch(): Promise<string>;
  signal: AbortSignal;
  progress(fraction: number): void;
}

/** Share of the progress bar taken by decoding, sampling and preparing footage, before the first frame. */
const PREPARE_SHARE = 0.15;

/**
 * Draws a preview into a file `reserve` hands out in the board folder and leaves it pending: decode the project,
 * apply the edits, sample every output frame's display list (frames.ts), prepare footage and fonts in the scratch
 * folder, then capture the page (page.ts) on the HTML renderer's virtual clock: one PNG, or every frame into ffmpeg.
 */
export async function renderPreviewFile(
  run: PreviewRun,
  p: PreviewParams,
  reserve: (filename: string) => Promise<PendingOutput>,
): Promise<{ file: PendingOutput; data: PreviewData }> {
  const limit = timeLimit(
    run.signal,
    p.timeoutMs,
    () =>
      new TimedOut(`The preview took longer than its limit of ${Math.round(p.timeoutMs / 1000)} s`, 'render_timeout'),
    'The request was cancelled',
  );
  try {
    return await draw({ ...run, signal: limit.signal }, p, reserve);
  } catch (err) {
    throw limit.stopped() ?? err;
  }
}

async function draw(
  run: PreviewRun,
  p: PreviewParams,
  reserve: (filename: string) => Promise<PendingOutput>,
): Promise<{ file: PendingOutput; data: PreviewData }> {
  const video = p.format !== 'png';
  const out = await reserve(previewFilename(p));
  const work = await run.scratch();
  const prepared = await prepareFrames(run, p, work, (f) => run.progress(f * PREPARE_SHARE));
  const served = new Map(prepared.files);
  const media = async (url: string) => {
    const file = served.get(url.split(/[?#]/)[0]);
    if (!file) throw new Error(`not a file of this preview: ${url}`);
    return file;
  };
  const html = previewHtml(p, prepared);
  const spec = { html, width: p.width, height: p.height, fps: p.fps };
  try {
    if (!video) {
      const { png } = await capturePng(
        { tools: run.tools, pool: run.pool, media, serviceOrigins: () => [], timeoutMs: p.timeoutMs },
        { ...spec, frame: 0 },
        run.signal,
      );
      await fsp.writeFile(out.temp, png, { flag: 'wx' });
    } else {
      const frames = prepared.frames.length;
      // Frame ranges report their frames side by side, so progress counts them rather than reading an index.
      let done = 0;
      await captureVideo(
        run.tools,
        { pool: run.pool, media, serviceOrigins: [] },
        spec,
        {
          fps: p.fps,
          format: p.format as 'mp4' | 'webm',
          output: out.temp,
          frameCount: frames,
          signal: run.signal,
          timeoutMs: p.timeoutMs,
          // A preview video is lossy and has no alpha: lossless PNG frames would only cost time.
          frames: 'jpeg',
        },
        () => run.progress(PREPARE_SHARE + ((1 - PREPARE_SHARE) * ++done) / frames),
      );
    }
  } catch (err) {
    if (err instanceof DomainError && err.code === 'ffmpeg_failed')
      throw new Unprocessable('render_failed', `Preview failed: ${err.message}`);
    throw err;
  }
  return {
    file: out,
    data: {
      type: video ? 'video' : 'image',
      width: p.width,
      height: p.height,
      fps: p.fps,
      ...(video ? { duration: prepared.frames.length / p.fps } : { time: prepared.times[0] }),
      approximations: prepared.approximations,
    },
  };
}

/** Frames of a video preview: as the HTML renderer counts them. */
export const previewFrames = (fps: number, duration: number) => frameCount(fps, duration);

/** The element a preview becomes with add_to_board. */
export const previewElement = (p: PreviewParams, data: PreviewData) => ({
  type: data.type,
  data: {
    source: 'motion-preview',
    preview: {
      project_url: p.project.url,
      composition: p.composition.name,
      width: p.width,
      height: p.height,
      fps: p.fps,
      ...(data.time !== undefined ? { time: data.time } : { start: p.start ?? 0, duration: data.duration }),
    },
  },
});

/**
 * The `motion.preview` job: only its job (params, declared inputs, scratch, output, env), so render workers run it
 * too. The file is handed back pending: the runner names it in the board folder (and adds an element with
 * add_to_board).
 */
export async function renderPreviewJob(job: JobContext<PreviewParams>): Promise<JobOutcome> {
  const run: PreviewRun = {
    tools: job.env.tools,
    pool: job.env.browsers,
    input: (url) => job.input(url),
    scratch: () => job.scratch(),
    signal: job.signal,
    progress: job.progress,
  };
  const { file, data } = await renderPreviewFile(run, job.params, (name) => job.output(job.params.boardId, name));
  return {
    output: {
      file,
      element: job.params.addToBoard ? previewElement(job.params, data) : false,
      data: data as unknown as Record<string, unknown>,
    },
  };
}
