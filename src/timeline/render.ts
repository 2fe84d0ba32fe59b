import { asRenderFailure } from '../render/render-page.js';
import { filenameFromTitle } from '../files/names.js';
import type { JobContext, JobOutcome } from '../jobs/runner.js';
import { runFfmpeg } from '../tools/ffmpeg.js';
import { probe } from '../tools/ffprobe.js';
import { compilePlan, type ClipInput } from './compile.js';
import type { ProjectData } from './project.js';
import { outputSize, type RenderSettings } from './render-options.js';
import { buildRenderPlan, timelineError, type Layer } from './timeline.js';

export const RENDER_JOB = 'timeline.render';

export interface RenderParams extends RenderSettings {
  boardId: string;
  projectId: string;
  projectName: string;
  /** Snapshot taken when the render was asked for: later saves do not change a queued render. */
  data: ProjectData;
}

declare module '../jobs/kinds.js' {
  interface JobKinds {
    'timeline.render': RenderParams;
  }
}

/** The media URLs a render reads: the clips of its visible layers (resolved by the job runner). */
export const renderInputs = (p: RenderParams): string[] =>
  buildRenderPlan(p.data).layers.map((l) => l.clip.url as string);

/** Probes the media of every clip the layers use; a missing or unreadable file names the item. */
async function probeInputs(job: JobContext<RenderParams>, layers: Layer[]): Promise<Record<string, ClipInput>> {
  const inputs: Record<string, ClipInput> = {};
  for (const layer of layers) {
    if (inputs[layer.clipId]) continue;
    const url = layer.clip.url as string;
    let file: string;
    try {
      file = job.input(url);
    } catch (err) {
      throw timelineError(
        `${layer.label}: media ${url} of clip "${layer.clipId}" is missing (${err instanceof Error ? err.message : String(err)})`,
      );
    }
    const info = await probe(job.env.tools, file).catch((err: unknown) => {
      throw timelineError(
        `${layer.label}: media ${url} cannot be read (${err instanceof Error ? err.message : String(err)})`,
      );
    });
    if (!info.video) throw timelineError(`${layer.label}: media ${url} has no picture`);
    const quarter = Math.abs(info.video.rotation ?? 0) % 180 === 90;
    const still =
      layer.clip.mediaType === 'image' || /^(image2|png_pipe|jpeg_pipe|webp_pipe|gif)/.test(info.formatName);
    inputs[layer.clipId] = {
      path: file,
      width: quarter ? info.video.height : info.video.width,
      height: quarter ? info.video.width : info.video.height,
      hasAudio: !!info.audio,
      still,
    };
  }
  return inputs;
}

/**
 * The render job: checks the snapshot, probes the media the runner resolved, runs the one compiled ffmpeg command
 * into the output file the runner reserved in the board folder (progress from ffmpeg's own progress output) and
 * hands it back; the runner gives it a unique name and adds it to the board as a video element. A cancelled or
 * failed render leaves no partial file behind.
 */
export async function renderProject(job: JobContext<RenderParams>): Promise<JobOutcome> {
  const p = job.params;
  const plan = buildRenderPlan(p.data);
  if (plan.layers.length === 0) throw timelineError('the timeline has no visible items to render');
  const inputs = await probeInputs(job, plan.layers);
  const size = outputSize(p.size_preset, p.data.videoSize);
  const out = await job.output(p.boardId, filenameFromTitle(p.projectName, 'render', p.format));
  const compiled = compilePlan(plan, inputs, {
    path: out.temp,
    width: size.w,
    height: size.h,
    fps: p.fps,
    format: p.format,
    codec: p.codec,
    crf: p.crf,
  });
  try {
    await runFfmpeg(job.env.tools, compiled.args, {
      signal: job.signal,
      durationSeconds: compiled.duration,
      timeoutMs: Math.max(30 * 60_000, compiled.duration * 60_000),
      onProgress: (pr) => {
        if (pr.fraction !== undefined) job.progress(pr.fraction);
      },
    });
    // Handed back, not committed: the runner adds it to the board (and removes it when the job fails or is cancelled).
    return {
      output: {
        file: out,
        element: { type: 'video', data: { video_project_id: p.projectId, render_job_id: job.id } },
        data: { filter_complex: compiled.graph },
      },
    };
  } catch (err) {
    throw asRenderFailure(err, 'Render failed');
  }
}
