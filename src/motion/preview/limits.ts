/** Bounds of a motion preview; the request schema is built from these, and docs/motion.md lists them. */
export const PREVIEW_LIMITS = {
  minSize: 2,
  /** Pixels a side (the "absurd size"). */
  maxSize: 8192,
  minFps: 1,
  maxFps: 120,
  /** Ten minutes: the longest time, start or duration a request may name. */
  maxSeconds: 600,
  /** A video's default duration: the composition's work area, at most this. */
  defaultMaxDuration: 60,
  /** Frames whose display lists the page fetches at once (one file each). */
  framesPerChunk: 30,
} as const;
