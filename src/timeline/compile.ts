import { curveExpr, isAnimated, num, range, type Curve } from './curves.js';
import { encoderArgs, hasAlpha, type Codec, type Format } from './render-options.js';
import { buildRenderPlan, timelineError, type Layer, type RenderPlan } from './timeline.js';
import type { ProjectData } from './project.js';

/** A clip's media file as probed before compiling. */
export interface ClipInput {
  path: string;
  /** Display size (after the file's rotation metadata). */
  width: number;
  height: number;
  hasAudio: boolean;
  /** A still image: looped for the item's length. */
  still: boolean;
}

export interface OutputSpec {
  path: string;
  width: number;
  height: number;
  fps: number;
  format: Format;
  codec: Codec;
  crf: number;
}

interface CompiledRender {
  args: string[];
  /** Seconds of output, for progress. */
  duration: number;
  /** The filter_complex alone, for logs and tests. */
  graph: string;
}

/** Transparent margin around a warped layer, so `perspective` samples transparency beyond the picture's edges. */
const MARGIN = 2;
/** Motion blur renders this many sub-frames per second at most (sub-frames per frame = budget / fps, 2..16). */
const SUBFRAME_BUDGET = 240;

/** Sizes and offsets on the 4:2:0 chroma grid; a size is at least 2 pixels. */
const even = (n: number) => 2 * Math.round(n / 2);
const evenSize = (n: number) => Math.max(2, even(n));
const floorEven = (n: number) => 2 * Math.floor(n / 2);
const staticValue = (c: Curve) => (c.keys.length ? c.keys[0].v : c.base);
const quote = (expr: string) => `'${expr}'`;

/** Sub-frames per output frame and how many of them the shutter spans. */
function motionBlurSampling(plan: RenderPlan, fps: number): { subframes: number; shutterFrames: number } {
  if (!plan.motionBlur.enabled) return { subframes: 1, shutterFrames: 1 };
  const subframes = Math.max(2, Math.min(16, Math.floor(SUBFRAME_BUDGET / fps)));
  const shutterFrames = Math.round((subframes * plan.motionBlur.shutter) / 360);
  return shutterFrames < 2 ? { subframes: 1, shutterFrames: 1 } : { subframes, shutterFrames };
}

interface Geometry {
  /** Filters after `fps`, producing the layer (with alpha where needed). */
  filters: string[];
  /**
   * Where in `filters` the opacity goes: a point where the layer is still opaque (its alpha can be replaced by the
   * opacity mask) and has the size `maskSize`.
   */
  opacityAt: number;
  maskSize: { w: number; h: number };
  x: string;
  y: string;
}

/**
 * Static zoom/scale and no rotation: the clip is scaled once to its final size and placed by overlay's x/y
 * (per-frame expressions when the pan is keyframed). A layer reaching beyond the frame is cropped to what shows.
 */
function placeGeometry(
  layer: Layer,
  fw: number,
  fh: number,
  W: number,
  H: number,
  local: string,
  needsAlpha: boolean,
): Geometry | null {
  const { props, origin } = layer;
  const s = staticValue(props.zoom) * staticValue(props.scale);
  const lw = evenSize(fw * s);
  const lh = evenSize(fh * s);
  const x0 = (W - fw) / 2 + origin.x * fw - origin.x * lw;
  const y0 = (H - fh) / 2 + origin.y * fh - origin.y * lh;
  const filters = [`scale=${lw}:${lh}`];
  if (needsAlpha) filters.push('format=yuva420p');
  if (isAnimated(props.panX) || isAnimated(props.panY)) {
    return {
      filters,
      maskSize: { w: lw, h: lh },
      opacityAt: filters.length,
      x: quote(`${num(x0)}+${W}*(${curveExpr(props.panX, local)})`),
      y: quote(`${num(y0)}+${H}*(${curveExpr(props.panY, local)})`),
    };
  }
  const x = Math.round(x0 + staticValue(props.panX) * W);
  const y = Math.round(y0 + staticValue(props.panY) * H);
  // Crop offsets and sizes stay on the chroma grid: ffmpeg rounds odd ones down, which would desync the mask size.
  const cx = floorEven(Math.max(0, -x));
  const cy = floorEven(Math.max(0, -y));
  const cw = floorEven(Math.min(lw - cx, W - Math.max(0, x)));
  const ch = floorEven(Math.min(lh - cy, H - Math.max(0, y)));
  if (cw <= 0 || ch <= 0) return null;
  if (cw < lw || ch < lh) filters.push(`crop=${cw}:${ch}:${cx}:${cy}`);
  // A layer cut on the left/top is placed where its first kept column/row falls (at most one pixel before the edge).
  const at = (pos: number, cut: number) => String(pos < 0 ? pos + cut : pos);
  return { filters, maskSize: { w: cw, h: ch }, opacityAt: filters.length, x: at(x, cx), y: at(y, cy) };
}

/**
 * Keyframed zoom/scale/rotation: the clip, fitted, sits on a transparent canvas the size of the frame (plus a
 * margin) and `perspective` (eval=frame, destination sense) moves the canvas corners where the affine transform
 * `pivot + s*R(rotation)*(p - pivot) + pan` sends them, frame by frame. perspective has no time variable, so the
 * item time is its frame counter (from 1) over the layer's constant rate. Works on the 2018 static build and current ffmpeg.
 */
function warpGeometry(layer: Layer, fw: number, fh: number, W: number, H: number, rate: number): Geometry {
  const { props, origin } = layer;
  // perspective's frame counter `in` starts at 1.
  const t = `(in-1)/${rate}`;
  const lw = Math.min(evenSize(fw), W);
  const lh = Math.min(evenSize(fh), H);
  const ax = even((W - lw) / 2) + MARGIN;
  const ay = even((H - lh) / 2) + MARGIN;
  const Wp = W + 2 * MARGIN;
  const Hp = H + 2 * MARGIN;
  const px = ax + origin.x * lw;
  const py = ay + origin.y * lh;
  const scale = `(${curveExpr(props.zoom, t)})*(${curveExpr(props.scale, t)})`;
  const rotated = isAnimated(props.rotation) || staticValue(props.rotation) !== 0;
  const angle = `(${curveExpr(props.rotation, t)})*PI/180`;
  const cos = rotated ? `cos(${angle})` : '1';
  const sin = rotated ? `sin(${angle})` : '0';
  const panX = `${W}*(${curveExpr(props.panX, t)})`;
  const panY = `${H}*(${curveExpr(props.panY, t)})`;
  const corner = (qx: number, qy: number) => {
    const dx = num(qx - px);
    const dy = num(qy - py);
    return [
      quote(`${num(px)}+${scale}*(${cos}*${dx}-${sin}*${dy})+${panX}`),
      quote(`${num(py)}+${scale}*(${sin}*${dx}+${cos}*${dy})+${panY}`),
    ];
  };
  const [x0, y0] = corner(0, 0);
  const [x1, y1] = corner(Wp, 0);
  const [x2, y2] = corner(0, Hp);
  const [x3, y3] = corner(Wp, Hp);
  const filters = [
    `scale=${lw}:${lh}`,
    'format=yuva420p',
    `pad=${Wp}:${Hp}:${ax}:${ay}:color=black@0`,
    `perspective=x0=${x0}:y0=${y0}:x1=${x1}:y1=${y1}:x2=${x2}:y2=${y2}:x3=${x3}:y3=${y3}:sense=destination:eval=frame`,
  ];
  return { filters, opacityAt: 2, maskSize: { w: lw, h: lh }, x: String(-MARGIN), y: String(-MARGIN) };
}

/**
 * Can `zoompan` do this layer's motion? Only a pure zoom of a layer that fills the frame, never below 1 (zoompan
 * crops into the picture; it cannot show past its edges): the Ken Burns move. Then it is much cheaper than warping.
 */
function zoompanFits(layer: Layer, fw: number, fh: number, W: number, H: number): boolean {
  const { props } = layer;
  const [zoomMin, zoomMax] = range(props.zoom);
  const [scaleMin, scaleMax] = range(props.scale);
  return (
    Math.abs(fw - W) < 1 &&
    Math.abs(fh - H) < 1 &&
    zoomMin * scaleMin >= 1 &&
    zoomMax * scaleMax <= 10 &&
    !isAnimated(props.rotation) &&
    staticValue(props.rotation) === 0 &&
    !isAnimated(props.panX) &&
    !isAnimated(props.panY) &&
    staticValue(props.panX) === 0 &&
    staticValue(props.panY) === 0
  );
}

/**
 * Keyframed zoom of a frame-filling layer: zoompan crops the part of the source that stays in view (the pivot keeps
 * its place) and scales it to the frame. Its output frame counter `on` starts at 0, one output frame per input frame.
 */
function zoompanGeometry(layer: Layer, W: number, H: number, rate: number, needsAlpha: boolean): Geometry {
  const { props, origin } = layer;
  const t = `on/${rate}`;
  const z = quote(`(${curveExpr(props.zoom, t)})*(${curveExpr(props.scale, t)})`);
  const x = quote(`${num(origin.x)}*iw*(1-1/zoom)`);
  const y = quote(`${num(origin.y)}*ih*(1-1/zoom)`);
  const filters = [`zoompan=z=${z}:x=${x}:y=${y}:d=1:s=${W}x${H}:fps=${rate}`];
  if (needsAlpha) filters.push('format=yuva420p');
  return { filters, opacityAt: filters.length, maskSize: { w: W, h: H }, x: '0', y: '0' };
}

/**
 * Compiles a checked plan into one ffmpeg command: one input per item (input-seeked to its in point), one
 * filter_complex that conforms each layer's rate, scales, places or warps it, applies its opacity, shifts it to its
 * timeline start and overlays the layers bottom to top on a black (or transparent) canvas; audio of the items is
 * delayed to their starts and mixed. Motion blur renders at fps*N and averages the shutter's sub-frames (tmix).
 */
export function compilePlan(plan: RenderPlan, inputs: Record<string, ClipInput>, out: OutputSpec): CompiledRender {
  if (plan.layers.length === 0 || plan.duration <= 0)
    throw timelineError('the timeline has no visible items to render');
  const W = out.width;
  const H = out.height;
  const { subframes, shutterFrames } = motionBlurSampling(plan, out.fps);
  const rate = out.fps * subframes;
  const duration = Number(plan.duration.toFixed(3));
  const alpha = hasAlpha(out.codec);
  const enc = encoderArgs(out);

  const inputArgs: string[] = [];
  const chains: string[] = [
    alpha
      ? `color=c=black@0.0:s=${W}x${H}:r=${rate}:d=${duration},format=yuva420p[base0]`
      : `color=c=black:s=${W}x${H}:r=${rate}:d=${duration},format=yuv420p[base0]`,
  ];
  const audio: { chain: string; label: string }[] = [];
  let current = 'base0';

  plan.layers.forEach((layer, k) => {
    const input = inputs[layer.clipId];
    if (!input) throw timelineError(`${layer.label}: no media for clip "${layer.clipId}"`);
    const len = num(layer.duration);
    if (input.still) inputArgs.push('-loop', '1', '-framerate', String(rate), '-t', len, '-i', input.path);
    else inputArgs.push(...(layer.trimStart > 0 ? ['-ss', num(layer.trimStart)] : []), '-t', len, '-i', input.path);

    if (input.hasAudio && !input.still) {
      const ms = Math.round(layer.start * 1000);
      audio.push({
        chain: `[${k}:a]asetpts=PTS-STARTPTS,aresample=48000,aformat=sample_fmts=fltp:channel_layouts=stereo,adelay=${ms}|${ms}[a${k}]`,
        label: `[a${k}]`,
      });
    }

    const { props } = layer;
    const opacityAnimated = isAnimated(props.opacity);
    const opacity = staticValue(props.opacity);
    if (!opacityAnimated && opacity <= 0) return;
    const fit = Math.min(W / input.width, H / input.height);
    const fw = input.width * fit;
    const fh = input.height * fit;
    const warp =
      isAnimated(props.zoom) ||
      isAnimated(props.scale) ||
      isAnimated(props.rotation) ||
      staticValue(props.rotation) !== 0;
    const needsAlpha = opacityAnimated || opacity < 100;
    const local = `(t-${num(layer.start)})`;
    const geometry = !warp
      ? placeGeometry(layer, fw, fh, W, H, local, needsAlpha)
      : zoompanFits(layer, fw, fh, W, H)
        ? zoompanGeometry(layer, W, H, rate, needsAlpha)
        : warpGeometry(layer, fw, fh, W, H, rate);
    if (!geometry) return;

    const filters = [...geometry.filters];
    if (opacityAnimated) {
      const { w, h } = geometry.maskSize;
      // The opacity of each frame, computed once on a 2x2 gray frame and stretched to the layer (nearest: it is flat),
      // becomes the alpha of the still opaque layer. The mask runs a second longer: the 2018 alphamerge pairs frames
      // in order and must not run out first. Newer builds (5.1) pair by timestamp and repeat the layer's last frame
      // while mask frames remain, so the merged layer is trimmed to the item's length: it ends with its item on both.
      const level = `clip(255*(${curveExpr(props.opacity, 'T')})/100,0,255)`;
      chains.push(
        `color=c=black:s=2x2:r=${rate}:d=${num(layer.duration + 1)},format=gray,geq=lum=${quote(level)},scale=${w}:${h}:flags=neighbor[m${k}]`,
      );
      const head = [...filters.slice(0, geometry.opacityAt).filter((f) => f !== 'format=yuva420p'), 'format=yuva420p'];
      chains.push(`[${k}:v]setpts=PTS-STARTPTS,fps=${rate},${head.join(',')}[p${k}]`);
      const rest = filters.slice(geometry.opacityAt);
      chains.push(
        `[p${k}][m${k}]alphamerge,${['trim=duration=' + len, ...rest].join(',')},setpts=PTS+${num(layer.start)}/TB[v${k}]`,
      );
    } else {
      if (opacity < 100) filters.splice(geometry.opacityAt, 0, `lut=y=val:u=val:v=val:a=val*${num(opacity / 100)}`);
      chains.push(
        `[${k}:v]setpts=PTS-STARTPTS,fps=${rate},${filters.join(',')},setpts=PTS+${num(layer.start)}/TB[v${k}]`,
      );
    }
    chains.push(`[${current}][v${k}]overlay=x=${geometry.x}:y=${geometry.y}:format=yuv420:eof_action=pass[o${k}]`);
    current = `o${k}`;
  });

  const finish =
    shutterFrames > 1
      ? [`tmix=frames=${shutterFrames}:weights=${quote(Array(shutterFrames).fill('1').join(' '))}`, `fps=${out.fps}`]
      : [];
  chains.push(`[${current}]${[...finish, `format=${enc.pixFmt}`].join(',')}[vout]`);
  const maps = ['-map', '[vout]'];
  if (audio.length > 0) {
    chains.push(...audio.map((a) => a.chain));
    const labels = audio.map((a) => a.label).join('');
    chains.push(
      audio.length > 1
        ? `${labels}amix=inputs=${audio.length}:duration=longest:dropout_transition=0[aout]`
        : `${labels}anull[aout]`,
    );
    maps.push('-map', '[aout]', ...enc.audio);
  }
  const graph = chains.join(';');
  const args = [
    ...inputArgs,
    '-filter_complex',
    graph,
    ...maps,
    ...enc.video,
    '-r',
    String(out.fps),
    '-t',
    String(duration),
    ...enc.muxer,
    out.path,
  ];
  return { args, duration, graph };
}

/** The pure compiler: project data, probed inputs by clip id, output settings -> ffmpeg arguments. */
export function compileTimeline(
  project: ProjectData,
  inputs: Record<string, ClipInput>,
  out: OutputSpec,
): CompiledRender {
  return compilePlan(buildRenderPlan(project), inputs, out);
}
