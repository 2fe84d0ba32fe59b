import type { AppContext } from '../context.js';
import path from 'node:path';
import { badRequest } from '../http/errors.js';
import { audioArgs, containerArgs, videoArgs, type AudioCodec } from '../render/encoders.js';
import { runFfmpeg } from '../tools/ffmpeg.js';
import type { ProbeResult } from '../tools/ffprobe.js';
import { loadSource, produceElement, type NewMediaResult } from './new-element.js';

/** Slack for floating-point durations: an end given as the probed duration, rounded by the client, is accepted. */
const DURATION_SLACK = 0.001;

/** The audio codec of each audio container trim writes. */
const AUDIO_CODECS: Record<string, AudioCodec> = {
  mp3: 'mp3',
  wav: 'pcm',
  flac: 'flac',
  ogg: 'opus',
  opus: 'opus',
  m4a: 'aac',
  aac: 'aac',
};

/** Container and encoders of the trimmed file: the source's container when we can write it, else mp4 / mp3. */
function outputFormat(ext: string, info: ProbeResult): { ext: string; args: string[] } {
  if (!info.video) {
    const out = AUDIO_CODECS[ext] ? ext : 'mp3';
    return { ext: out, args: ['-vn', ...audioArgs(AUDIO_CODECS[out])] };
  }
  const { width, height } = info.video;
  if (ext === 'webm') {
    // crf 30: a cut keeps a little more of the source than a conversion's 32; the source's pixel format stays.
    return { ext, args: [...videoArgs({ codec: 'vp9', crf: 30, pixFmt: null }), ...audioArgs('opus')] };
  }
  // x264's 4:2:0 needs even dimensions; odd-sized sources keep their exact size in 4:4:4 instead of being cropped.
  const pixFmt = width % 2 === 0 && height % 2 === 0 ? 'yuv420p' : 'yuv444p';
  const out = ['mp4', 'mov', 'mkv', 'm4v'].includes(ext) ? ext : 'mp4';
  return {
    ext: out,
    args: [...videoArgs({ codec: 'h264', pixFmt }), ...audioArgs('aac')],
  };
}

/** Seconds for a filename: `1` -> `1.0`, `2.25` -> `2.25`, at most millisecond precision. */
const fmt = (s: number) => (Number.isInteger(s) ? s.toFixed(1) : String(Math.round(s * 1000) / 1000));

/**
 * Cuts [start, end) out of a video or audio element, frame-accurately: the file is re-encoded (a stream copy could only
 * cut at key frames), and `-ss` before `-i` with re-encoding decodes from the preceding key frame and drops frames up to
 * `start` (ffmpeg's accurate seek), which is exact and much faster than decoding from the beginning.
 */
export async function trimMedia(
  ctx: AppContext,
  req: { board_id: string; element_id: string; start_seconds: number; end_seconds: number },
  signal?: AbortSignal,
): Promise<NewMediaResult> {
  const src = await loadSource(ctx, req.board_id, req.element_id);
  if (src.element.type !== 'video' && src.element.type !== 'audio') {
    throw badRequest(
      `Element ${req.element_id} is ${src.element.type === 'image' ? 'an image' : `a ${src.element.type} element`}; only video and audio can be trimmed`,
    );
  }
  const info = await ctx.probes.probe(src.path);
  if (!info.video && !info.audio) throw badRequest(`Element ${req.element_id} is neither video nor audio`);
  const duration = info.duration;
  if (duration === undefined)
    throw badRequest(`The duration of element ${req.element_id} is unknown, it cannot be trimmed`);
  const { start_seconds: start, end_seconds: end } = req;
  if (!(start >= 0 && start < end && end <= duration + DURATION_SLACK)) {
    throw badRequest(
      `start_seconds and end_seconds must satisfy 0 <= start < end <= duration (${duration.toFixed(3)} s)`,
      {
        start_seconds: start,
        end_seconds: end,
        duration,
      },
    );
  }
  const length = Math.min(end, duration) - start;
  const out = outputFormat(path.extname(src.path).slice(1).toLowerCase(), info);
  const args = [
    '-ss',
    start.toFixed(6),
    '-i',
    src.path,
    '-t',
    length.toFixed(6),
    '-map',
    '0:v:0?',
    '-map',
    '0:a:0?',
    ...out.args,
  ];
  args.push(...containerArgs(out.ext));
  return produceElement(ctx, req.board_id, `${src.stem} (trim ${fmt(start)}-${fmt(end)}).${out.ext}`, (temp) =>
    runFfmpeg(ctx.tools, [...args, temp], { signal, durationSeconds: length }),
  );
}
