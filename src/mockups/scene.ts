import { stateAt, DEFAULT_ANGLE } from './animation.js';
import { drawDevice } from './devices.js';
import type { BackgroundT, ProjectStateT } from './schemas.js';

/** The camera sits this many scene units in front of the z = 0 plane (the CSS perspective distance). */
export const CAMERA_DISTANCE = 2000;
/** The background is a plane this far from the camera (for depth of field only: it always fills the frame). */
export const BACKGROUND_DISTANCE = 2 * CAMERA_DISTANCE;
/** Scene units per shorter side of the frame. */
const UNITS_PER_SHORT_SIDE = 1080;
/** Blur radii are rounded to this many pixels, so a layer's look changes only in steps (each is drawn once). */
const BLUR_STEP_PX = 0.5;
/** Distinct pre-blurred copies of one background image at most; more are merged into coarser steps. */
const MAX_BLUR_LEVELS = 12;

export interface Frame {
  width: number;
  height: number;
  fps: number;
  frames: number;
  /** transparent_background: nothing is drawn behind the device, the page's own background is transparent. */
  transparent: boolean;
}

/** What a frame's background shows. */
export type BackgroundLook =
  | { kind: 'none' }
  | { kind: 'css'; css: string }
  | { kind: 'image'; url: string; blur: number };

export interface FrameLook {
  transform: string;
  /** Blur (Gaussian standard deviation, pixels) of the device, 0 when in focus. */
  deviceBlur: number;
  background: BackgroundLook;
}

/** Pixels per scene unit. */
export const unitPx = (f: Pick<Frame, 'width' | 'height'>): number =>
  Math.min(f.width, f.height) / UNITS_PER_SHORT_SIDE;

/** Depth of field: Gaussian blur (scene units) of a layer `distance` units from the camera. */
export function blurUnits(
  dof: { enabled: boolean; focus_distance: number; aperture: number },
  distance: number,
): number {
  if (!dof.enabled || distance <= 0) return 0;
  return (dof.aperture * Math.abs(distance - dof.focus_distance)) / distance;
}

const fixed = (n: number) => String(Math.round(n * 10000) / 10000);
const quantize = (px: number, step: number) => (px < step / 2 ? 0 : Math.round(px / step) * step);

function backgroundLook(bg: BackgroundT, blurPx: number): BackgroundLook {
  const p = bg.params;
  switch (bg.mode) {
    case 'gradient':
      // A linear gradient blurred is the same gradient: depth of field changes nothing on it.
      return {
        kind: 'css',
        css: `linear-gradient(${fixed(p.angle ?? DEFAULT_ANGLE)}deg,${p.from ?? '#000000'},${p.to ?? '#ffffff'})`,
      };
    case 'solid':
      return { kind: 'css', css: p.color ?? '#000000' };
    case 'image':
      return p.url ? { kind: 'image', url: p.url, blur: blurPx } : { kind: 'none' };
    case 'transparent':
      return { kind: 'none' };
  }
}

/**
 * The look of every frame (values at t = f / fps), with blur radii stepped so each distinct look is drawn once, and
 * the largest on-screen magnification of the device (scale and perspective), to which the screen video is pre-scaled.
 */
export function planFrames(project: ProjectStateT, frame: Frame): { looks: FrameLook[]; zoom: number } {
  const u = unitPx(frame);
  const looks: FrameLook[] = [];
  let zoom = 1;
  for (let f = 0; f < frame.frames; f++) {
    const s = stateAt(project, f / frame.fps);
    const { position: p, rotation: r, scale: sc } = s.transform;
    zoom = Math.max(zoom, (Math.max(sc.x, sc.y) * CAMERA_DISTANCE) / (CAMERA_DISTANCE - p.z));
    const transform =
      `translate3d(${fixed(p.x * u)}px,${fixed(p.y * u)}px,${fixed(p.z * u)}px) ` +
      `rotateX(${fixed(r.x)}deg) rotateY(${fixed(r.y)}deg) rotateZ(${fixed(r.z)}deg) scale3d(${fixed(sc.x)},${fixed(sc.y)},${fixed(sc.z)})`;
    const deviceBlur = quantize(blurUnits(s.dof, CAMERA_DISTANCE - p.z) * u, BLUR_STEP_PX);
    const background = frame.transparent
      ? ({ kind: 'none' } as const)
      : backgroundLook(s.background, blurUnits(s.dof, BACKGROUND_DISTANCE) * u);
    looks.push({ transform, deviceBlur, background });
  }
  // Background blur levels: BLUR_STEP_PX apart, or coarser when an animated aperture would need too many copies.
  const raw = looks.flatMap((l) => (l.background.kind === 'image' ? [l.background.blur] : []));
  if (raw.length) {
    const spread = Math.max(...raw) - Math.min(...raw);
    const step = Math.max(BLUR_STEP_PX, spread / (MAX_BLUR_LEVELS - 1));
    for (const l of looks)
      if (l.background.kind === 'image') l.background = { ...l.background, blur: quantize(l.background.blur, step) };
  }
  return { looks, zoom };
}

/** Key of a pre-blurred background image. */
export const layerKey = (url: string, blur: number) => `${blur}|${url}`;

export interface SceneInputs {
  project: ProjectStateT;
  frame: Frame;
  looks: FrameLook[];
  /**
   * What the screens show: an image, a video prepared as its frames' JPEGs in one file (`offsets` of every frame and
   * the end, `chunks` the first frame of each piece the page fetches at once; see media.ts prepareScreenFrames), or
   * nothing.
   */
  screen: { kind: 'image'; url: string } | { kind: 'video'; url: string; offsets: number[]; chunks: number[] } | null;
  /** Served URL of each pre-blurred background image, by layerKey. */
  layers: Map<string, string>;
}

const attr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
/** A URL inside `url('...')` in a style attribute: quotes, backslashes and parentheses percent-encoded. */
const cssUrl = (s: string) => attr(s.replace(/['"\\()]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`));

/**
 * The HTML page of a mockup: a background layer, a perspective stage, the device on a rig that carries the 3D
 * transform. Every frame's look is computed here in advance and the page only applies the one of the current frame
 * (from requestAnimationFrame, on the renderer's virtual clock), touching only what changed: a static device or
 * background is painted once and then only composited.
 */
export function sceneHtml(inputs: SceneInputs): string {
  const { frame, looks, screen } = inputs;
  // Every screen is a canvas drawn from a decoded picture at the size it was prepared for (the still, or the video's
  // frame), so the browser only composites it. A CSS background of the screen went through the compositor's image
  // decode cache, whose state decided how it was scaled: two renders of one project gave one of two files (CI, 2026-11).
  const content = () => (screen ? `<canvas class="shot"></canvas>` : '');
  const drawing = drawDevice(inputs.project.device, frame.width, frame.height, content);
  const layerUrls = [...inputs.layers.entries()];
  const layerIndex = new Map(layerUrls.map(([key], i) => [key, i]));
  // Backgrounds as indexes into a table of distinct looks: -1 none, css strings, or image layers.
  const bgTable: (string | number)[] = [];
  const bgIndex = new Map<string, number>();
  const bgOf = (b: BackgroundLook): number => {
    if (b.kind === 'none') return -1;
    const value = b.kind === 'css' ? b.css : layerIndex.get(layerKey(b.url, b.blur))!;
    const key = JSON.stringify(value);
    let i = bgIndex.get(key);
    if (i === undefined) {
      i = bgTable.length;
      bgTable.push(value);
      bgIndex.set(key, i);
    }
    return i;
  };
  const data = {
    fps: frame.fps,
    transform: looks.map((l) => l.transform),
    blur: looks.map((l) => l.deviceBlur),
    bg: looks.map((l) => bgOf(l.background)),
    bgTable,
    picture: screen?.kind === 'image' ? screen.url : null,
    video: screen?.kind === 'video' ? { url: screen.url, offsets: screen.offsets, chunks: screen.chunks } : null,
  };
  const perspective = CAMERA_DISTANCE * unitPx(frame);
  // Pictures are CSS backgrounds: Chromium may composite an <img> as its own layer, decided by when it finished
  // loading, and the two layerings draw edges differently, so <img> made renders differ between runs. The hidden
  // <img>s are there so the renderer's ready() waits for every picture to load and decode before frame 0.
  const preload = layerUrls.map(([, url]) => `<img class="preload" src="${attr(url)}" alt="">`).join('');
  const layersHtml = layerUrls
    .map(([, url], i) => `<div id="layer${i}" class="layer" style="background-image:url('${cssUrl(url)}')"></div>`)
    .join('');
  return `<!doctype html>
<html><head><meta charset="utf-8"><style>
html,body{margin:0;padding:0;width:${frame.width}px;height:${frame.height}px;overflow:hidden;background:${frame.transparent ? 'transparent' : '#000'}}
#bg{position:absolute;left:0;top:0;width:100%;height:100%}
.layer{position:absolute;left:0;top:0;width:100%;height:100%;background-size:cover;background-position:center;display:none}
.preload{display:none}
#stage{position:absolute;left:0;top:0;width:100%;height:100%;perspective:${fixed(perspective)}px;perspective-origin:50% 50%}
#rig{position:absolute;left:50%;top:50%;width:0;height:0;will-change:transform}
#device{position:absolute;left:${fixed(-drawing.width / 2)}px;top:${fixed(-drawing.height / 2)}px;width:${fixed(drawing.width)}px;height:${fixed(drawing.height)}px${looks.some((l) => l.deviceBlur > 0) ? ';will-change:filter' : ''}}
#device canvas{display:block;width:100%;height:100%;object-fit:cover}
/* Its own layer: a new video frame redraws the canvas alone, not the device around it and its shadow. */
#device canvas{will-change:transform}
</style></head><body>
${preload}<div id="bg">${layersHtml}</div>
<div id="stage"><div id="rig"><div id="device">${drawing.html}</div></div></div>
<script>
(() => {
  const D = ${JSON.stringify(data).replace(/</g, '\\u003c')};
  const bg = document.getElementById('bg');
  const rig = document.getElementById('rig');
  const device = document.getElementById('device');
  const last = { transform: null, blur: null, bg: null };
  const apply = (f) => {
    if (D.transform[f] !== last.transform) rig.style.transform = last.transform = D.transform[f];
    if (D.blur[f] !== last.blur) device.style.filter = (last.blur = D.blur[f]) > 0 ? 'blur(' + D.blur[f] + 'px)' : '';
    if (D.bg[f] !== last.bg) {
      const prev = last.bg === null || last.bg < 0 ? null : D.bgTable[last.bg];
      if (typeof prev === 'number') document.getElementById('layer' + prev).style.display = 'none';
      const next = D.bg[f] < 0 ? null : D.bgTable[D.bg[f]];
      bg.style.background = typeof next === 'string' ? next : '';
      if (typeof next === 'number') document.getElementById('layer' + next).style.display = 'block';
      last.bg = D.bg[f];
    }
  };
  // Screens showing a video are canvases: frame f of the video is a prepared JPEG, read from its chunk of the
  // prepared file (one range request per chunk), decoded off the main thread (createImageBitmap) and drawn when the
  // page shows frame f; the clock waits for it (__bmsClock.waitFor), so the capture never shows an earlier frame. The
  // next frame (and chunk) loads meanwhile. No <video> to seek (a seek runs through the media pipeline, in each of the
  // renderer's pages), one picture for every screen (double-iphone, grid).
  const V = D.video;
  // A still may be transparent (the screen's black shows through); a video frame is a JPEG.
  const screens = Array.from(document.querySelectorAll('canvas.shot'), (c) => [c, c.getContext('2d', { alpha: !V })]);
  const paint = (bitmap) => {
    for (const [c, g] of screens) {
      if (c.width !== bitmap.width || c.height !== bitmap.height) { c.width = bitmap.width; c.height = bitmap.height; }
      g.drawImage(bitmap, 0, 0);
    }
    bitmap.close();
  };
  // The still is decoded once (off the main thread) and painted before frame 0: the clock's first step waits for it.
  if (D.picture && screens.length) {
    window.__bmsClock.waitFor(
      fetch(D.picture)
        .then((r) => { if (!r.ok) throw new Error('screen picture: HTTP ' + r.status); return r.blob(); })
        .then((b) => createImageBitmap(b))
        .then(paint),
    );
  }
  const chunkOf = (i) => {
    let c = 0;
    while (c + 1 < V.chunks.length && V.chunks[c + 1] <= i) c++;
    return c;
  };
  const chunks = new Map();
  const chunk = (c) => {
    let p = chunks.get(c);
    if (!p) {
      const start = V.offsets[V.chunks[c]];
      const end = V.offsets[c + 1 < V.chunks.length ? V.chunks[c + 1] : V.offsets.length - 1];
      p = fetch(V.url, { headers: { range: 'bytes=' + start + '-' + (end - 1) } })
        .then((r) => r.blob())
        .then((b) => {
          if (b.size !== end - start) throw new Error('screen video: ' + b.size + ' bytes of ' + (end - start) + ' at ' + start);
          return b;
        });
      chunks.set(c, p);
    }
    return p;
  };
  const pictures = new Map();
  const picture = (i) => {
    let p = pictures.get(i);
    if (!p) {
      const c = chunkOf(i);
      const base = V.offsets[V.chunks[c]];
      p = chunk(c).then((b) => createImageBitmap(b.slice(V.offsets[i] - base, V.offsets[i + 1] - base)));
      pictures.set(i, p);
    }
    return p;
  };
  let shown = -1;
  const showVideo = (f) => {
    const i = Math.min(f, V.offsets.length - 2);
    if (i === shown) return;
    shown = i;
    const drawn = picture(i).then((bitmap) => {
      paint(bitmap);
      pictures.delete(i);
      for (const c of chunks.keys()) if (c < chunkOf(i)) chunks.delete(c);
    });
    if (i + 1 < V.offsets.length - 1) picture(i + 1).catch(() => undefined);
    if (chunkOf(i) + 1 < V.chunks.length) chunk(chunkOf(i) + 1).catch(() => undefined);
    window.__bmsClock.waitFor(drawn);
  };
  // A frame the renderer only steps through (before a frame range's first, docs/html.md) is never captured: the
  // screen's picture is a function of f alone, so it is drawn for the frames that are captured only.
  const show = (f) => {
    apply(f);
    if (V && screens.length && window.__bmsClock.willDraw()) showVideo(f);
  };
  show(0);
  const tick = (now) => {
    show(Math.min(D.transform.length - 1, Math.max(0, Math.round((now * D.fps) / 1000))));
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})();
</script></body></html>`;
}
