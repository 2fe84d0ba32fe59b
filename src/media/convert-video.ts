import type { AppContext } from '../context.js';
import { badRequest } from '../http/errors.js';
import { audioArgs, audioFor, containerArgs, videoArgs } from '../render/encoders.js';
import { runFfmpeg } from '../tools/ffmpeg.js';
import type { JobContext, JobOutcome } from '../jobs/runner.js';
import { jobSource, produceOutput, type WithSources } from './new-element.js';
import type { ConvertVideoRequest } from './schemas.js';

export const VIDEO_FORMATS = ['mp4', 'webm', 'mov'] as const;
export const VIDEO_CODECS = ['h264', 'h265', 'vp9', 'av1', 'prores'] as const;
export type VideoFormat = (typeof VIDEO_FORMATS)[number];
export type VideoCodec = (typeof VIDEO_CODECS)[number];

/** Which codecs each container can hold (as players expect them, not every combination ffmpeg would mux). */
export const CONTAINER_CODECS: Record<VideoFormat, readonly VideoCodec[]> = {
  mp4: ['h264', 'h265', 'av1'],
  webm: ['vp9', 'av1'],
  mov: ['h264', 'h265', 'prores'],
};

const MIN_BITRATE = 50_000;
const MAX_BITRATE = 500_000_000;

/** `2M`, `800k`, `1.5M` or plain bits per second -> bits per second; 400 outside 50 kbit/s .. 500 Mbit/s. */
function parseBitrate(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(text.trim());
  if (!m) throw badRequest(`bitrate "${text}" is not a bitrate like 2M or 800k`);
  const value = Number(m[1]) * (m[2] === '' ? 1 : m[2].toLowerCase() === 'k' ? 1e3 : 1e6);
  if (value < MIN_BITRATE || value > MAX_BITRATE) throw badRequest(`bitrate must be between 50k and 500M, got ${text}`);
  return Math.round(value);
}

/** Checks everything that needs no file: the container x codec pair and the bitrate. */
export function validateConvertVideo(req: ConvertVideoRequest): number | undefined {
  const allowed = CONTAINER_CODECS[req.format];
  if (!allowed.includes(req.codec)) {
    const pairs = Object.entries(CONTAINER_CODECS).flatMap(([f, cs]) => cs.map((c) => `${f}/${c}`));
    throw badRequest(
      `A ${req.format} file cannot hold ${req.codec}; ${req.format} takes ${allowed.join(', ')}. Valid pairs: ${pairs.join(', ')}`,
      {
        valid_pairs: CONTAINER_CODECS,
      },
    );
  }
  if (!req.bitrate) return undefined;
  if (req.codec === 'prores') throw badRequest('prores has fixed-quality profiles and takes no bitrate; omit bitrate');
  return parseBitrate(req.bitrate);
}

export function checkVideoElement(ctx: AppContext, req: { board_id: string; element_id: string }): void {
  const el = ctx.boards.requireElement(req.board_id, req.element_id);
  if (el.type !== 'video') throw badRequest(`Element ${req.element_id} is not a video (it is ${el.type})`);
}

/**
 * Encoder arguments (the encoder table, src/render/encoders.ts); without a bitrate each codec runs at a constant
 * quality: its default, except H.264 at crf 21 (a converted copy is for sharing: smaller than a master).
 */
function encodeArgs(codec: VideoCodec, bitrate: number | undefined): string[] {
  // Cropping to even sizes (at most one pixel) because the 4:2:0 / 4:2:2 encoders reject odd dimensions.
  const even = codec === 'vp9' || codec === 'av1' ? [] : ['-vf', 'crop=trunc(iw/2)*2:trunc(ih/2)*2:0:0'];
  return [...even, ...videoArgs({ codec, bitrate, ...(codec === 'h264' ? { crf: 21 } : {}) })];
}

/** The container's audio (`audioFor`); AAC at 160k, a copy's audio need not be the master's 192k. */
function audioOf(req: ConvertVideoRequest): string[] {
  const codec = audioFor(req.format, req.codec);
  return audioArgs(codec, codec === 'aac' ? '160k' : undefined);
}

/** The `media.convert-video` job (portable; also run in the request): re-encodes the element's video into a new file. */
export async function convertVideo(job: JobContext<WithSources<ConvertVideoRequest>>): Promise<JobOutcome> {
  const req = job.params;
  const bitrate = validateConvertVideo(req);
  const src = jobSource(job, req.element_id);
  const info = await job.env.probes.probe(src.path);
  if (!info.video) throw badRequest(`Element ${req.element_id} has no video stream`);
  const args = [
    '-i',
    src.path,
    '-map',
    '0:v:0',
    '-map',
    '0:a:0?',
    ...encodeArgs(req.codec, bitrate),
    ...audioOf(req),
    ...containerArgs(req.format),
  ];
  return produceOutput(job, req.board_id, `${src.stem} (${req.codec}).${req.format}`, (temp) =>
    runFfmpeg(job.env.tools, [...args, temp], {
      signal: job.signal,
      durationSeconds: info.duration,
      onProgress: (p) => p.fraction !== undefined && job.progress(p.fraction),
    }),
  );
}
