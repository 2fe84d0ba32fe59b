import fsp from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { kindOfFile } from '../../files/media-types.js';
import { runFfmpeg } from '../../tools/ffmpeg.js';
import { probe } from '../../tools/ffprobe.js';
import type { DisplayList } from '../scene/display.js';
import type { Approximation } from '../schemas.js';
import { findFont } from './fonts.js';
import { fontAscent } from './font-folders.js';
import type { Tools } from '../../tools/locate.js';
import { workUrl, type PreparedFiles } from '../../render/render-page.js';
import type { PreviewParams } from './contract.js';
import type { LayerRef, SampleInput } from './display-lists.js';
import { sample } from './display-list-pool.js';

/**
 * What the page draws for a footage item: a picture, a video's extracted frames (`first` .. `first + count - 1` of
 * the source at `rate`, at `prefix` + the frame number in six digits + `.jpg`), or the labelled placeholder.
 */
export type PageFootage =
  | { image: string }
  | { video: { rate: number; first: number; count: number; prefix: string } }
  | { missing: true };

/** Everything the page needs, prepared in the scratch folder. */
export interface PreparedFrames {
  /** Output frame → index of its display list among the distinct ones. */
  frames: number[];
  /** Composition time of each output frame. */
  times: number[];
  /** The only display list when every frame shows the same one (it goes in the page itself). */
  single?: DisplayList;
  /** Files of display lists (the page fetches `lists-<k>.json`). */
  chunks: number;
  composition: { width: number; height: number; background: [number, number, number] };
  /** Footage item id → what to draw. */
  footage: Record<number, PageFootage>;
  /** PostScript name → the CSS family the page draws it with (`loaded`: an @font-face of ours). */
  /** ascent: the face's typographic ascender in ems (font-folders.ts), for box text's first baseline. */
  fonts: Record<string, { family: string; loaded: boolean; url?: string; ascent?: number }>;
  approximations: Approximation[];
}

/** What preparing uses of the job: its tools, its declared inputs, the render's signal (its time limit included). */
export interface PrepareIo {
  tools: Tools;
  input(url: string): string;
  signal: AbortSignal;
}

const BROWSER_IMAGES = new Set(['.png', '.jpg', '.jpeg', '.gif', '.webp', '.avif', '.bmp', '.svg']);

const readable = (file: string) =>
  sharp(file)
    .metadata()
    .then(
      () => true,
      () => false,
    );

/** The footage item of each media edit: the board file's size, and for a video its duration and rate. */
async function editedFootage(run: PrepareIo, p: PreviewParams): Promise<SampleInput['media']> {
  const out: SampleInput['media'] = [];
  for (const [k, e] of p.media.entries()) {
    const file = run.input(e.url);
    const still = kindOfFile(file) !== 'video';
    // An unreadable file keeps a nominal size: it is drawn as a placeholder (below), never a failure.
    const size = await (
      still
        ? sharp(file).metadata()
        : probe(run.tools, file).then((info) => ({ ...info.video, duration: info.duration }))
    ).catch(() => ({ width: undefined, height: undefined }));
    out.push({
      layer: e.layer,
      footage: {
        // Ids of the project's items are positive; edits get negative ones.
        id: -(k + 1),
        name: path.basename(file),
        kind: 'file',
        path: e.url,
        width: size.width ?? 100,
        height: size.height ?? 100,
        duration: 'duration' in size ? (size.duration ?? 0) : 0,
        frameRate: 'fps' in size ? (size.fps ?? 0) : 0,
        still,
      },
    });
  }
  return out;
}

/**
 * Samples every output frame's display list (display-lists.ts, into files of `work`), then prepares what they draw: each
 * footage item's picture (browser images as they are, others converted to PNG, video frames extracted by ffmpeg over
 * the range of source times the lists ask for) and the fonts. Missing or unreadable footage and substituted fonts
 * join the approximations.
 */
export async function prepareFrames(
  run: PrepareIo,
  p: PreviewParams,
  work: string,
  files: PreparedFiles,
  progress: (fraction: number) => void,
): Promise<PreparedFrames> {
  const sampled = await sample(
    run.input(p.project.url),
    {
      compositionId: p.composition.id,
      format: p.format,
      fps: p.fps,
      time: p.time,
      start: p.start,
      duration: p.duration,
      text: p.text,
      expressions: p.expressions,
      media: await editedFootage(run, p),
    },
    work,
    run.signal,
    (f) => progress(f * 0.6),
  );
  const notes = new Map<string, Approximation>(
    sampled.approximations.map((a) => [`${a.layer_index}|${a.layer}|${a.feature}|${a.detail}`, a]),
  );
  const note = (a: Approximation) => notes.set(`${a.layer_index}|${a.layer}|${a.feature}|${a.detail}`, a);
  sampled.files.forEach((file, k) => files.serve(file, `lists-${k}.json`));
  const serve = (name: string, file: string) => files.serve(file, name);

  const urls = new Map<number, string>(p.footage.map((f) => [f.id, f.url]));
  for (const f of sampled.footage) if (f.id < 0 && f.path) urls.set(f.id, f.path);
  const items = new Map(sampled.footage.map((f) => [f.id, f]));
  const footage: Record<number, PageFootage> = {};
  let serial = 0;
  for (const [key, use] of Object.entries(sampled.uses)) {
    const id = Number(key);
    const url = urls.get(id);
    const missing = (why: string) => {
      footage[id] = { missing: true };
      for (const layer of use.layers)
        note({
          ...layer,
          feature: 'missing-footage',
          detail: `${use.name}${use.path ? ` (${use.path})` : ''}: ${why}; drawn as a placeholder`,
        });
    };
    if (items.get(id)?.kind === 'placeholder') missing('a placeholder in the project');
    else if (!url) missing('not found in the board, beside the project or in the media root');
    else {
      const file = run.input(url);
      // The file found decides (a project may name a still where a board file is a video, and the other way round).
      if (kindOfFile(file) !== 'video') {
        const ext = path.extname(file).toLowerCase();
        const png = path.join(work, `img-${serial}.png`);
        const src = BROWSER_IMAGES.has(ext)
          ? (await readable(file)) && serve(`img-${serial++}${ext}`, file)
          : // TIFF, PSD...: converted once to PNG where libvips reads it.
            (await sharp(file)
              .png()
              .toFile(png)
              .then(
                () => true,
                () => false,
              )) && serve(`img-${serial++}.png`, png);
        if (src) footage[id] = { image: src };
        else missing('unreadable, or a format the preview cannot read');
      } else {
        const video = await extractFrames(run, id, file, use.sourceTimes, work);
        if (!video) missing('a video ffmpeg cannot read');
        else {
          footage[id] = { video: { ...video, prefix: workUrl(`v${id}-`) } };
          for (let f = video.first; f < video.first + video.count; f++) {
            const name = `${String(f).padStart(6, '0')}.jpg`;
            serve(`v${id}-${name}`, path.join(work, `v${id}`, name));
          }
        }
      }
    }
  }
  progress(0.8);

  const fonts: PreparedFrames['fonts'] = {};
  for (const [k, [ps, layer]] of Object.entries(sampled.fonts).entries()) {
    const own = p.fonts?.find((f) => f.postscript === ps);
    const found = own
      ? { requested: ps, file: run.input(own.url), family: ps, exact: true }
      : await findFont(ps, run.signal);
    if (found.file) {
      const url = serve(`font-${k}${path.extname(found.file).toLowerCase()}`, found.file);
      const ascent = await fontAscent(found.file);
      fonts[ps] = { family: `f${k}`, loaded: true, url, ...(ascent ? { ascent } : {}) };
    } else fonts[ps] = { family: found.family, loaded: false };
    if (!found.exact)
      note({ ...(layer as LayerRef), feature: 'font', detail: `${ps} is not installed; drawn with ${found.family}` });
  }
  progress(1);
  return {
    frames: sampled.frames,
    times: sampled.times,
    single: sampled.single,
    chunks: sampled.files.length,
    composition: sampled.composition,
    footage,
    fonts,
    approximations: [...notes.values()],
  };
}

/**
 * The frames of a video clip the lists show: one ffmpeg run over the range of source frames asked for (source times
 * floored to the clip's rate), as full-range JPEGs named by frame number in `work/v<id>/`. Undefined when ffmpeg
 * cannot read the clip. Frames past its end are simply not there (the page draws nothing, as After Effects does).
 */
async function extractFrames(
  run: PrepareIo,
  id: number,
  file: string,
  sourceTimes: number[],
  work: string,
): Promise<{ rate: number; first: number; count: number } | undefined> {
  const rate =
    (await probe(run.tools, file).then(
      (info) => info.video?.fps,
      () => undefined,
    )) || 30;
  const wanted = sourceTimes.length ? sourceTimes.map((t) => Math.max(0, Math.floor(t * rate + 1e-6))) : [0];
  const first = Math.min(...wanted);
  const last = Math.max(...wanted);
  const dir = path.join(work, `v${id}`);
  await fsp.mkdir(dir);
  try {
    await runFfmpeg(
      run.tools,
      [
        '-loglevel',
        'error',
        '-ss',
        String(first / rate),
        '-i',
        file,
        '-an',
        '-sn',
        '-vf',
        // yuvj420p: full range, as a JPEG (JFIF) is read; the scaler converts the video's range to it.
        `fps=${rate},format=yuvj420p`,
        '-frames:v',
        String(last - first + 1),
        '-q:v',
        '2',
        '-threads',
        '1',
        '-start_number',
        String(first),
        '-f',
        'image2',
        path.join(dir, '%06d.jpg'),
      ],
      { signal: run.signal, timeoutMs: 10 * 60_000 },
    );
  } catch (err) {
    if (run.signal.aborted) throw err;
    return undefined;
  }
  const count = (await fsp.readdir(dir)).filter((n) => n.endsWith('.jpg')).length;
  return count ? { rate, first, count } : undefined;
}
