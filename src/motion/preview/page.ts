import { workUrl } from '../../render/render-page.js';
import type { PreparedFrames } from './frames.js';
import type { PreviewParams } from './contract.js';
import { EFFECTS_SCRIPT } from './draw-effects.js';
import { DRAW_SCRIPT } from './draw-script.js';
import { PREVIEW_LIMITS as L } from './limits.js';

/** JSON inside a <script>: `<` escaped, so no text of a project can close the script element. */
const scriptJson = (v: unknown) => JSON.stringify(v).replace(/</g, '\\u003c');
const cssString = (s: string) => JSON.stringify(s).replace(/</g, '\\3c ');

/**
 * The preview page: a canvas of the output size, the fonts as @font-face rules, an SVG filter for luma mattes, the
 * frame data and the drawer (draw-script.ts). The composition is fitted inside the output and centred; outside it,
 * the page shows the composition's background colour.
 */
export function previewHtml(p: PreviewParams, prepared: PreparedFrames): string {
  const { width: cw, height: ch, background } = prepared.composition;
  const scale = Math.min(p.width / cw, p.height / ch);
  const data = {
    width: p.width,
    height: p.height,
    fps: p.fps,
    fit: [scale, (p.width - cw * scale) / 2, (p.height - ch * scale) / 2],
    background,
    transparent: false,
    fonts: prepared.fonts,
    footage: prepared.footage,
    // A single list goes in the page (a still, a static composition); else the page fetches the list files.
    frames: prepared.single ? prepared.frames.map(() => 0) : prepared.frames,
    chunk: prepared.single ? 1 : L.framesPerChunk,
    chunkUrl: workUrl('lists-'),
    lists: prepared.single ? [prepared.single] : null,
  };
  const faces = Object.values(prepared.fonts)
    .filter((f) => f.loaded && f.url)
    .map((f) => `@font-face{font-family:${cssString(f.family)};src:url(${cssString(f.url!)})}`)
    .join('\n');
  return `<!doctype html>
<html><head><meta charset="utf-8"><style>
${faces}
html,body{margin:0;padding:0;width:${p.width}px;height:${p.height}px;overflow:hidden;background:#000}
canvas{display:block}
</style></head><body>
<canvas id="out" width="${p.width}" height="${p.height}"></canvas>
<svg width="0" height="0" style="position:absolute"><filter id="luma" color-interpolation-filters="sRGB"><feColorMatrix type="luminanceToAlpha"/></filter></svg>
<script>window.__preview = ${scriptJson(data)};</script>
<script>${EFFECTS_SCRIPT}</script>
<script>${DRAW_SCRIPT}</script>
</body></html>`;
}
