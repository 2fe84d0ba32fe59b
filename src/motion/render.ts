import fsp from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../context.js';
import { DomainError, Unprocessable } from '../errors.js';
import { filenameFromTitle } from '../files/names.js';
import type { JobContext, JobOutcome } from '../jobs/runner.js';
import { runFfmpeg } from '../tools/ffmpeg.js';
import { probe } from '../tools/ffprobe.js';
import { aerenderArgs, runAerender } from './aerender.js';
import { jobFileName, type OutputFormat, type RenderPlan } from './plan.js';
import { generateScript } from './script.js';

export const MOTION_RENDER_JOB = 'motion.render';

export interface MotionRenderParams {
  plan: RenderPlan;
  /** Located when the render was asked for (the request fails with motion_editor_missing otherwise). */
  aerender: string;
}

declare module '../jobs/kinds.js' {
  interface JobKinds {
    'motion.render': MotionRenderParams;
  }
}

export interface MotionRenderResult {
  element: Record<string, unknown>;
  url: string;
}

/** Share of the progress bar aerender's part takes; the transcode takes the rest. */
const RENDER_SHARE = 0.9;
/** aerender writes what its output module says; AE 2022+ writes .mov even when asked for .avi (nexrender notes). */
const AE_OUTPUT_EXTENSIONS = ['.mov', '.avi', '.mp4', '.mxf'];

const ENCODE: Record<OutputFormat, { ext: string; args: string[] }> = {
  mp4: {
    ext: 'mp4',
    args: [
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-crf',
      '18',
      '-pix_fmt',
      'yuv420p',
      '-movflags',
      '+faststart',
      '-c:a',
      'aac',
      '-b:a',
      '192k',
    ],
  },
  webm: {
    ext: 'webm',
    args: [
      '-c:v',
      'libvpx-vp9',
      '-b:v',
      '0',
      '-crf',
      '32',
      '-deadline',
      'good',
      '-cpu-used',
      '4',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'libopus',
    ],
  },
  mov: { ext: 'mov', args: ['-c:v', 'prores_ks', '-profile:v', '3', '-pix_fmt', 'yuv422p10le', '-c:a', 'pcm_s16le'] },
};

/** Frames the render covers: the -s/-e range, else the whole composition at the (possibly overridden) rate. */
export function renderFrames(plan: RenderPlan): { frames: number; fps: number } {
  const fps = plan.overrides.fps ?? plan.composition.frameRate;
  const all = Math.max(1, Math.round(plan.composition.duration * fps));
  const start = plan.startFrame ?? 0;
  const end = Math.min(plan.endFrame ?? all - 1, all - 1);
  return { frames: Math.max(1, end - start + 1), fps };
}

/**
 * One render, as stages whose cleanup always runs: copy the project and its new media into a job folder (the
 * original is never touched), write the script, run aerender on the copy, check the output is whole, transcode it
 * into the output file the runner reserved in the board folder and hand it back (the runner adds it to the board).
 * The job folder goes away whatever happens.
 */
export async function renderMotion(
  ctx: AppContext,
  job: JobContext<MotionRenderParams>,
  stallMs: number,
): Promise<JobOutcome> {
  const { plan } = job.params;
  const work = path.join(ctx.config.dataDir, 'tmp', `motion-${job.id}`);
  const name = filenameFromTitle(
    `${path.parse(plan.project.name).name} - ${plan.composition.name}`,
    'motion',
    ENCODE[plan.outputFormat].ext,
  );
  try {
    await fsp.mkdir(path.join(work, 'media'), { recursive: true });
    const out = await job.output(plan.boardId, name);
    // 1. prepare: copies only
    const project = path.join(work, `project${path.extname(plan.project.path).toLowerCase()}`);
    await fsp.copyFile(plan.project.path, project, fsp.constants.COPYFILE_EXCL);
    const copies = new Map<string, string>();
    const copyOf = async (file: string) => {
      let c = copies.get(file);
      if (!c) {
        c = path.join(work, 'media', jobFileName(copies.size, file));
        await fsp.copyFile(file, c, fsp.constants.COPYFILE_EXCL);
        copies.set(file, c);
      }
      return c;
    };
    const media = [];
    for (const m of plan.media) media.push({ layer: m.layer, file: await copyOf(m.file) });
    const add = [];
    for (const a of plan.add) add.push(a.file ? { ...a, file: await copyOf(a.file) } : a);
    const script = path.join(work, 'edits.jsx');
    await fsp.writeFile(
      script,
      generateScript({
        composition: plan.composition.name,
        layerNames: plan.composition.layerNames,
        text: plan.text,
        media,
        expressions: plan.expressions,
        add,
        ...plan.overrides,
      }),
    );
    // 2. render
    const output = path.join(work, 'render.mov');
    const { frames, fps } = renderFrames(plan);
    await runAerender({
      binary: job.params.aerender,
      args: aerenderArgs({
        project,
        comp: plan.composition.name,
        output,
        script,
        startFrame: plan.startFrame,
        endFrame: plan.endFrame,
      }),
      totalFrames: frames,
      stallMs,
      signal: job.signal,
      onProgress: (f) => job.progress(f * RENDER_SHARE),
    });
    // 3. check: exit 0 proves nothing (nexrender: missing and truncated files after a crash)
    const rendered = await findOutput(output);
    if (!rendered)
      throw new Unprocessable('render_truncated', 'aerender exited without error but wrote no output file');
    const info = await probe(ctx.tools, rendered).catch((err: unknown) => {
      throw new Unprocessable(
        'render_truncated',
        `aerender's output cannot be read: ${err instanceof Error ? err.message : String(err)}`,
      );
    });
    const expected = frames / fps;
    const got = info.duration ?? 0;
    if (!info.video || got < expected - 1 / fps - 1e-3) {
      throw new Unprocessable(
        'render_truncated',
        `aerender's output is ${got.toFixed(3)} s long, the render should be ${expected.toFixed(3)} s (${frames} frames at ${Math.round(fps * 1000) / 1000} fps)`,
      );
    }
    // 4. encode into the board folder
    await runFfmpeg(
      ctx.tools,
      ['-i', rendered, '-map', '0:v:0', '-map', '0:a:0?', ...ENCODE[plan.outputFormat].args, out.temp],
      {
        signal: job.signal,
        durationSeconds: got,
        timeoutMs: Math.max(30 * 60_000, got * 60_000),
        onProgress: (p) => {
          if (p.fraction !== undefined) job.progress(RENDER_SHARE + p.fraction * (1 - RENDER_SHARE));
        },
      },
    );
    // 5. hand the file back: the runner adds it to the board, or removes it if the job ends otherwise
    const data = {
      motion_project_url: plan.project.url,
      ...(plan.project.elementId ? { motion_project_element_id: plan.project.elementId } : {}),
      motion_composition: plan.composition.name,
      render_job_id: job.id,
    };
    return {
      output: {
        file: out,
        element: { type: 'video', data },
      },
    };
  } catch (err) {
    if (err instanceof DomainError && err.code === 'ffmpeg_failed')
      throw new Unprocessable('render_failed', `Transcoding the render failed: ${err.message}`);
    throw err;
  } finally {
    await fsp.rm(work, { recursive: true, force: true });
  }
}

async function findOutput(output: string): Promise<string | undefined> {
  const base = output.slice(0, -path.extname(output).length);
  for (const ext of AE_OUTPUT_EXTENSIONS) {
    const candidate = base + ext;
    const st = await fsp.stat(candidate).catch(() => undefined);
    if (st?.isFile() && st.size > 0) return candidate;
  }
  return undefined;
}
