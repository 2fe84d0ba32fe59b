import fsp from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { kindOfFile } from '../../files/media-types.js';
import { runFfmpeg } from '../../tools/ffmpeg.js';
import { probe } from '../../tools/ffprobe.js';
import type { DisplayFootage, DisplayGroup, DisplayList, DisplayNode, DisplayText } from '../scene/display.js';
import type { SampleInput } from './sample.js';
import { sample } from './sampling.js';
import type { Approximation } from '../schemas.js';
import { findFont } from './fonts.js';
import type { PreviewParams, PreviewRun } from './job.js';
import { PREVIEW_LIMITS as L } from './limits.js';
import { WORK_URL } from './page.js';

/**
 * A footage leaf as the page draws it: `src` is the picture to draw; without it the labelled placeholder, or nothing
 * when `blank` (a video past its last frame).
 */
export type PageFootage = DisplayFootage & { src?: string; blank?: true };

/** Everything the page needs, prepared in the scratch folder. */
export interface PreparedFrames {
  /** Output frame → index of its display list among the distinct ones. */
  frames: number[];
  /** Composition time of each output frame. */
  times: number[];
  /** The distinct display lists, when they are few enough to go in the page itself (a still). */
  inline?: DisplayList[];
  composition: { width: number; height: number; background: [number, number, number] };
  /** Served URL → local file (display list chunks, pictures, fonts). */
  files: [string, string][];
  /** PostScript name → the CSS family the page draws it with (`loaded`: an @font-face of ours). */
  fonts: Record<string, { family: string; loaded: boolean; url?: string }>;
  /** Pictures that stay for the whole preview (images, not video frames). */
  stills: Record<string, true>;
  approximations: Approximation[];
}

const BROWSER_IMAGES = new Set(['.png', '.jpg', '.jpeg', '.gif', '.webp', '.avif', '.bmp', '.svg']);

/** Yields to the event loop every few milliseconds of sampling, so a long video never holds it. */
function yielder(): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < 10) return;
    await new Promise((r) => setImmediate(r));
    since = performance.now();
  };
}

/** Every node of a display list with the layer group it belongs to (for approximations). */
function walk(node: DisplayNode, fn: (n: DisplayNode, layer?: DisplayGroup) => void, layer?: DisplayGroup): void {
  fn(node, layer);
  if (node.kind !== 'group') return;
  const here = node.layer_index !== undefined ? node : layer;
  for (const c of node.children) walk(c, fn, here);
  if (node.matte) walk(node.matte.node, fn, here);
}

/** The footage item of each media edit: the board file's size, and for a video its duration and rate. */
async function editedFootage(run: PreviewRun, p: PreviewParams): Promise<SampleInput['media']> {
  const out: SampleInput['media'] = [];
  for (const [k, e] of p.media.entries()) {
    const file = run.input(e.url);
    const still = kindOfFile(file) === 'image';
    // An unreadable file keeps a nominal size: it is drawn as a placeholder (frames below), never a failure.
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
 * Decodes the project, applies the edits, samples the display list of every output frame (deduplicated: a still
 * composition is drawn once), finds each footage's picture (image files as they are or converted to PNG; video frames
 * extracted by ffmpeg at the source times the lists ask for), the fonts, and writes the lists in chunks the page
 * fetches. Missing footage and substituted fonts join the approximations.
 */
export async function prepareFrames(
  run: PreviewRun,
  p: PreviewParams,
  work: string,
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
      media: await editedFootage(run, p),
    },
    run.signal,
    (f) => progress(f * 0.5),
  );
  const { distinct, frames, times } = sampled;
  const notes = new Map<string, Approximation>(
    sampled.approximations.map((a) => [`${a.layer_index}|${a.layer}|${a.feature}|${a.detail}`, a]),
  );
  const note = (a: Approximation) => notes.set(`${a.layer_index}|${a.layer}|${a.feature}|${a.detail}`, a);
  const pause = yielder();
  const files: [string, string][] = [];
  const serve = (name: string, file: string) => {
    const url = WORK_URL + encodeURIComponent(name);
    files.push([url, file]);
    return url;
  };

  // Footage: which file each item is, and the pictures the lists need.
  const urls = new Map<number, string>(p.footage.map((f) => [f.id, f.url]));
  for (const f of sampled.footage) if (f.id < 0 && f.path) urls.set(f.id, f.path);
  const stills: Record<string, true> = {};
  const imageUrl = new Map<number, string | null>();
  const videoTimes = new Map<number, Set<number>>();
  const footageById = new Map(sampled.footage.map((f) => [f.id, f]));
  const leaves: { node: PageFootage; layer?: DisplayGroup }[] = [];
  for (const list of distinct)
    walk(list.root, (n, layer) => {
      if (n.kind === 'footage') leaves.push({ node: n, layer });
    });
  let serial = 0;
  const rates = new Map<number, number>();
  const rateOf = async (id: number, file: string) => {
    if (!rates.has(id))
      rates.set(
        id,
        footageById.get(id)?.frameRate ||
          (await probe(run.tools, file).then(
            (info) => info.video?.fps,
            () => undefined,
          )) ||
          30,
      );
    return rates.get(id)!;
  };
  const missing = (node: PageFootage, layer: DisplayGroup | undefined, why: string) => {
    node.media = 'placeholder';
    note({
      ...(layer?.layer_index !== undefined ? { layer_index: layer.layer_index } : {}),
      ...(layer?.layer !== undefined ? { layer: layer.layer } : {}),
      feature: 'missing-footage',
      detail: `${node.name}${node.path ? ` (${node.path})` : ''}: ${why}; drawn as a placeholder`,
    });
  };
  const readable = (file: string) =>
    sharp(file)
      .metadata()
      .then(
        () => true,
        () => false,
      );
  for (const { node, layer } of leaves) {
    const url = urls.get(node.footage_id);
    if (!url || node.media === 'placeholder') {
      missing(
        node,
        layer,
        url ? 'a placeholder in the project' : 'not found in the board, beside the project or in the media root',
      );
      continue;
    }
    const file = run.input(url);
    // The file found decides (a project may name a still where a board file is a video, and the other way round).
    if (kindOfFile(file) !== 'video') {
      if (!imageUrl.has(node.footage_id)) {
        const ext = path.extname(file).toLowerCase();
        let src: string | null = null;
        if (BROWSER_IMAGES.has(ext)) src = (await readable(file)) ? serve(`img-${serial++}${ext}`, file) : null;
        else {
          // TIFF, PSD...: converted once to PNG where libvips reads it.
          const png = path.join(work, `img-${serial}.png`);
          if (
            await sharp(file)
              .png()
              .toFile(png)
              .then(
                () => true,
                () => false,
              )
          )
            src = serve(`img-${serial++}.png`, png);
        }
        imageUrl.set(node.footage_id, src);
        if (src) stills[src] = true;
      }
      const src = imageUrl.get(node.footage_id);
      if (src) node.src = src;
      else missing(node, layer, 'unreadable, or a format the preview cannot read');
      continue;
    }
    const frame = Math.max(0, Math.floor((node.source_time ?? 0) * (await rateOf(node.footage_id, file)) + 1e-6));
    let set = videoTimes.get(node.footage_id);
    if (!set) videoTimes.set(node.footage_id, (set = new Set()));
    set.add(frame);
    (node as PageFootage & { frame?: number }).frame = frame;
  }
  progress(0.6);

  // Video frames: one ffmpeg run per footage over the range of source frames the lists show.
  const unreadable = new Set<number>();
  for (const [id, wanted] of videoTimes) {
    const file = run.input(urls.get(id)!);
    const rate = await rateOf(id, file);
    const first = Math.min(...wanted);
    const last = Math.max(...wanted);
    const dir = path.join(work, `video-${id < 0 ? `e${-id}` : id}`);
    await fsp.mkdir(dir);
    const extracted = runFfmpeg(
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
    // A clip ffmpeg cannot read is drawn missing, never a failed preview.
    if (
      !(await extracted.then(
        () => true,
        (err: unknown) => {
          if (run.signal.aborted) throw err;
          return false;
        },
      ))
    ) {
      unreadable.add(id);
      continue;
    }
    for (const fr of wanted) {
      const name = `${String(fr).padStart(6, '0')}.jpg`;
      const exists = await fsp.stat(path.join(dir, name)).then(
        () => true,
        () => false,
      );
      if (exists) serve(`v${id}-${name}`, path.join(dir, name));
    }
  }
  const servedSet = new Set(files.map(([u]) => u));
  for (const { node, layer } of leaves) {
    const fr = (node as PageFootage & { frame?: number }).frame;
    if (fr === undefined) continue;
    const src = WORK_URL + encodeURIComponent(`v${node.footage_id}-${String(fr).padStart(6, '0')}.jpg`);
    if (unreadable.has(node.footage_id)) missing(node, layer, 'a video ffmpeg cannot read');
    else if (servedSet.has(src)) node.src = src;
    // No frame there: past the end of the file, where After Effects shows nothing either.
    else node.blank = true;
    delete (node as PageFootage & { frame?: number }).frame;
  }
  progress(0.8);

  // Fonts.
  const fonts: PreparedFrames['fonts'] = {};
  const wantedFonts = new Map<string, DisplayGroup | undefined>();
  for (const list of distinct)
    walk(list.root, (n, layer) => {
      if (n.kind === 'text' && !wantedFonts.has((n as DisplayText).font))
        wantedFonts.set((n as DisplayText).font, layer);
    });
  let fontSerial = 0;
  for (const [ps, layer] of wantedFonts) {
    const found = await findFont(ps, run.signal);
    const family = `f${fontSerial}`;
    if (found.file) {
      const url = serve(`font-${fontSerial++}${path.extname(found.file).toLowerCase()}`, found.file);
      fonts[ps] = { family, loaded: true, url };
    } else fonts[ps] = { family: found.family, loaded: false };
    if (!found.exact)
      note({
        ...(layer?.layer_index !== undefined ? { layer_index: layer.layer_index, layer: layer.layer } : {}),
        feature: 'font',
        detail: `${ps} is not installed; drawn with ${found.family}`,
      });
  }

  // The lists: in the page for a single one, else in chunk files fetched as the clock reaches them.
  let inline: DisplayList[] | undefined;
  if (distinct.length === 1) inline = distinct;
  else
    for (let k = 0; k * L.framesPerChunk < distinct.length; k++) {
      const file = path.join(work, `lists-${k}.json`);
      await fsp.writeFile(file, JSON.stringify(distinct.slice(k * L.framesPerChunk, (k + 1) * L.framesPerChunk)));
      serve(`lists-${k}.json`, file);
      await pause();
    }
  progress(1);
  return {
    frames,
    times,
    inline,
    composition: sampled.composition,
    files,
    fonts,
    stills,
    approximations: [...notes.values()],
  };
}
