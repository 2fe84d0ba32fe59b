import path from 'node:path';
import { filenameFromTitle } from '../files/names.js';
import { frameCount } from '../render/capture.js';
import { renderPage } from '../render/render-page.js';
import type { JobContext, JobOutcome } from '../jobs/runner.js';
import { probe } from '../tools/ffprobe.js';
import type { Tools } from '../tools/locate.js';
import { PRESET_SIZES } from '../timeline/render-options.js';
import {
  encodersFor,
  prepareLayers,
  prepareScreenImage,
  prepareScreenFrames,
  requireEncoders,
  screenKind,
} from './media.js';
import { drawDevice } from './devices.js';
import { planFrames, sceneHtml, type Frame, type SceneInputs } from './scene.js';
import type { MockupFormat, ProjectStateT, SizePreset } from './schemas.js';
import { Internal } from '../errors.js';

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

/** Part of the progress bar taken by preparing the inputs, before the first frame. */
const PREPARE_SHARE = 0.05;

/**
 * What was asked for alpha must be in the file: VP9 in WebM carries it as a side stream flagged `alpha_mode=1`
 * (ffprobe's native decoder reports yuv420p), ProRes 4444 as a yuva pixel format. Encoders that cannot keep alpha
 * only warn and drop it, so the file is checked, not the command.
 */
async function checkOutput(
  tools: Tools,
  file: string,
  p: MockupRenderParams,
  width: number,
  height: number,
): Promise<void> {
  const info = await probe(tools, file);
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
 * The render job, a pipeline whose cleanup always runs: take the project's files (declared inputs), check the
 * encoders, prepare the screen video and blurred backgrounds in the job's scratch folder, build the page, capture
 * every frame on the virtual clock into ffmpeg (`renderPage`), check the file, and hand it back as a video for the
 * board. It uses only its job, so render workers run it as well.
 */
export async function renderMockup(job: JobContext<MockupRenderParams>): Promise<JobOutcome> {
  const p = job.params;
  const { tools } = job.env;
  const { w: width, h: height } = PRESET_SIZES[p.size_preset];
  const frame: Frame = {
    width,
    height,
    fps: p.fps,
    frames: frameCount(p.fps, p.project.duration_seconds),
    transparent: p.transparent,
  };
  const screenUrl = p.project.screen_source_url ?? undefined;
  const screenFile = screenUrl ? job.input(screenUrl) : undefined;
  const kind = screenFile ? await screenKind(tools, screenFile, screenUrl!) : undefined;
  await requireEncoders(tools, encodersFor(p.format, p.transparent, kind === 'video'));

  const out = await job.output(p.boardId, filenameFromTitle(p.project.name, 'mockup', p.format));
  const work = await job.scratch();
  // The render's limit bounds ffmpeg and the page alike: at least 30 minutes, 10 s a frame for long renders.
  const timeoutMs = Math.max(30 * 60_000, frame.frames * 10_000);
  const env = { tools, pool: job.env.browsers };
  await renderPage(env, { signal: job.signal, timeoutMs, what: 'render', failedAsRender: true }, async (page) => {
    // The page reads the files prepared for it and nothing else: never the media root.
    const served = (file: string) => page.files.serve(file);
    const { looks, zoom } = planFrames(p.project, frame);
    const layers = await prepareLayers(looks, (url) => job.input(url), frame, work);
    let screen: SceneInputs['screen'] = null;
    if (screenFile && kind) {
      // The screen's size comes from the drawing: the source is cover-cropped and scaled to it once, here, rather than
      // by the browser on every raster.
      const biggest = drawDevice(p.project.device, width, height, () => '').screens.reduce((a, s) =>
        s.w * s.h > a.w * a.h ? s : a,
      );
      const scale = Math.min(Math.max(zoom, 1), 2, 2160 / Math.max(biggest.w, biggest.h));
      const size = { width: Math.round(biggest.w * scale), height: Math.round(biggest.h * scale) };
      if (kind === 'video') {
        const frames = await prepareScreenFrames(tools, screenFile, path.join(work, 'screen.mjpeg'), {
          ...size,
          fps: p.fps,
          frames: frame.frames,
          signal: page.signal,
        });
        screen = { kind, url: served(frames.file), offsets: frames.offsets, chunks: frames.chunks };
      } else {
        const file = path.join(work, 'screen.png');
        await prepareScreenImage(screenFile, file, size);
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
    let captured = 0;
    await page.video(
      { html, width, height, fps: p.fps, transparent: p.transparent, ownPage: true },
      {
        fps: p.fps,
        format: p.format,
        alpha: p.transparent,
        // Lossless frames only where the file keeps alpha; otherwise the encoder is lossy anyway.
        frames: p.transparent ? 'png' : 'jpeg',
        output: out.temp,
        frameCount: frame.frames,
      },
      () => job.progress(PREPARE_SHARE + ((1 - PREPARE_SHARE) * ++captured) / frame.frames),
    );
    await checkOutput(tools, out.temp, p, width, height);
  });
  // Handed back, not committed: the runner adds it to the board (and removes it when the job fails or is cancelled).
  return {
    output: {
      file: out,
      element: {
        type: 'video',
        data: {
          source: 'mockup-render',
          mockup_project_id: p.projectId,
          render_job_id: job.id,
          render: { width, height, fps: p.fps, frames: frame.frames, format: p.format, transparent: p.transparent },
        },
      },
    },
  };
}
