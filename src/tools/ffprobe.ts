import { ToolFailed } from '../errors.js';
import type { Tools } from './locate.js';
import { runFile } from './process.js';

export interface ProbeResult {
  formatName: string;
  duration?: number;
  bitRate?: number;
  video?: { codec: string; width: number; height: number; fps?: number; pixFmt?: string; rotation?: number };
  audio?: { codec: string; channels: number; sampleRate: number; channelLayout?: string };
  /** Raw ffprobe JSON, for callers that need more. */
  raw: FfprobeJson;
}

interface FfprobeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  pix_fmt?: string;
  channels?: number;
  sample_rate?: string;
  channel_layout?: string;
  duration?: string;
  disposition?: { attached_pic?: number };
  tags?: Record<string, string>;
  side_data_list?: { rotation?: number }[];
}

export interface FfprobeJson {
  format?: { format_name?: string; duration?: string; bit_rate?: string };
  streams?: FfprobeStream[];
}

function rate(r: string | undefined): number | undefined {
  if (!r) return undefined;
  const [n, d] = r.split('/').map(Number);
  const v = d ? n / d : n;
  return Number.isFinite(v) && v > 0 ? v : undefined;
}

/** Runs ffprobe on a file and returns its container, duration and first video/audio streams. */
export async function probe(tools: Tools, file: string, timeoutMs = 30_000): Promise<ProbeResult> {
  const ffprobe = await tools.require('ffprobe');
  const stdout = await runFile(
    ffprobe.path,
    ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file],
    { timeoutMs, maxBuffer: 8 * 1024 * 1024 },
  ).then(
    (r) => r.stdout,
    (err: Error & { stderr?: string }) => {
      throw new ToolFailed(
        'unreadable_media',
        `ffprobe could not read the file: ${String(err.stderr || err.message)
          .trim()
          .split('\n')
          .pop()}`,
      );
    },
  );
  const raw = JSON.parse(stdout) as FfprobeJson;
  const streams = raw.streams ?? [];
  const v = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  const a = streams.find((s) => s.codec_type === 'audio');
  const duration = Number(raw.format?.duration ?? v?.duration ?? a?.duration);
  return {
    formatName: raw.format?.format_name ?? 'unknown',
    duration: Number.isFinite(duration) ? duration : undefined,
    bitRate: raw.format?.bit_rate ? Number(raw.format.bit_rate) : undefined,
    video:
      v && v.width && v.height
        ? {
            codec: v.codec_name ?? 'unknown',
            width: v.width,
            height: v.height,
            fps: rate(v.avg_frame_rate) ?? rate(v.r_frame_rate),
            pixFmt: v.pix_fmt,
            rotation:
              v.side_data_list?.find((s) => typeof s.rotation === 'number')?.rotation ??
              (v.tags?.rotate ? Number(v.tags.rotate) : undefined),
          }
        : undefined,
    audio: a
      ? {
          codec: a.codec_name ?? 'unknown',
          channels: a.channels ?? 0,
          sampleRate: Number(a.sample_rate ?? 0),
          channelLayout: a.channel_layout,
        }
      : undefined,
    raw,
  };
}
