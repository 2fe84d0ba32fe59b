import os from 'node:os';
import { choice, integer } from '../config-values.js';

export interface HtmlConfig {
  /** Time limit of one HTML render (HTML_RENDER_TIMEOUT_SECONDS, default 600 s). */
  htmlRenderTimeoutMs: number;
  /**
   * Frame ranges a video render is split into, each captured by its own browser and encoded by its own ffmpeg at the
   * same time (HTML_RENDER_RANGES, 1..16; default `autoRenderRanges()`). The browser pool keeps at least this many
   * page slots.
   */
  htmlRenderRanges: number;
  /**
   * How pages are captured (HTML_CAPTURE): `auto` tries begin-frame control and falls back to screenshots where a
   * build does not draw under it; `screenshot` always takes screenshots (for a build whose begin-frame capture
   * misbehaves).
   */
  htmlCapture: 'auto' | 'screenshot';
}

const GiB = 1024 ** 3;

/**
 * One range per core, and no more ranges than GiB of memory (a range's Chromium and ffmpeg take up to about 1 GiB at
 * 4k), at most 8. Both are facts of the machine, not of the moment, so a machine's renders keep the same bytes.
 */
export function autoRenderRanges(): number {
  const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  return Math.max(1, Math.min(cores, Math.floor(os.totalmem() / GiB), 8));
}

/** HTML render settings from the environment, validated with the rest of the config by loadConfig. */
export function loadHtmlConfig(env: NodeJS.ProcessEnv): HtmlConfig {
  return {
    htmlRenderTimeoutMs: integer(env, 'HTML_RENDER_TIMEOUT_SECONDS', 600, 1, 24 * 3600) * 1000,
    htmlRenderRanges: integer(env, 'HTML_RENDER_RANGES', autoRenderRanges(), 1, 16),
    htmlCapture: choice(env, 'HTML_CAPTURE', ['auto', 'screenshot'] as const),
  };
}

/** The browser pool's size for these settings: two pages (a frame and a video at once) or a page per range. */
export const browserPoolOptions = (config: HtmlConfig) => ({
  maxPages: Math.max(2, config.htmlRenderRanges),
  pagesPerRender: config.htmlRenderRanges,
  screenshots: config.htmlCapture === 'screenshot',
});
