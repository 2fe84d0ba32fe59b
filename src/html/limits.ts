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
  /** Bytes of a request that carries HTML: its longest HTML as UTF-8 (at most 3 bytes a character) and the rest. */
  maxBodyBytes: 16 * 1024 * 1024,
  /** Height of the proxy video; a proxy is made only for taller videos. */
  proxyHeight: 480,
  /** Longest side of the thumbnail image. */
  thumbnailSize: 480,
} as const;
