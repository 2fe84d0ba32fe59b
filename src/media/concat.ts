import type { AppContext } from '../context.js';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { badRequest } from '../http/errors.js';
import { audioArgs, containerArgs, videoArgs } from '../render/encoders.js';
import { runFfmpeg } from '../tools/ffmpeg.js';
import type { ProbeResult } from '../tools/ffprobe.js';
import type { JobContext, JobOutcome } from '../jobs/runner.js';
import { jobSource, produceOutput, type WithSources } from './new-element.js';
import type { ConcatParams } from './schemas.js';

interface ConcatInput {
  path: string;
  info: ProbeResult;
}

/** Two frame rates closer than this are the same rate (29.97 reported as 30000/1001 or 29.97). */
const FPS_TOLERANCE = 0.01;

/** Codec, size, frame rate, pixel format and audio layout all equal: the streams can be joined without re-encoding. */
function canCopy(inputs: ConcatInput[]): boolean {
  const [first, ...rest] = inputs.map((i) => i.info);
  const v0 = first.video!;
  const a0 = first.audio;
  return rest.every(({ video: v, audio: a }) => {
    if (!v || v.codec !== v0.codec || v.width !== v0.width || v.height !== v0.height || v.pixFmt !== v0.pixFmt)
      return false;
    if (Math.abs((v.fps ?? 0) - (v0.fps ?? 0)) > FPS_TOLERANCE) return false;
    if (!a0 || !a) return !a0 && !a;
    return a.codec === a0.codec && a.channels === a0.channels && a.sampleRate === a0.sampleRate;
  });
}

/** A line of an ffconcat list: single-quoted, with each `'` closed, escaped and reopened. */
export function concatListLine(file: string): string {
  return `file '${file.replace(/'/g, "'\\''")}'`;
}

/** ffmpeg arguments (before the output path) for the stream-copy join through the concat demuxer. */
export function copyArgs(listFile: string, ext: string): string[] {
  const args = ['-f', 'concat', '-safe', '0', '-i', listFile, '-map', '0:v:0', '-map', '0:a:0?', '-c', 'copy'];
  args.push(...containerArgs(ext));
  return args;
}

/**
 * ffmpeg arguments for the re-encoding join: every input is scaled into the first one's frame (letterboxed, square
 * pixels), resampled to its frame rate, and given a stereo 48 kHz track (silence where it has none, padded or cut to its
 * video length so the audio stays in sync), then one concat filter joins them.
 */
export function reencodeArgs(inputs: ConcatInput[]): string[] {
  const first = inputs[0].info.video!;
  const w = first.width - (first.width % 2);
  const h = first.height - (first.height % 2);
  const fps = first.fps ?? 25;
  const withAudio = inputs.some((i) => i.info.audio);
  const args: string[] = [];
  for (const input of inputs) args.push('-i', input.path);
  const chains: string[] = [];
  let pads = '';
  inputs.forEach((input, i) => {
    chains.push(
      `[${i}:v:0]scale=${w}:${h}:force_original_aspect_ratio=decrease,pad=${w}:${h}:(ow-iw)/2:(oh-ih)/2,setsar=1,fps=${fps},format=yuv420p,setpts=PTS-STARTPTS[v${i}]`,
    );
    pads += `[v${i}]`;
    if (!withAudio) return;
    const duration = (input.info.duration ?? 0).toFixed(6);
    chains.push(
      input.info.audio
        ? `[${i}:a:0]aresample=48000,aformat=sample_fmts=fltp:channel_layouts=stereo,apad,atrim=end=${duration},asetpts=PTS-STARTPTS[a${i}]`
        : `anullsrc=r=48000:cl=stereo,atrim=end=${duration},aformat=sample_fmts=fltp:channel_layouts=stereo,asetpts=PTS-STARTPTS[a${i}]`,
    );
    pads += `[a${i}]`;
  });
  chains.push(`${pads}concat=n=${inputs.length}:v=1:a=${withAudio ? 1 : 0}[v]${withAudio ? '[a]' : ''}`);
  args.push('-filter_complex', chains.join(';'), '-map', '[v]');
  if (withAudio) args.push('-map', '[a]', ...audioArgs('aac', '160k'));
  // crf 20: a join is watched, not edited further (the filter chain makes it yuv420p already).
  args.push(...videoArgs({ codec: 'h264', crf: 20 }), ...containerArgs('mp4'));
  return args;
}

/** Checks what needs no file: at least two ids, each a video element of the board. */
export function checkConcatRequest(ctx: AppContext, req: { board_id: string; element_ids: string[] }): void {
  if (req.element_ids.length < 2) throw badRequest('element_ids needs at least 2 videos');
  for (const id of req.element_ids) {
    const el = ctx.boards.requireElement(req.board_id, id);
    if (el.type !== 'video') throw badRequest(`Element ${id} is not a video (it is ${el.type})`);
  }
}

/** The `media.concat-videos` job (portable; also run in the request): joins video elements in order into a new one. */
export async function concatVideos(job: JobContext<WithSources<ConcatParams>>): Promise<JobOutcome> {
  const req = job.params;
  const sources = req.element_ids.map((id) => jobSource(job, id));
  const inputs: ConcatInput[] = await Promise.all(
    sources.map(async (src) => {
      const info = await job.env.probes.probe(src.path);
      if (!info.video) throw badRequest(`Element ${src.element.id} has no video stream`);
      return { path: src.path, info };
    }),
  );
  const total = inputs.reduce((s, i) => s + (i.info.duration ?? 0), 0);
  const run = (args: string[]) => (temp: string) =>
    runFfmpeg(job.env.tools, [...args, temp], {
      signal: job.signal,
      durationSeconds: total,
      onProgress: (p) => p.fraction !== undefined && job.progress(p.fraction),
    });
  const name = `${sources[0].stem} (concat ${sources.length})`;
  // The concat demuxer's list file is line-based: a path with a line break (possible in a connected folder) could
  // inject directives, so such inputs take the re-encode path, which passes each path as its own argument.
  if (!canCopy(inputs) || inputs.some((i) => /[\r\n]/.test(i.path)))
    return produceOutput(job, req.board_id, `${name}.mp4`, run(reencodeArgs(inputs)), { concat_mode: 'reencode' });

  const ext = path.extname(sources[0].path).slice(1).toLowerCase() || 'mp4';
  const listDir = await fsp.mkdtemp(path.join(await job.scratch(), 'concat-'));
  try {
    const listFile = path.join(listDir, 'list.ffconcat');
    await fsp.writeFile(listFile, `ffconcat version 1.0\n${inputs.map((i) => concatListLine(i.path)).join('\n')}\n`);
    return await produceOutput(job, req.board_id, `${name}.${ext}`, run(copyArgs(listFile, ext)), {
      concat_mode: 'copy',
    });
  } finally {
    await fsp.rm(listDir, { recursive: true, force: true });
  }
}
