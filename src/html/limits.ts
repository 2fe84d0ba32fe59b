/** Bounds of an HTML render; the request schemas are built from these, and docs/html.md lists them. */
export const RENDER_LIMITS = {
  minSize: 16,
  maxWidth: 3840,
  maxHeight: 2160,
  minFps: 1,
  maxFps: 120,
  maxDurationSeconds: 120,
  /** UTF-8 characters of the card's HTML. */
  maxHtmlLength: 5 * 1024 * 1024,
  /** Wall-clock limit of one render (load, frames and encoding), unless HTML_RENDER_TIMEOUT_SECONDS says otherwise. */
  defaultTimeoutSeconds: 600,
  /** Part of that limit allowed for loading the card with its fonts, images and media. */
  loadTimeoutMs: 30_000,
  /** Height of the proxy video; a proxy is made only for taller videos. */
  proxyHeight: 480,
  /** Longest side of the thumbnail image. */
  thumbnailSize: 480,
} as const;

/** The render time limit for a service, from HTML_RENDER_TIMEOUT_SECONDS (whole seconds) or the default. */
export function renderTimeoutMs(env: NodeJS.ProcessEnv): number {
  const raw = env.HTML_RENDER_TIMEOUT_SECONDS;
  const seconds = raw && /^\d+$/.test(raw.trim()) && Number(raw) > 0 ? Number(raw) : RENDER_LIMITS.defaultTimeoutSeconds;
  return seconds * 1000;
}
