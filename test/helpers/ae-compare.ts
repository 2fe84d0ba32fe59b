import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { FastifyBaseLogger } from 'fastify';
import { BrowserPool, type BrowserPage } from '../../src/tools/browser.js';
import { Tools } from '../../src/tools/locate.js';
import { decodeScene } from '../../src/motion/scene/decode.js';
import { evaluate } from '../../src/motion/scene/evaluate.js';
import { createExpressionEvaluator } from '../../src/motion/scene/expressions.js';
import type { Approximation, DisplayList, DisplayNode } from '../../src/motion/scene/display.js';
import type { Composition } from '../../src/motion/scene/model.js';
import { previewHtml } from '../../src/motion/preview/page.js';
import type { PreparedFrames } from '../../src/motion/preview/frames.js';
import { findFont } from '../../src/motion/preview/fonts.js';

/**
 * After Effects' own renders as the truth a preview is compared with (../shared/fixtures/after-effects/ae-renders,
 * INDEX.md there): each project with the frames After Effects rendered from it, and the fair comparison (AE's RGBA
 * composited over the composition's background, the same frame drawn at the render's size, every pixel compared).
 */

export const AE_RENDERS = path.resolve('../shared/fixtures/after-effects/ae-renders');

export interface AeFrame {
  /** Frame number of the composition (its time is frame / fps). */
  frame: number;
  png: string;
}

export interface AeProject {
  /** `group/name`, e.g. `transform/anchor` or `Lottie-Windows/Gradient`. */
  name: string;
  aep: string;
  /** The composition rendered (the name in the Lottie export beside the project). */
  composition: string;
  frames: AeFrame[];
  /** Footage files the project uses, kept beside it (uploaded to the board under their own names). */
  footage: string[];
}

/** The composition a Lottie export was made from (its `nm`); "Comp 1" when it has none. */
function lottieName(file: string): string {
  try {
    const nm = (JSON.parse(fs.readFileSync(file, 'utf8')) as { nm?: unknown }).nm;
    return typeof nm === 'string' && nm ? nm : 'Comp 1';
  } catch {
    return 'Comp 1';
  }
}

/** Every project with After Effects' renders under `root`, sorted by name. */
export function aeProjects(root = AE_RENDERS): AeProject[] {
  const out: AeProject[] = [];
  const lf = path.join(root, 'LottieFiles__test-files');
  if (fs.existsSync(lf)) {
    for (const group of fs.readdirSync(lf, { withFileTypes: true })) {
      if (!group.isDirectory()) continue;
      const dir = path.join(lf, group.name);
      const files = fs.readdirSync(dir);
      const footage = files.filter((f) => f === 'asset.png').map((f) => path.join(dir, f));
      for (const aep of files.filter((f) => f.endsWith('.aep'))) {
        const base = aep.slice(0, -4);
        const frames = files
          .map((f) => new RegExp(`^${base.replace(/[-.]/g, '\\$&')}-(\\d+)\\.png$`).exec(f))
          .filter((m): m is RegExpExecArray => !!m)
          .map((m) => ({ frame: Number(m[1]), png: path.join(dir, m[0]) }));
        const composition = lottieName(path.join(dir, `${base}.json`));
        out.push({ name: `${group.name}/${base}`, aep: path.join(dir, aep), composition, frames, footage });
      }
    }
  }
  const lw = path.join(root, 'CommunityToolkit__Lottie-Windows');
  if (fs.existsSync(lw)) {
    for (const test of fs.readdirSync(lw, { withFileTypes: true })) {
      const dir = path.join(lw, test.name);
      if (!test.isDirectory() || !fs.existsSync(path.join(dir, 'AfterEffects.aep'))) continue;
      const frames = fs
        .readdirSync(path.join(dir, 'Frames'))
        .map((f) => /^frame(\d+)\.png$/.exec(f))
        .filter((m): m is RegExpExecArray => !!m)
        .map((m) => ({ frame: Number(m[1]), png: path.join(dir, 'Frames', m[0]) }));
      out.push({
        name: `Lottie-Windows/${test.name}`,
        aep: path.join(dir, 'AfterEffects.aep'),
        composition: lottieName(path.join(dir, 'Lottie.json')),
        frames,
        footage: [],
      });
    }
  }
  for (const p of out) p.frames.sort((a, b) => a.frame - b.frame);
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The time to draw for After Effects' frame `frame`: just inside the frame, as INDEX.md says. */
export const frameTime = (frame: number, fps: number) => (frame + 0.01) / fps;

export interface FrameDiff {
  /** Mean over pixels of the largest channel difference (0..255). */
  mean: number;
  /** The largest channel difference anywhere. */
  max: number;
  /** Share of pixels whose largest channel difference is over 16. */
  off: number;
}

/**
 * Compares After Effects' render (RGBA, transparent where nothing is drawn) composited over `background` (RGB 0..255)
 * with a preview's picture of the same size (its alpha ignored: the preview draws the background itself).
 */
export async function compareFrames(
  aePng: string | Buffer,
  previewPng: string | Buffer,
  background: [number, number, number],
): Promise<FrameDiff> {
  const ae = await sharp(aePng).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const pv = await sharp(previewPng).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  if (ae.info.width !== pv.info.width || ae.info.height !== pv.info.height)
    throw new Error(
      `sizes differ: After Effects ${ae.info.width}x${ae.info.height}, preview ${pv.info.width}x${pv.info.height}`,
    );
  const n = ae.info.width * ae.info.height;
  let sum = 0;
  let max = 0;
  let off = 0;
  for (let k = 0; k < n; k++) {
    const a = ae.data[k * 4 + 3] / 255;
    let worst = 0;
    for (let c = 0; c < 3; c++) {
      const want = ae.data[k * 4 + c] * a + background[c] * (1 - a);
      worst = Math.max(worst, Math.abs(want - pv.data[k * 3 + c]));
    }
    sum += worst;
    if (worst > max) max = worst;
    if (worst > 16) off++;
  }
  return { mean: sum / n, max, off: off / n };
}

/** The judge's threshold: mean of the largest channel difference at most this on every frame. */
export const NEAR_IDENTICAL = 2;

/** What the preview drew for a project's frames. */
export interface Drawn {
  composition: Composition;
  /** One PNG per time asked, at the composition's size. */
  pngs: Buffer[];
  approximations: Approximation[];
}

const quiet = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
} as unknown as FastifyBaseLogger;

/**
 * The page's virtual clock reduced to what the drawer asks of it: draw now, and say when the drawing is done. The
 * window outlives `setContent` (document.open keeps it), so each frame's drawing is known by its own token.
 */
const clock = (token: number) =>
  `window.__bmsClock = { willDraw: () => true, waitFor: (p) => { window.__drawn = { token: ${token}, p } } };`;

/**
 * The preview's own pipeline, batched for many frames: the project decoded (decode.ts), each frame's display list
 * evaluated with the expression sandbox (evaluate.ts), drawn by the preview page (page.ts with draw-script.ts) in one
 * headless Chromium page per project, each frame read from the page's canvas. What the preview endpoint adds around
 * it (sampling files, the virtual clock, the screenshot) does not change a pixel; ae-renders.test.ts checks that
 * against the endpoint on one project.
 */
export class AePreviewer {
  // screenshots: no begin-frame control, so the page's requestAnimationFrame runs by itself
  private readonly pool = new BrowserPool(new Tools(process.env), quiet, { maxPages: 1, screenshots: true });

  async draw(project: AeProject, times?: (fps: number) => number[]): Promise<Drawn> {
    const scene = decodeScene(fs.readFileSync(project.aep));
    const comp = scene.compositions.find((c) => c.name === project.composition);
    if (!comp) throw new Error(`no composition "${project.composition}" in ${project.aep}`);
    const at = times ? times(comp.frameRate) : project.frames.map((f) => frameTime(f.frame, comp.frameRate));
    const expressions = await createExpressionEvaluator();
    let lists: DisplayList[];
    try {
      lists = at.map((t) => evaluate(scene, comp.id, t, { expressions }));
    } finally {
      expressions.dispose();
    }
    const footage: PreparedFrames['footage'] = {};
    for (const f of scene.footage) {
      // the path is the author's (Windows' backslashes included): found by its file name, as the preview finds it
      const wanted = (f.path ?? f.name).split(/[\\/]/).pop();
      const file = project.footage.find((x) => path.basename(x) === wanted);
      footage[f.id] = file
        ? { image: `data:image/png;base64,${fs.readFileSync(file).toString('base64')}` }
        : { missing: true };
    }
    const fonts: PreparedFrames['fonts'] = {};
    const names = new Set<string>();
    const walk = (n: DisplayNode) => {
      if (n.kind === 'text') names.add(n.font);
      if (n.kind === 'group') {
        n.children.forEach(walk);
        if (n.matte) walk(n.matte.node);
      }
    };
    for (const l of lists) walk(l.root);
    for (const [k, ps] of [...names].entries()) {
      const found = await findFont(ps);
      fonts[ps] = found.file
        ? {
            family: `f${k}`,
            loaded: true,
            url: `data:font/ttf;base64,${fs.readFileSync(found.file).toString('base64')}`,
          }
        : { family: found.family, loaded: false };
    }
    const size = { width: comp.width, height: comp.height };
    const { page } = await this.page();
    await page.setViewport({ ...size, deviceScaleFactor: 1 });
    const pngs: Buffer[] = [];
    for (const list of lists) {
      const prepared: PreparedFrames = {
        frames: [0],
        times: [list.time],
        single: list,
        chunks: 0,
        composition: { ...size, background: comp.background },
        footage,
        fonts,
        approximations: [],
      };
      const html = previewHtml({ ...size, fps: comp.frameRate } as Parameters<typeof previewHtml>[0], prepared);
      const token = ++this.frames;
      await page.setContent(html.replace('<head>', `<head><script>${clock(token)}</script>`));
      await page.waitForFunction(`window.__drawn && window.__drawn.token === ${token}`, { polling: 10 });
      const url = await page.evaluate(() =>
        (window as unknown as { __drawn: { p: Promise<unknown> } }).__drawn.p.then(() =>
          (document.getElementById('out') as HTMLCanvasElement).toDataURL('image/png'),
        ),
      );
      pngs.push(Buffer.from(url.slice(url.indexOf(',') + 1), 'base64'));
    }
    const seen = new Set<string>();
    const approximations = lists
      .flatMap((l) => l.approximations)
      .filter((a) => {
        const key = JSON.stringify(a);
        return !seen.has(key) && !!seen.add(key);
      });
    return { composition: comp, pngs, approximations };
  }

  /** One page for every project (a page per project costs a context each), lent by the pool until `close`. */
  private opened?: Promise<BrowserPage>;
  private frames = 0;
  private release?: () => void;
  private done?: Promise<unknown>;
  private page(): Promise<BrowserPage> {
    this.opened ??= new Promise<BrowserPage>((resolve, reject) => {
      this.done = this.pool
        .withPage({ width: 80, height: 80 }, (p) => {
          resolve(p);
          return new Promise<void>((r) => (this.release = r));
        })
        .catch(reject);
    });
    return this.opened;
  }

  async close(): Promise<void> {
    this.release?.();
    await this.done;
    await this.pool.close();
  }
}
