import fsp from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import type { AppContext } from '../context.js';
import { kindOfFile } from '../files/media-types.js';
import { ToolFailed } from '../errors.js';
import { badRequest } from '../http/errors.js';
import { VIDEO_ENCODERS } from '../render/encoders.js';
import { runFfmpeg } from '../tools/ffmpeg.js';
import { probe } from '../tools/ffprobe.js';
import type { Tools } from '../tools/locate.js';
import { runFile } from '../tools/process.js';
import { layerKey, type FrameLook } from './scene.js';
import type { MockupFormat, ProjectStateT } from './schemas.js';
import { Unavailable } from '../errors.js';

/** A board file the project uses, where it is named in the project. */
export interface MediaRef {
  url: string;
  field: string;
}

export interface ResolvedRef extends MediaRef {
  path: string;
}

/** Every board file the project refers to: the screen source and background images (base and keyframes). */
export function mediaRefs(project: ProjectStateT): MediaRef[] {
  const refs: MediaRef[] = [];
  if (project.screen_source_url) refs.push({ url: project.screen_source_url, field: 'screen_source_url' });
  if (project.background.params.url) refs.push({ url: project.background.params.url, field: 'background.params.url' });
  project.keyframes.forEach((k, i) => {
    const url = k.background?.params?.url;
    if (url) refs.push({ url, field: `keyframes.${i}.background.params.url` });
  });
  return refs;
}

/** Resolves every file of the project inside the board's folder; a missing one is a 400 naming the field and url. */
export async function resolveRefs(
  ctx: AppContext,
  boardId: string,
  project: ProjectStateT,
): Promise<Map<string, ResolvedRef>> {
  const out = new Map<string, ResolvedRef>();
  for (const ref of mediaRefs(project)) {
    if (out.has(ref.url)) continue;
    let resolved;
    try {
      resolved = await ctx.media.resolveUrl(ref.url);
    } catch (err) {
      throw badRequest(
        `${ref.field}: no media file at ${ref.url} (${err instanceof Error ? err.message : String(err)})`,
        { field: ref.field, url: ref.url },
      );
    }
    if (resolved.boardId !== boardId)
      throw badRequest(`${ref.field}: ${ref.url} is not a file of board ${boardId}`, {
        field: ref.field,
        url: ref.url,
      });
    out.set(ref.url, { ...ref, path: resolved.path });
  }
  return out;
}

const encoderLists = new Map<string, Promise<string>>();

/** The encoder names this ffmpeg build lists (asked once per binary). */
function encodersOf(ffmpegPath: string): Promise<string> {
  let list = encoderLists.get(ffmpegPath);
  if (!list) {
    list = runFile(ffmpegPath, ['-hide_banner', '-encoders'], { timeoutMs: 30_000, maxBuffer: 4 * 1024 * 1024 }).then(
      (r) => r.stdout,
    );
    list.catch(() => encoderLists.delete(ffmpegPath));
    encoderLists.set(ffmpegPath, list);
  }
  return list;
}

/** Encoders a render needs: the output's, and JPEG for the screen video's frames. */
export function encodersFor(format: MockupFormat, transparent: boolean, videoScreen: boolean): string[] {
  const main = VIDEO_ENCODERS[format === 'webm' ? 'vp9' : format === 'mov' && transparent ? 'prores' : 'h264'];
  return videoScreen ? [main, 'mjpeg'] : [main];
}

/** Refuses (503, naming the build) a render the installed ffmpeg cannot encode, rather than writing a wrong file. */
export async function requireEncoders(tools: Tools, names: string[]): Promise<void> {
  const ffmpeg = await tools.require('ffmpeg');
  const list = await encodersOf(ffmpeg.path);
  const missing = names.filter((n) => !new RegExp(`^\\s*V\\S*\\s+${n.replace(/-/g, '\\-')}\\s`, 'm').test(list));
  if (missing.length) {
    throw new Unavailable(
      'tool_unsupported',
      `The ffmpeg at ${ffmpeg.path} has no ${missing.join(', ')} encoder, which this render needs; install a build that has it or set FFMPEG_PATH`,
      {
        tool: 'ffmpeg',
        missing,
      },
    );
  }
}

export interface ScreenAsset {
  kind: 'image' | 'video';
  /** Path of the file the page loads (the original image, or the prepared video). */
  path: string;
}

/** A chunk of screen frames the page asks for at once holds at most this many frames and bytes. */
const CHUNK_FRAMES = 30;
const CHUNK_BYTES = 4 * 1024 * 1024;

/** The screen video's frames, JPEGs back to back in one file, as the page reads them. */
export interface ScreenFrames {
  file: string;
  /** Byte offset of each frame in the file, and the file's size last (frames + 1 entries). */
  offsets: number[];
  /** First frame of each chunk: the page fetches a chunk with one range request and decodes its frames one by one. */
  chunks: number[];
}

/**
 * The screen video, prepared once for the whole render as one JPEG per output frame: looped to the mockup's
 * duration, frame k showing the source at k / fps, cover-cropped to the screen's aspect at the size it is drawn at
 * its largest. The frames are then joined into `out` (offsets kept): the page loads frame k by its index and draws
 * it, with a chunk of frames per request (each request goes through the sandbox's DevTools interception). No <video>
 * is seeked in Chromium (a seek runs through its media pipeline, in both of the renderer's pages).
 */
export async function prepareScreenFrames(
  tools: Tools,
  source: string,
  out: string,
  o: { width: number; height: number; fps: number; frames: number; signal: AbortSignal },
): Promise<ScreenFrames> {
  const even = (n: number) => Math.max(2, 2 * Math.round(n / 2));
  const w = even(o.width);
  const h = even(o.height);
  const duration = o.frames / o.fps;
  const dir = `${out}.frames`;
  await fsp.mkdir(dir, { recursive: true });
  try {
    await runFfmpeg(
      tools,
      [
        '-loglevel',
        'error',
        '-stream_loop',
        '-1',
        '-i',
        source,
        '-t',
        String(duration),
        '-an',
        '-sn',
        '-vf',
        // yuvj420p: full range, as a JPEG (JFIF) is read; the scaler converts the video's range to it.
        `fps=${o.fps},scale=${w}:${h}:force_original_aspect_ratio=increase:flags=bicubic,crop=${w}:${h},setsar=1,format=yuvj420p`,
        '-frames:v',
        String(o.frames),
        '-c:v',
        'mjpeg',
        '-q:v',
        '2',
        '-threads',
        '1',
        '-fflags',
        '+bitexact',
        '-flags:v',
        '+bitexact',
        '-map_metadata',
        '-1',
        '-start_number',
        '0',
        '-f',
        'image2',
        path.join(dir, '%05d.jpg'),
      ],
      { signal: o.signal, durationSeconds: duration, timeoutMs: Math.max(10 * 60_000, duration * 30_000) },
    );
    const names = (await fsp.readdir(dir)).filter((f) => f.endsWith('.jpg')).sort();
    if (names.length === 0)
      throw new ToolFailed('render_failed', `no frame of the screen video ${path.basename(source)} was decoded`);
    const offsets = [0];
    const chunks: number[] = [];
    const joined = await fsp.open(out, 'w');
    try {
      for (const [i, name] of names.entries()) {
        const bytes = await fsp.readFile(path.join(dir, name));
        const start = offsets[i];
        const chunkStart = chunks.at(-1);
        if (
          chunkStart === undefined ||
          i - chunkStart >= CHUNK_FRAMES ||
          start + bytes.length - offsets[chunkStart] > CHUNK_BYTES
        )
          chunks.push(i);
        await joined.write(bytes);
        offsets.push(start + bytes.length);
      }
    } finally {
      await joined.close();
    }
    return { file: out, offsets, chunks };
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

/** The screen image cover-cropped to the screen's pixel size (libvips, off the event loop), as a lossless PNG. */
export async function prepareScreenImage(
  source: string,
  out: string,
  size: { width: number; height: number },
): Promise<void> {
  await sharp(source, { limitInputPixels: 268_402_689 })
    .rotate()
    .resize(size.width, size.height, { fit: 'cover' })
    .png({ compressionLevel: 1 })
    .toFile(out);
}

/** Image or video, from the file's name and, for what the name does not settle, ffprobe. */
export async function screenKind(tools: Tools, file: string, url: string): Promise<'image' | 'video'> {
  const kind = kindOfFile(path.basename(file));
  if (kind === 'image' || kind === 'video') return kind;
  const info = await probe(tools, file).catch(() => undefined);
  if (!info?.video)
    throw badRequest(`screen_source_url: ${url} is neither an image nor a video`, { field: 'screen_source_url', url });
  return info.duration && info.duration > 0 ? 'video' : 'image';
}

/**
 * The background images each frame needs (`fileOf` gives the local file of a media URL), cover-fitted to the frame
 * and blurred once per distinct depth-of-field level (libvips, off the event loop); written as JPEG into `dir`.
 * Answers the file of each layerKey.
 */
export async function prepareLayers(
  looks: FrameLook[],
  fileOf: (url: string) => string,
  size: { width: number; height: number },
  dir: string,
): Promise<Map<string, string>> {
  const wanted = new Map<string, { url: string; blur: number }>();
  for (const l of looks)
    if (l.background.kind === 'image') wanted.set(layerKey(l.background.url, l.background.blur), l.background);
  const out = new Map<string, string>();
  let i = 0;
  for (const [key, { url, blur }] of wanted) {
    const file = path.join(dir, `background-${i++}.jpg`);
    let img = sharp(fileOf(url), { limitInputPixels: 268_402_689 })
      .rotate()
      .resize(size.width, size.height, { fit: 'cover' });
    // libvips' Gaussian takes sigma, as CSS blur() does; below 0.3 it refuses (and nothing would show anyway).
    if (blur >= 0.3) img = img.blur(blur);
    await img.flatten({ background: '#000000' }).jpeg({ quality: 92, chromaSubsampling: '4:4:4' }).toFile(file);
    out.set(key, file);
  }
  return out;
}
