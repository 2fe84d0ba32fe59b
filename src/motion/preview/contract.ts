import type { Approximation, PreviewResult } from '../schemas.js';

/**
 * The preview's contract, below every stage of it: the job kind and its params (what request.ts checks), what the
 * drawing hands back (job.ts), the file's name, its inputs and the element it becomes. The stages import this file and
 * never each other's top.
 */

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
  /** Font files on the board or beside the project, by the PostScript name a text layer asks for (font-files.ts). */
  fonts?: { postscript: string; url: string }[];
  addToBoard: boolean;
  /** HTML_RENDER_TIMEOUT_SECONDS of the service that queued it. */
  timeoutMs: number;
}

declare module '../../jobs/kinds.js' {
  interface JobKinds {
    'motion.preview': PreviewParams;
  }
  interface JobResults {
    'motion.preview': PreviewResult;
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

/** The file name of a preview: `<composition> preview.<format>`. */
export const previewFilename = (p: Pick<PreviewParams, 'composition' | 'format'>) =>
  `${p.composition.name} preview.${p.format}`;

/** Every `/media` URL a preview reads (the job's declared inputs). */
export const previewInputs = (p: PreviewParams): string[] => [
  ...new Set([
    p.project.url,
    ...p.footage.map((f) => f.url),
    ...p.media.map((m) => m.url),
    ...(p.fonts ?? []).map((f) => f.url),
  ]),
];

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
