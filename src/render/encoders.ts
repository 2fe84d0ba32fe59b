/**
 * The encoder table: every codec's and container's ffmpeg settings, defined once (the way immich's BaseConfig /
 * H264Config / VP9Config are). A feature that encodes names the codec and what it sets on purpose (its quality, a
 * bitrate, a fixed thread count, alpha); everything else comes from here. docs/architecture.md lists the uses.
 */

export type VideoCodec = 'h264' | 'h265' | 'vp9' | 'av1' | 'prores';
export type AudioCodec = 'aac' | 'opus' | 'pcm' | 'mp3' | 'flac';

/** The ffmpeg encoder behind each codec (also what `ffmpeg -encoders` must list). */
export const VIDEO_ENCODERS: Record<VideoCodec, string> = {
  h264: 'libx264',
  h265: 'libx265',
  vp9: 'libvpx-vp9',
  av1: 'libaom-av1',
  prores: 'prores_ks',
};

export interface VideoEncoding {
  codec: VideoCodec;
  /** Constant quality; default the codec's (`DEFAULT_CRF`). Ignored by ProRes (quality comes with its profile). */
  crf?: number;
  /** An average bitrate (bits/s) instead of constant quality, capped at 1.5x over a 2x buffer (x264, x265, VP9). */
  bitrate?: number;
  /** Default yuv420p (ProRes: 4:2:2 10-bit, or 4:4:4 with alpha for profile 4444); null: the source's own. */
  pixFmt?: string | null;
  /**
   * A fixed encoder thread count: the bitstream of x264 and VP9 follows the thread count, which otherwise follows the
   * machine's cores. The capture engine fixes it so the same frames give the same bytes.
   */
  threads?: number;
  /**
   * VP9's speed (`-cpu-used`) and row multithreading; default 4 with rows on. The capture engine runs 5 without rows:
   * its frames come fast and in several ranges at once (each its own ffmpeg), and it wants bytes that do not depend on
   * the scheduling of rows.
   */
  vp9?: { cpuUsed: number; rowMt: boolean };
  /** ProRes profile: 2 (422), 3 (422 HQ) or 4444 (alpha); default 2. */
  profile?: '2' | '3' | '4444';
  /** Keep the frames' alpha (VP9: yuva420p without alt-ref frames, which drop it; ProRes: profile 4444). */
  alpha?: boolean;
}

/** Constant quality per codec where a use names none: near-transparent for x264, the encoders' own sweet spots else. */
const DEFAULT_CRF: Record<Exclude<VideoCodec, 'prores'>, number> = { h264: 18, h265: 26, vp9: 32, av1: 34 };

const rate = (bitrate: number) => [
  '-b:v',
  String(bitrate),
  '-maxrate',
  String(Math.round(bitrate * 1.5)),
  '-bufsize',
  String(bitrate * 2),
];

const pix = (asked: string | null | undefined, fallback: string) =>
  asked === null ? [] : ['-pix_fmt', asked ?? fallback];

/** The `-c:v ...` arguments of an encoding. */
export function videoArgs(e: VideoEncoding): string[] {
  const crf = String(e.crf ?? (e.codec === 'prores' ? 0 : DEFAULT_CRF[e.codec]));
  const threads = e.threads !== undefined ? ['-threads', String(e.threads)] : [];
  const quality = e.bitrate ? rate(e.bitrate) : ['-crf', crf];
  switch (e.codec) {
    case 'h264':
      return ['-c:v', VIDEO_ENCODERS.h264, '-preset', 'veryfast', ...quality, ...pix(e.pixFmt, 'yuv420p'), ...threads];
    case 'h265':
      return [
        '-c:v',
        VIDEO_ENCODERS.h265,
        '-preset',
        'veryfast',
        ...quality,
        ...pix(e.pixFmt, 'yuv420p'),
        // hvc1: the tag Apple's players need to open H.265 in MP4/MOV.
        '-tag:v',
        'hvc1',
        '-x265-params',
        'log-level=error',
        ...threads,
      ];
    case 'vp9': {
      const speed = e.vp9 ?? { cpuUsed: 4, rowMt: true };
      return [
        '-c:v',
        VIDEO_ENCODERS.vp9,
        '-deadline',
        'good',
        '-cpu-used',
        String(speed.cpuUsed),
        '-row-mt',
        speed.rowMt ? '1' : '0',
        ...threads,
        // Constant quality in VP9 needs the bitrate cap off.
        ...(e.bitrate ? rate(e.bitrate) : ['-crf', crf, '-b:v', '0']),
        ...pix(e.pixFmt, e.alpha ? 'yuva420p' : 'yuv420p'),
        ...(e.alpha ? ['-auto-alt-ref', '0'] : []),
      ];
    }
    case 'av1':
      return [
        '-c:v',
        VIDEO_ENCODERS.av1,
        '-strict',
        'experimental',
        '-cpu-used',
        '8',
        '-row-mt',
        '1',
        ...pix(e.pixFmt, 'yuv420p'),
        // libaom's bitrate mode has no VBV cap.
        ...(e.bitrate ? ['-b:v', String(e.bitrate)] : ['-crf', crf, '-b:v', '0']),
        ...threads,
      ];
    case 'prores': {
      const profile = e.alpha ? '4444' : (e.profile ?? '2');
      const pixFmt = pix(e.pixFmt, profile === '4444' ? 'yuva444p10le' : 'yuv422p10le');
      return ['-c:v', VIDEO_ENCODERS.prores, '-profile:v', profile, ...pixFmt, ...threads];
    }
  }
}

/** Audio settings per codec: AAC and Opus at a bitrate (default 192k and 128k), PCM 16-bit, MP3 VBR q2, FLAC. */
export function audioArgs(codec: AudioCodec, bitrate?: string): string[] {
  switch (codec) {
    case 'aac':
      return ['-c:a', 'aac', '-b:a', bitrate ?? '192k'];
    case 'opus':
      return ['-c:a', 'libopus', '-b:a', bitrate ?? '128k'];
    case 'pcm':
      return ['-c:a', 'pcm_s16le'];
    case 'mp3':
      return ['-c:a', 'libmp3lame', '-q:a', '2'];
    case 'flac':
      return ['-c:a', 'flac'];
  }
}

/** The audio that fits a container: Opus in WebM, PCM beside ProRes (what editors expect), AAC otherwise. */
export const audioFor = (container: string, video?: VideoCodec): AudioCodec =>
  container === 'webm' ? 'opus' : video === 'prores' ? 'pcm' : 'aac';

/**
 * Container settings: MP4-family files carry their index at the start (`+faststart`, playable while they load); with
 * `muxer`, the format is named rather than taken from the file's extension (a temp path, a pipe).
 */
export function containerArgs(format: string, opts: { muxer?: boolean } = {}): string[] {
  const faststart = ['mp4', 'mov', 'm4v'].includes(format) ? ['-movflags', '+faststart'] : [];
  return [...faststart, ...(opts.muxer ? ['-f', format] : [])];
}
