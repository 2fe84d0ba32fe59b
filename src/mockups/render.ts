import fsp from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../context.js';
import { commitUnique, tempPathIn } from '../files/atomic.js';
import { filenameFromTitle } from '../files/names.js';
import type { CardEnv } from '../html/card-page.js';
import { frameCount, captureVideo } from '../html/render.js';
import type { JobContext, JobOutcome } from '../jobs/runner.js';
import { probe } from '../tools/ffprobe.js';
import { PRESET_SIZES } from '../timeline/render-options.js';
import {
  encodersFor,
  prepareLayers,
  prepareScreenImage,
  prepareScreenFrames,
  requireEncoders,
  resolveRefs,
  screenKind,
} from './media.js';
import { drawDevice } from './devices.js';
import { planFrames, sceneHtml, type Frame, type SceneInputs } from './scene.js';
import type { MockupFormat, ProjectStateT, SizePreset } from './schemas.js';
import { DomainError, Internal, Unprocessable } from '../errors.js';

export const RENDER_JOB = 'mockups.render';

export interface MockupRenderParams {
  boardId: string;
  projectId: string;
  /** Snapshot taken when the render was asked for: later saves do not change a queued render. */
  project: ProjectStateT;
  format: MockupFormat;
  size_preset: SizePreset;
  fps: number;
  transparent: boolean;
}

declare module '../jobs/kinds.js' {
  interface JobKinds {
    'mockups.render': MockupRenderParams;
  }
}

/** Folder under the media root for a render's prepared inputs (screen video, blurred backgrounds), removed after it. */
export const WORK_DIR = 'mockup-renders';
/** Part of the progress bar taken by preparing the inputs, before the first frame. */
const PREPARE_SHARE = 0.05;

/**
 * What was asked for alpha must be in the file: VP9 in WebM carries it as a side stream flagged `alpha_mode=1`
 * (ffprobe's native decoder reports yuv420p), ProRes 4444 as a yuva pixel format. Encoders that cannot keep alpha
 * only warn and drop it, so the file is checked, not the command.
 */
async function checkOutput(
  ctx: AppContext,
  file: string,
  p: MockupRenderParams,
  width: number,
  height: number,
): Promise<void> {
  const info = await probe(ctx.tools, file);
  const v = info.raw.streams?.find((s) => s.codec_type === 'video');
  if (!info.video || info.video.width !== width || info.video.height !== height)
    throw new Error(`the encoded file is not a ${width}x${height} video`);
  if (!p.transparent) return;
  const tags = Object.fromEntries(Object.entries(v?.tags ?? {}).map(([k, val]) => [k.toLowerCase(), val]));
  const alpha = p.format === 'webm' ? tags.alpha_mode === '1' : (info.video.pixFmt ?? '').startsWith('yuva');
  if (!alpha) {
    throw new Internal(
      'alpha_lost',
      `ffmpeg wrote ${p.format} without an alpha channel (${info.video.codec}, ${info.video.pixFmt ?? 'unknown'}); no file was kept`,
    );
  }
}

/**
 * The render job, a pipeline whose cleanup always runs: resolve the project's files, check the encoders, prepare the
 * screen video and blurred backgrounds, build the page, capture every frame on the HTML renderer's virtual clock into
 * ffmpeg, check the file, then give it a unique name in the board folder and add it to the board as a video.
 */
export async function renderMockup(
  ctx: AppContext,
  cardEnv: CardEnv,
  job: JobContext<MockupRenderParams>,
): Promise<JobOutcome> {
  const p = job.params;
  const { w: width, h: height } = PRESET_SIZES[p.size_preset];
  const frame: Frame = {
    width,
    height,
    fps: p.fps,
    frames: frameCount(p.fps, p.project.duration_seconds),
    transparent: p.transparent,
  };
  const files = await resolveRefs(ctx, p.boardId, p.project);
  const screenRef = p.project.screen_source_url ? files.get(p.project.screen_source_url) : undefined;
  const kind = screenRef ? await screenKind(ctx, screenRef.path, screenRef.url) : undefined;
  await requireEncoders(ctx.tools, encodersFor(p.format, p.transparent, kind === 'video'));

  const dir = await ctx.media.boardDir(p.boardId);
  const filename = filenameFromTitle(p.project.name, 'mockup', p.format);
  const temp = tempPathIn(dir, filename);
  const work = path.join(ctx.media.root, WORK_DIR, p.boardId, job.id);
  const served = (file: string) => ctx.media.rootUrl(path.relative(ctx.media.root, file).split(path.sep).join('/'));
  await fsp.mkdir(work, { recursive: true });
  try {
    const { looks, zoom } = planFrames(p.project, frame);
    const layers = await prepareLayers(looks, files, frame, work);
    let screen: SceneInputs['screen'] = null;
    if (screenRef && kind) {
      // The screen's size comes from the drawing: the source is cover-cropped and scaled to it once, here, rather than
      // by the browser on every raster.
      const biggest = drawDevice(p.project.device, width, height, () => '').screens.reduce((a, s) =>
        s.w * s.h > a.w * a.h ? s : a,
      );
      const scale = Math.min(Math.max(zoom, 1), 2, 2160 / Math.max(biggest.w, biggest.h));
      const size = { width: Math.round(biggest.w * scale), height: Math.round(biggest.h * scale) };
      if (kind === 'video') {
        const frames = await prepareScreenFrames(ctx, screenRef.path, path.join(work, 'screen.mjpeg'), {
          ...size,
          fps: p.fps,
          frames: frame.frames,
          signal: job.signal,
        });
        screen = { kind, url: served(frames.file), offsets: frames.offsets, chunks: frames.chunks };
      } else {
        const file = path.join(work, 'screen.png');
        await prepareScreenImage(screenRef.path, file, size);
        screen = { kind, url: served(file) };
      }
    }
    job.progress(PREPARE_SHARE);
    const html = sceneHtml({
      project: p.project,
      frame,
      looks,
      screen,
      layers: new Map([...layers].map(([key, file]) => [key, served(file)])),
    });
    await captureVideo(
      ctx.tools,
      cardEnv,
      { html, width, height, fps: p.fps, transparent: p.transparent },
      {
        fps: p.fps,
        format: p.format,
        alpha: p.transparent,
        output: temp,
        frameCount: frame.frames,
        signal: job.signal,
        timeoutMs: Math.max(30 * 60_000, frame.frames * 10_000),
      },
      (f) => job.progress(PREPARE_SHARE + ((1 - PREPARE_SHARE) * (f + 1)) / frame.frames),
    );
    await checkOutput(ctx, temp, p, width, height);
    const name = await commitUnique(temp, dir, filename);
    const element = await ctx.boards.addElement(p.boardId, {
      type: 'video',
      url: ctx.media.urlFor(p.boardId, name),
      name,
      data: {
        source: 'mockup-render',
        mockup_project_id: p.projectId,
        render_job_id: job.id,
        render: { width, height, fps: p.fps, frames: frame.frames, format: p.format, transparent: p.transparent },
      },
    });
    return { output_url: element.url ?? undefined, result: { element_id: element.id, filename: name } };
  } catch (err) {
    if (err instanceof DomainError && err.code === 'ffmpeg_failed')
      throw new Unprocessable('render_failed', `Render failed: ${err.message}`);
    throw err;
  } finally {
    await fsp.rm(temp, { force: true });
    await fsp.rm(work, { recursive: true, force: true });
  }
}
