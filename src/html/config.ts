import { integer } from '../config-values.js';

export interface HtmlConfig {
  /** Time limit of one HTML render (HTML_RENDER_TIMEOUT_SECONDS, default 600 s). */
  htmlRenderTimeoutMs: number;
}

/** HTML render settings from the environment, validated with the rest of the config by loadConfig. */
export function loadHtmlConfig(env: NodeJS.ProcessEnv): HtmlConfig {
  return {
    htmlRenderTimeoutMs: integer(env, 'HTML_RENDER_TIMEOUT_SECONDS', 600, 1, 24 * 3600) * 1000,
  };
}
