import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyBaseLogger } from 'fastify';
import { BrowserPool } from '../../src/tools/browser.js';
import { Tools } from '../../src/tools/locate.js';

/**
 * lottie-web in the service's headless Chromium, for the export tests: two animations drawn by the same player at the
 * same frames and compared pixel by pixel in the page (each pixel over white, the largest of its channel differences,
 * averaged over the picture), or one animation drawn and handed back as RGBA.
 */
const require = createRequire(import.meta.url);
const LOTTIE_JS = fs.readFileSync(require.resolve('lottie-web/build/player/lottie.min.js'), 'utf8');

const quiet = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
} as unknown as FastifyBaseLogger;

export function lottiePool(): BrowserPool {
  return new BrowserPool(new Tools(process.env), quiet, { maxPages: 1 });
}

/** The page's helpers: load an animation into a hidden container with a renderer, draw a frame, read its pixels. */
const HELPERS = `
window.__load = (json, renderer, w, h) => {
  const box = document.createElement('div');
  box.style.cssText = 'position:absolute;left:0;top:0;width:' + w + 'px;height:' + h + 'px';
  document.body.appendChild(box);
  const errors = [];
  const anim = lottie.loadAnimation({ container: box, renderer, loop: false, autoplay: false, animationData: json,
    rendererSettings: { clearCanvas: true, preserveAspectRatio: 'xMidYMid meet' } });
  anim.addEventListener('error', (e) => errors.push(String(e && e.nativeError || e)));
  return { box, anim, errors };
};
window.__pixels = async (entry, frame, w, h) => {
  entry.anim.goToAndStop(frame, true);
  let canvas = entry.box.querySelector('canvas');
  if (!canvas) {
    const svg = entry.box.querySelector('svg');
    const xml = new XMLSerializer().serializeToString(svg);
    const img = new Image();
    img.src = 'data:image/svg+xml;base64,' + btoa(unescape(encodeURIComponent(xml)));
    await img.decode();
    canvas = document.createElement('canvas');
    canvas.width = w; canvas.height = h;
    canvas.getContext('2d').drawImage(img, 0, 0, w, h);
  }
  const c = document.createElement('canvas');
  c.width = w; c.height = h;
  const g = c.getContext('2d');
  g.fillStyle = '#fff'; g.fillRect(0, 0, w, h);
  g.drawImage(canvas, 0, 0, w, h);
  return g.getImageData(0, 0, w, h).data;
};
window.__compare = async (a, b, frames, w, h) => {
  const out = [];
  for (const f of frames) {
    const pa = await __pixels(a, f, w, h);
    const pb = await __pixels(b, f, w, h);
    let sum = 0, worst = 0;
    for (let i = 0; i < pa.length; i += 4) {
      const d = Math.max(Math.abs(pa[i] - pb[i]), Math.abs(pa[i + 1] - pb[i + 1]), Math.abs(pa[i + 2] - pb[i + 2]));
      sum += d; if (d > worst) worst = d;
    }
    out.push({ frame: f, mean: sum / (pa.length / 4), worst });
  }
  return out;
};
`;

export interface FrameDiff {
  frame: number;
  mean: number;
  worst: number;
}

/** Both animations drawn by lottie-web (canvas renderer) at `frames`; the mean largest channel difference of each. */
export async function compareLottie(
  pool: BrowserPool,
  ours: unknown,
  theirs: unknown,
  frames: number[],
  size: { w: number; h: number },
  renderer: 'canvas' | 'svg' = 'canvas',
): Promise<{ diffs: FrameDiff[]; errors: string[] }> {
  return pool.withPage({ width: size.w, height: size.h }, async ({ page }) => {
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    await page.setContent('<html><body style="margin:0"></body></html>');
    await page.addScriptTag({ content: LOTTIE_JS });
    await page.addScriptTag({ content: HELPERS });
    const diffs = (await page.evaluate(
      `(async () => { const a = __load(${JSON.stringify(ours)}, '${renderer}', ${size.w}, ${size.h});
        const b = __load(${JSON.stringify(theirs)}, '${renderer}', ${size.w}, ${size.h});
        const r = await __compare(a, b, ${JSON.stringify(frames)}, ${size.w}, ${size.h});
        return { r, errors: [...a.errors, ...b.errors] }; })()`,
    )) as { r: FrameDiff[]; errors: string[] };
    return { diffs: diffs.r, errors: [...pageErrors, ...diffs.errors] };
  });
}

/** One animation drawn by lottie-web at `frame` over white, as RGBA bytes (for AE's renders and the preview). */
export async function drawLottie(
  pool: BrowserPool,
  json: unknown,
  frame: number,
  size: { w: number; h: number },
  renderer: 'canvas' | 'svg' = 'canvas',
): Promise<{ rgba: Buffer; errors: string[] }> {
  return pool.withPage({ width: size.w, height: size.h }, async ({ page }) => {
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    await page.setContent('<html><body style="margin:0"></body></html>');
    await page.addScriptTag({ content: LOTTIE_JS });
    await page.addScriptTag({ content: HELPERS });
    const r = (await page.evaluate(
      `(async () => { const a = __load(${JSON.stringify(json)}, '${renderer}', ${size.w}, ${size.h});
        const px = await __pixels(a, ${frame}, ${size.w}, ${size.h});
        return { px: Array.from(px), errors: a.errors }; })()`,
    )) as { px: number[]; errors: string[] };
    return { rgba: Buffer.from(r.px), errors: [...pageErrors, ...r.errors] };
  });
}
