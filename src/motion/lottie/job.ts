import fsp from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import yazl from 'yazl';
import type { PendingOutput } from '../../boards/outputs.js';
import { InvalidInput, Unprocessable } from '../../errors.js';
import type { JobContext, JobOutcome } from '../../jobs/runner.js';
import { ProjectFormatError } from '../chunks.js';
import { inThread } from '../preview/display-list-pool.js';
import type { Approximation, ExportResult } from '../schemas.js';
import type { Footage } from '../scene/model.js';
import type { ImageSource } from './write.js';
import { runTask, type WorkerTask } from './task.js';

export const MOTION_EXPORT_JOB = 'motion.export';

/** The most an export may weigh (the limit): refused before any work when the estimate passes it. */
export const MAX_EXPORT_BYTES = 50 * 1024 * 1024;

/** An export checked against its project (service.ts): everything the writing needs, files by `/media` URL. */
export interface ExportParams {
  boardId: string;
  project: { url: string; name: string };
  composition: { id: number; name: string };
  format: 'lottie' | 'dotlottie';
  images: 'embed' | 'files';
  expressions: 'bake' | 'keep';
  /** Text edits by layer index of the composition (checked as a render checks them). */
  text: { layer: number; text: string }[];
  /** Media edits: a board picture replaces the layer's source. */
  media: { layer: number; url: string }[];
  /** The project's footage files found (by item id). */
  footage: { id: number; url: string }[];
  addToBoard: boolean;
  /** Whether the composition or a precomp it shows has expressions (baking them runs a sandbox). */
  hasExpressions: boolean;
  /** Glyph outlines requested (`glyphs: true`). */
  glyphs: boolean;
  /** Camera layers written as cameras (`cameras: true`). */
  cameras: boolean;
  /** The project's own font files (board, project folder) its text asks for, by `/media` URL (the preview's). */
  fonts: { postscript: string; url: string }[];
}

declare module '../../jobs/kinds.js' {
  interface JobKinds {
    'motion.export': ExportParams;
  }
  interface JobResults {
    'motion.export': ExportResult;
  }
}

/** What an export hands back with its file. */
export interface ExportData {
  frames: number;
  bytes: number;
  approximations: Approximation[];
}

/** What an export uses: the same in the request and in a job (wherever it runs). */
export interface ExportRun {
  input(url: string): string;
  signal: AbortSignal;
  progress(fraction: number): void;
}

/** A board picture as Lottie takes it: JPEG as it is, PNG recompressed when that is smaller, others converted to PNG. */
async function picture(file: string): Promise<{ bytes: Buffer; ext: 'png' | 'jpg'; width: number; height: number }> {
  const bytes = await fsp.readFile(file);
  const meta = await sharp(bytes).metadata();
  const size = { width: meta.width ?? 0, height: meta.height ?? 0 };
  if (meta.format === 'jpeg') return { bytes, ext: 'jpg', ...size };
  if (meta.format === 'png') {
    // the same pixels, written again without metadata chunks at full compression: kept when smaller
    const again = await sharp(bytes).png({ compressionLevel: 9 }).toBuffer();
    return { bytes: again.length < bytes.length ? again : bytes, ext: 'png', ...size };
  }
  return { bytes: await sharp(bytes).png({ compressionLevel: 9 }).toBuffer(), ext: 'png', ...size };
}

/** Projects up to this size without expressions to bake are written in the request (as the preview samples them). */
const INLINE_BYTES = 256 * 1024;

const VIDEO_EXT = /\.(mp4|m4v|mov|webm|mkv|avi|mpg|mpeg|ogv|wmv|flv|mxf|mp3|wav|aac|m4a|ogg|flac|aif|aiff)$/i;

/** Image folder inside a dotLottie 2.0 archive, and the animation's folder. */
const ARCHIVE_IMAGES = 'i/';
const ARCHIVE_ANIMATIONS = 'a/';

/** The file name of an export. */
export const exportFilename = (p: Pick<ExportParams, 'composition' | 'format'>) =>
  `${p.composition.name}.${p.format === 'dotlottie' ? 'lottie' : 'json'}`;

/** Every `/media` URL an export reads (the job's declared inputs). */
export const exportInputs = (p: ExportParams): string[] => [
  ...new Set([
    p.project.url,
    ...p.footage.map((f) => f.url),
    ...p.media.map((m) => m.url),
    ...(p.glyphs ? (p.fonts ?? []).map((f) => f.url) : []),
  ]),
];

/**
 * Writes an export into a file `reserve` hands out in the board folder and leaves it pending: the pictures read (and
 * converted where Lottie needs it), the project decoded and written in a worker thread, then the JSON or the
 * dotLottie archive (manifest, animation, images).
 */
export async function writeExportFile(
  run: ExportRun,
  p: ExportParams,
  reserve: (filename: string) => Promise<PendingOutput>,
): Promise<{ file: PendingOutput; data: ExportData }> {
  const files = new Map<string, Buffer>();
  const images: [number, ImageSource][] = [];
  const media: [number, Footage][] = [];
  const notes: Approximation[] = [];
  const add = async (id: number, url: string): Promise<ImageSource | undefined> => {
    if (VIDEO_EXT.test(url.split(/[?#]/)[0])) return undefined;
    let pic;
    try {
      pic = await picture(run.input(url));
    } catch {
      return undefined; // not a picture sharp reads: the layer is listed as missing footage by the writer
    }
    const name = `img_${id}.${pic.ext}`;
    if (p.images === 'files') {
      files.set(name, pic.bytes);
      return { file: name, width: pic.width, height: pic.height };
    }
    const mime = pic.ext === 'png' ? 'image/png' : 'image/jpeg';
    return { embedded: `data:${mime};base64,${pic.bytes.toString('base64')}`, width: pic.width, height: pic.height };
  };
  for (const f of p.footage) {
    const img = await add(f.id, f.url);
    if (img) images.push([f.id, img]);
  }
  // a media edit's picture is a footage item of its own, with an id no project item has
  for (const [k, m] of p.media.entries()) {
    const id = 0x7fff0000 + k;
    const img = await add(id, m.url);
    const name = decodeURIComponent(m.url.split(/[?#]/)[0].split('/').pop() ?? 'media');
    if (!img)
      notes.push({
        layer_index: m.layer,
        feature: 'media-edit',
        detail: `${name} is not a picture Lottie can show: the layer is left empty`,
      });
    else images.push([id, img]);
    const footage: Footage = {
      id,
      name,
      kind: 'file',
      width: img?.width ?? 0,
      height: img?.height ?? 0,
      duration: 0,
      frameRate: 0,
      still: true,
    };
    media.push([m.layer, footage]);
  }
  run.progress(0.1);
  const task: WorkerTask = {
    file: run.input(p.project.url),
    compositionId: p.composition.id,
    expressions: p.expressions,
    images,
    ...(p.images === 'files' ? { imageFolder: `/${ARCHIVE_IMAGES}` } : {}),
    text: p.text.map((t) => [t.layer, t.text]),
    media,
    ...(p.cameras ? { cameras: true } : {}),
    ...(p.glyphs
      ? { glyphs: { own: (p.fonts ?? []).map((f): [string, string] => [f.postscript, run.input(f.url)]) } }
      : {}),
  };
  // as the preview decides: a small project without expressions to bake costs milliseconds here; anything bigger
  // goes to the motion threads (started once, kept while in use, the last decoded projects kept there)
  const inline = (await fsp.stat(task.file)).size <= INLINE_BYTES && !(p.expressions === 'bake' && p.hasExpressions);
  const written = await (inline ? runTask(task) : inThread({ kind: 'export', task }, run.signal)).catch(
    (err: unknown) => {
      if (err instanceof ProjectFormatError || run.signal.aborted) throw err;
      throw new Unprocessable('export_failed', `Export failed: ${err instanceof Error ? err.message : String(err)}`);
    },
  );
  run.progress(0.9);
  const out = await reserve(exportFilename(p));
  if (p.format === 'lottie') await fsp.writeFile(out.temp, written.json, { flag: 'wx' });
  else await writeDotLottie(out.temp, animationId(p.composition.name), written.json, files);
  const bytes = (await fsp.stat(out.temp)).size;
  if (bytes > MAX_EXPORT_BYTES) {
    await fsp.rm(out.temp, { force: true });
    throw tooLarge(bytes);
  }
  return { file: out, data: { frames: written.frames, bytes, approximations: [...notes, ...written.approximations] } };
}

export const tooLarge = (bytes: number) =>
  new InvalidInput(
    `The export would be about ${Math.ceil(bytes / 1024 / 1024)} MB, more than the limit of ${MAX_EXPORT_BYTES / 1024 / 1024} MB`,
    { limit_bytes: MAX_EXPORT_BYTES, estimated_bytes: bytes },
    'export_too_large',
  );

/** An animation id of a dotLottie manifest: letters, digits, `_` and `-`. */
const animationId = (name: string) => name.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '') || 'animation';

/**
 * A dotLottie 2.0 archive (what the LottieFiles players read): `manifest.json`, the animation in `a/<id>.json`, its
 * pictures in `i/`. Stored entries are not compressed again when they are pictures.
 */
async function writeDotLottie(target: string, id: string, json: string, images: Map<string, Buffer>): Promise<void> {
  const zip = new yazl.ZipFile();
  const manifest = { version: '2', generator: 'Board Media Service', animations: [{ id }] };
  zip.addBuffer(Buffer.from(JSON.stringify(manifest)), 'manifest.json');
  zip.addBuffer(Buffer.from(json), `${ARCHIVE_ANIMATIONS}${id}.json`);
  for (const [name, bytes] of images) zip.addBuffer(bytes, path.posix.join(ARCHIVE_IMAGES, name), { compress: false });
  zip.end();
  const handle = await fsp.open(target, 'wx');
  try {
    const stream = handle.createWriteStream();
    await new Promise<void>((resolve, reject) => {
      zip.outputStream.pipe(stream).on('finish', resolve).on('error', reject);
      zip.outputStream.on('error', reject);
    });
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** The element an export becomes with add_to_board: a file element the app recognises by `data.source`. */
export const exportElement = (p: ExportParams, data: ExportData) => ({
  type: 'file' as const,
  data: {
    source: 'motion-export',
    lottie: {
      project_url: p.project.url,
      composition: p.composition.name,
      format: p.format,
      frames: data.frames,
    },
  },
});

/** The `motion.export` job: only its job (params, declared inputs, output), so render workers run it too. */
export async function exportJob(job: JobContext<ExportParams>): Promise<JobOutcome> {
  const { file, data } = await writeExportFile(
    { input: (url) => job.input(url), signal: job.signal, progress: job.progress },
    job.params,
    (name) => job.output(job.params.boardId, name),
  );
  return {
    output: {
      file,
      element: job.params.addToBoard ? exportElement(job.params, data) : false,
      data: data as unknown as Record<string, unknown>,
    },
  };
}
