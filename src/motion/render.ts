import fsp from 'node:fs/promises';
import path from 'node:path';
import { ToolMissing, Unavailable, Unprocessable } from '../errors.js';
import { asRenderFailure } from '../render/render-page.js';
import { filenameFromTitle } from '../files/names.js';
import type { Element } from '../boards/schemas.js';
import type { JobContext, JobOutcome } from '../jobs/runner.js';
import { audioArgs, containerArgs, videoArgs } from '../render/encoders.js';
import { runFfmpeg } from '../tools/ffmpeg.js';
import { probe } from '../tools/ffprobe.js';
import { aerenderArgs, runAerender } from './aerender.js';
import { jobFileName, urlFileName, type OutputFormat, type RenderPlan } from './plan.js';
import { generateScript } from './script.js';

export const MOTION_RENDER_JOB = 'motion.render';

export interface MotionRenderParams {
  plan: RenderPlan;
  /** MOTION_RENDER_STALL_SECONDS of the service, which travels with the job to whichever machine renders it. */
  stallSeconds: number;
}

declare module '../jobs/kinds.js' {
  interface JobKinds {
    'motion.render': MotionRenderParams;
  }
}

export interface MotionRenderResult {
  element: Element;
  url: string;
}

/** Share of the progress bar aerender's part takes; the transcode takes the rest. */
const RENDER_SHARE = 0.9;
/** aerender writes what its output module says; AE 2022+ writes .mov even when asked for .avi (nexrender notes). */
const AE_OUTPUT_EXTENSIONS = ['.mov', '.avi', '.mp4', '.mxf'];

/**
 * The transcode of aerender's output, from the encoder table (src/render/encoders.ts): H.264 at its default crf 18,
 * VP9 at 32 with Opus, ProRes 422 HQ with PCM (a master for editors).
 */
const ENCODE: Record<OutputFormat, { ext: string; args: string[] }> = {
  mp4: { ext: 'mp4', args: [...videoArgs({ codec: 'h264' }), ...containerArgs('mp4'), ...audioArgs('aac')] },
  webm: { ext: 'webm', args: [...videoArgs({ codec: 'vp9' }), ...audioArgs('opus')] },
  mov: { ext: 'mov', args: [...videoArgs({ codec: 'prores', profile: '3' }), ...audioArgs('pcm')] },
};

/** Frames the render covers: the -s/-e range, else the whole composition at the (possibly overridden) rate. */
export function renderFrames(plan: RenderPlan): { frames: number; fps: number } {
  const fps = plan.overrides.fps ?? plan.composition.frameRate;
  const all = Math.max(1, Math.round(plan.composition.duration * fps));
  const start = plan.startFrame ?? 0;
  const end = Math.min(plan.endFrame ?? all - 1, all - 1);
  return { frames: Math.max(1, end - start + 1), fps };
}

/** The files a render reads, all `/media` URLs: the project, the board files its edits use, the footage it shows. */
export const motionRenderInputs = ({ plan }: MotionRenderParams): string[] => [
  plan.project.url,
  ...plan.media.map((m) => m.url),
  ...plan.add.flatMap((a) => (a.url ? [a.url] : [])),
  ...plan.footage.map((f) => f.url),
];

/** aerender on the machine that runs the job (its own AERENDER_PATH or install); missing there, another may have it. */
async function localAerender(job: JobContext<MotionRenderParams>): Promise<string> {
  const tools = job.env.tools;
  try {
    return (await tools.require('aerender')).path;
  } catch (err) {
    if (!(err instanceof ToolMissing)) throw err;
    // Installed since it was last looked for: found without a restart.
    tools.refresh('aerender');
    const again = await tools.info('aerender');
    if (again.found && again.path) return again.path;
    throw new Unavailable(
      'motion_editor_missing',
      'After Effects (aerender) was not found on the machine that took the render: install After Effects there or set AERENDER_PATH',
    );
  }
}

/**
 * One render, as stages whose cleanup always runs: copy the project, its new media and (where the job's files are
 * not where the project says, as on a render worker) its footage into the job's scratch folder (the originals are
 * never touched), write the script, run this machine's aerender on the copy, check the output is whole, transcode
 * it into the job's output file and hand it back (the runner, or the service for a worker, adds it to the board).
 * Portable: it uses only its job; the scratch folder goes away whatever happens.
 */
export async function renderMotion(job: JobContext<MotionRenderParams>): Promise<JobOutcome> {
  const { plan } = job.params;
  const tools = job.env.tools;
  const aerender = await localAerender(job);
  const work = await job.scratch();
  const name = filenameFromTitle(
    `${path.parse(plan.project.name).name} - ${plan.composition.name}`,
    'motion',
    ENCODE[plan.outputFormat].ext,
  );
  try {
    await fsp.mkdir(path.join(work, 'media'), { recursive: true });
    const out = await job.output(plan.boardId, name);
    // 1. prepare: copies only (a clone where the file system can, as cheap as a link and as safe as a copy)
    const copy = (from: string, to: string) =>
      fsp.copyFile(from, to, fsp.constants.COPYFILE_EXCL | fsp.constants.COPYFILE_FICLONE);
    const project = path.join(work, `project${path.extname(urlFileName(plan.project.url)).toLowerCase()}`);
    await copy(job.input(plan.project.url), project);
    const copies = new Map<string, string>();
    const copyOf = async (url: string) => {
      let c = copies.get(url);
      if (!c) {
        c = path.join(work, 'media', jobFileName(copies.size, urlFileName(url)));
        await copy(job.input(url), c);
        copies.set(url, c);
      }
      return c;
    };
    const media = [];
    for (const m of plan.media) media.push({ layer: m.layer, file: await copyOf(m.url) });
    const add = [];
    for (const { url, ...a } of plan.add) add.push(url ? { ...a, file: await copyOf(url) } : a);
    // Footage keeps its file name in a folder of its own (an unnamed item is named after its file, as are layers
    // and expressions that refer to it); where the job's file is where the project says (on the service), no relink.
    const relink = [];
    for (const [i, f] of plan.footage.entries()) {
      const local = job.input(f.url);
      if (local === f.path) continue;
      const dir = path.join(work, 'footage', String(i + 1));
      await fsp.mkdir(dir, { recursive: true });
      const file = path.join(dir, urlFileName(f.url));
      await copy(local, file);
      relink.push({ id: f.id, file });
    }
    const script = path.join(work, 'edits.jsx');
    await fsp.writeFile(
      script,
      generateScript({
        composition: plan.composition.name,
        layerNames: plan.composition.layerNames,
        relink,
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
      binary: aerender,
      args: aerenderArgs({
        project,
        comp: plan.composition.name,
        output,
        script,
        startFrame: plan.startFrame,
        endFrame: plan.endFrame,
      }),
      totalFrames: frames,
      stallMs: job.params.stallSeconds * 1000,
      signal: job.signal,
      onProgress: (f) => job.progress(f * RENDER_SHARE),
    });
    // 3. check: exit 0 proves nothing (nexrender: missing and truncated files after a crash)
    const rendered = await findOutput(output);
    if (!rendered)
      throw new Unprocessable('render_truncated', 'aerender exited without error but wrote no output file');
    const info = await probe(tools, rendered).catch((err: unknown) => {
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
      tools,
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
    // 5. hand the file back: the runner (or the service, from a worker) adds it to the board, or removes it
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
    throw asRenderFailure(err, 'Transcoding the render failed');
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
