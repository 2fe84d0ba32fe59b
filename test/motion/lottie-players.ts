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
window.__unload = (entry) => { entry.anim.destroy(); entry.box.remove(); };
window.__pixels = async (entry, frame, w, h, bg) => {
  // pictures load asynchronously: wait until lottie-web says everything is in (at most 5 s: fonts it cannot find)
  for (let i = 0; i < 100 && !entry.anim.isLoaded; i++) await new Promise((r) => setTimeout(r, 50));
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
  g.fillStyle = bg || '#fff'; g.fillRect(0, 0, w, h);
  g.drawImage(canvas, 0, 0, w, h);
  return g.getImageData(0, 0, w, h).data;
};
window.__diff = (pa, pb) => {
  let sum = 0, worst = 0;
  for (let i = 0; i < pa.length; i += 4) {
    const d = Math.max(Math.abs(pa[i] - pb[i]), Math.abs(pa[i + 1] - pb[i + 1]), Math.abs(pa[i + 2] - pb[i + 2]));
    sum += d; if (d > worst) worst = d;
  }
  return { mean: sum / (pa.length / 4), worst };
};
window.__picture = async (url, w, h) => {
  const img = new Image();
  img.src = url;
  await img.decode();
  const c = document.createElement('canvas');
  c.width = w; c.height = h;
  const g = c.getContext('2d');
  g.fillStyle = '#fff'; g.fillRect(0, 0, w, h);
  g.drawImage(img, 0, 0, w, h);
  return g.getImageData(0, 0, w, h).data;
};
window.__compare = async (a, b, frames, w, h, refs) => {
  const out = [];
  for (const f of frames) {
    const pa = await __pixels(a, f, w, h);
    const pb = await __pixels(b, f, w, h);
    const row = { frame: f, ...__diff(pa, pb) };
    if (refs[f]) {
      const pr = await __picture(refs[f], w, h);
      row.reference = { ours: __diff(pa, pr).mean, theirs: __diff(pb, pr).mean };
    }
    out.push(row);
  }
  return out;
};
`;

export interface FrameDiff {
  frame: number;
  mean: number;
  worst: number;
  /** With a reference picture at this frame: the mean difference of each animation to it. */
  reference?: { ours: number; theirs: number };
}

/** lottie-web in one page, kept for many animations (a page per drawing costs seconds on a loaded machine). */
export interface LottiePage {
  /**
   * Both animations drawn at `frames`; the mean largest channel difference of each frame, and lottie-web's errors.
   * `references`: pictures (data URLs, drawn over white) of some frames, each animation compared with them too.
   */
  compare(
    ours: unknown,
    theirs: unknown,
    frames: number[],
    size: { w: number; h: number },
    references?: Record<number, string>,
  ): Promise<{ diffs: FrameDiff[]; errors: string[] }>;
  /** One animation drawn at `frame` over white (or `background`, a CSS colour), as RGBA bytes. */
  draw(
    json: unknown,
    frame: number,
    size: { w: number; h: number },
    renderer?: 'canvas' | 'svg',
    background?: string,
  ): Promise<{ rgba: Buffer; errors: string[] }>;
}

export async function withLottiePage<T>(pool: BrowserPool, fn: (page: LottiePage) => Promise<T>): Promise<T> {
  return pool.withPage({ width: 256, height: 256 }, async ({ page }) => {
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    await page.setContent('<html><body style="margin:0"></body></html>');
    await page.addScriptTag({ content: LOTTIE_JS });
    await page.addScriptTag({ content: HELPERS });
    const taken = () => pageErrors.splice(0);
    return fn({
      async compare(ours, theirs, frames, size, references = {}) {
        const r = (await page.evaluate(
          async (a: unknown, b: unknown, fr: number[], w: number, h: number, refs: Record<number, string>) => {
            const g = window as unknown as Record<string, (...x: unknown[]) => any>;
            const x = g.__load(a, 'canvas', w, h);
            const y = g.__load(b, 'canvas', w, h);
            try {
              return { r: await g.__compare(x, y, fr, w, h, refs), errors: [...x.errors, ...y.errors] };
            } finally {
              g.__unload(x);
              g.__unload(y);
            }
          },
          ours,
          theirs,
          frames,
          size.w,
          size.h,
          references,
        )) as { r: FrameDiff[]; errors: string[] };
        return { diffs: r.r, errors: [...taken(), ...r.errors] };
      },
      async draw(json, frame, size, renderer = 'canvas', background = '#fff') {
        const r = (await page.evaluate(
          async (a: unknown, f: number, w: number, h: number, rd: string, bg: string) => {
            const g = window as unknown as Record<string, (...x: unknown[]) => any>;
            const x = g.__load(a, rd, w, h);
            try {
              return { px: Array.from((await g.__pixels(x, f, w, h, bg)) as Uint8ClampedArray), errors: x.errors };
            } finally {
              g.__unload(x);
            }
          },
          json,
          frame,
          size.w,
          size.h,
          renderer,
          background,
        )) as { px: number[]; errors: string[] };
        return { rgba: Buffer.from(r.px), errors: [...taken(), ...r.errors] };
      },
    });
  });
}

/** Skia's skottie (canvaskit-wasm's full build, in Node): loads the animation and draws `frame`; throws when it cannot. */
export async function skottieDraw(json: string, frame: number): Promise<{ w: number; h: number; rgba: Uint8Array }> {
  type CanvasKit = any; // canvaskit-wasm's types do not cover the full build's skottie entry points
  skottie ??= (require('canvaskit-wasm/bin/full/canvaskit.js') as (o: unknown) => Promise<CanvasKit>)({
    locateFile: (f: string) => require.resolve(`canvaskit-wasm/bin/full/${f}`),
  });
  const CK = await skottie;
  const anim = CK.MakeManagedAnimation(json);
  if (!anim) throw new Error('skottie could not load the animation');
  const [w, h] = Array.from(anim.size() as Float32Array).map((x) => Math.max(1, Math.min(512, Math.round(x))));
  const surface = CK.MakeSurface(w, h);
  try {
    anim.seekFrame(frame);
    anim.render(surface.getCanvas(), CK.LTRBRect(0, 0, w, h));
    surface.flush();
    const img = surface.makeImageSnapshot();
    const rgba = img.readPixels(0, 0, {
      width: w,
      height: h,
      colorType: CK.ColorType.RGBA_8888,
      alphaType: CK.AlphaType.Unpremul,
      colorSpace: CK.ColorSpace.SRGB,
    }) as Uint8Array;
    img.delete();
    return { w, h, rgba };
  } finally {
    surface.delete();
    anim.delete();
  }
}
let skottie: Promise<any> | undefined;

/**
 * ThorVG (@lottiefiles/dotlottie-web, its WebAssembly player, in Node): loads a Lottie JSON or a .lottie archive and
 * draws `frame` into a stand-in canvas (the player only puts its pixel buffer there); throws on a load error.
 */
export async function thorvgDraw(data: string | ArrayBuffer, frame: number, size = 64): Promise<Uint8ClampedArray> {
  const { DotLottie } = await import('@lottiefiles/dotlottie-web');
  if (!thorvgReady) {
    const wasm = fs.readFileSync(
      require.resolve('@lottiefiles/dotlottie-web').replace(/index\.cjs$/, 'dotlottie-player.wasm'),
    );
    DotLottie.setWasmUrl(`data:application/wasm;base64,${wasm.toString('base64')}`);
    const g = globalThis as { ImageData?: unknown };
    g.ImageData ??= class {
      constructor(
        public data: Uint8ClampedArray,
        public width: number,
        public height: number,
      ) {}
    };
    thorvgReady = true;
  }
  let drawn: Uint8ClampedArray | undefined;
  const context = {
    putImageData: (img: { data: Uint8ClampedArray }) => (drawn = img.data),
    createImageData: (w: number, h: number) => ({ data: new Uint8ClampedArray(w * h * 4), width: w, height: h }),
    clearRect: () => undefined,
  };
  const canvas = { width: size, height: size, getContext: () => context };
  const player = new DotLottie({
    canvas: canvas as unknown as HTMLCanvasElement,
    data,
    autoplay: false,
    renderConfig: { autoResize: false, devicePixelRatio: 1 },
  });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('ThorVG did not load the animation in 20 s')), 20_000);
      player.addEventListener('load', () => (clearTimeout(timer), resolve()));
      player.addEventListener(
        'loadError',
        (e: { error?: unknown }) => (clearTimeout(timer), reject(new Error(`ThorVG: ${String(e.error)}`))),
      );
    });
    player.setFrame(Math.min(frame, Math.max(0, player.totalFrames - 1)));
    if (!drawn) throw new Error('ThorVG drew nothing');
    return drawn;
  } finally {
    player.destroy();
  }
}
let thorvgReady = false;
