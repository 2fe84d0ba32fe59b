import type { Static } from 'typebox';
import { badRequest } from '../http/errors.js';
import { audioArgs, audioFor, containerArgs, videoArgs } from '../render/encoders.js';
import type { RenderBody } from './schemas.js';

export const FORMATS = ['mp4', 'webm', 'mov'] as const;
export const CODECS = ['h264', 'h265', 'vp9', 'prores'] as const;
export const SIZE_PRESETS = ['1080p', '720p', '4k', 'square', 'vertical', 'source'] as const;
export type Format = (typeof FORMATS)[number];
export type Codec = (typeof CODECS)[number];
export type SizePreset = (typeof SIZE_PRESETS)[number];

/** Codecs each container takes here: the pairs players handle without flags. */
export const CONTAINER_CODECS: Record<Format, readonly Codec[]> = {
  mp4: ['h264', 'h265'],
  webm: ['vp9'],
  mov: ['h264', 'h265', 'prores'],
};

const VALID_PAIRS = FORMATS.flatMap((f) => CONTAINER_CODECS[f].map((c) => `${f}/${c}`));

/** Fixed output sizes; `source` is the project's videoSize (rounded to even numbers, as yuv420 needs). */
export const PRESET_SIZES: Record<Exclude<SizePreset, 'source'>, { w: number; h: number }> = {
  '1080p': { w: 1920, h: 1080 },
  '720p': { w: 1280, h: 720 },
  '4k': { w: 3840, h: 2160 },
  square: { w: 1080, h: 1080 },
  vertical: { w: 1080, h: 1920 },
};

/** The render request with every default filled in. */
export type RenderSettings = Required<Static<typeof RenderBody>>;

/** Fills defaults (mp4, the container's first codec, crf 23, 1080p, 30 fps) and rejects a pair the container cannot hold. */
export function renderSettings(input: Partial<RenderSettings>): RenderSettings {
  const format = input.format ?? 'mp4';
  const codec = input.codec ?? CONTAINER_CODECS[format][0];
  if (!CONTAINER_CODECS[format].includes(codec)) {
    throw badRequest(
      `codec ${codec} cannot go in a ${format} file; valid format/codec pairs: ${VALID_PAIRS.join(', ')}`,
      { valid_pairs: VALID_PAIRS },
    );
  }
  return { format, codec, crf: input.crf ?? 23, size_preset: input.size_preset ?? '1080p', fps: input.fps ?? 30 };
}

const even = (n: number) => Math.max(2, 2 * Math.round(n / 2));

export function outputSize(
  preset: SizePreset,
  videoSize: { w: number; h: number } | undefined,
): { w: number; h: number } {
  if (preset !== 'source') return PRESET_SIZES[preset];
  const size = videoSize ?? PRESET_SIZES['1080p'];
  return { w: even(size.w), h: even(size.h) };
}

/** Whether gaps stay transparent: the codec and pixel format carry alpha (vp9 in webm, prores 4444). */
export const hasAlpha = (codec: Codec): boolean => codec === 'vp9' || codec === 'prores';

/**
 * Encoder arguments from the encoder table (src/render/encoders.ts) at the project's crf. VP9 and ProRes 4444 keep the
 * gaps transparent (`hasAlpha`); VP9 names yuva420p itself, keeping alt-ref frames as the timeline always has.
 */
export function encoderArgs(s: Pick<RenderSettings, 'format' | 'codec' | 'crf'>): {
  video: string[];
  audio: string[];
  muxer: string[];
  pixFmt: string;
} {
  const muxer = containerArgs(s.format, { muxer: true });
  const audio = audioArgs(audioFor(s.format));
  const pixFmt = s.codec === 'vp9' ? 'yuva420p' : s.codec === 'prores' ? 'yuva444p10le' : 'yuv420p';
  const video = videoArgs({ codec: s.codec, crf: s.crf, pixFmt, ...(s.codec === 'prores' ? { alpha: true } : {}) });
  return { video, audio, muxer, pixFmt };
}
