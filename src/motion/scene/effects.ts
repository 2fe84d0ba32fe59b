import type { DisplayEffect, DisplayLayerStyle } from './display.js';
import type { Effect, EffectParam, Layer, LayerStyle, NumProperty } from './model.js';
import { inflateMatte } from './roto-matte.js';
import { sampleStops } from './sample.js';

/**
 * Effects and layer styles for the preview: which effects the page draws (draw-effects.ts), the defaults of their
 * parameters (After Effects leaves a parameter at its default out of the file), and the display list's form of an
 * effect at one instant. Parameters travel by their definition's English name ("Blurriness"), with After Effects'
 * stored units; the page converts (docs/motion.md "Effects").
 */

/** Effects that draw nothing: expression controls (their values feed expressions) and audio effects. */
const DRAW_NOTHING = new Set([
  'ADBE Slider Control',
  'ADBE Angle Control',
  'ADBE Checkbox Control',
  'ADBE Color Control',
  'ADBE Point Control',
  'ADBE Point3D Control',
  'ADBE Layer Control',
  'ADBE Dropdown Control',
]);

/**
 * Audio effects change sound only (`ADBE Aud Tone`, `ADBE Aud Reverb`...: nothing to draw, nothing to list for a
 * picture; Audio Spectrum and Audio Waveform, `ADBE AudSpect`/`ADBE AudWave`, draw and are listed); pseudo effects
 * are sets of expression controls.
 */
const isSilent = (mn: string) => DRAW_NOTHING.has(mn) || mn.startsWith('ADBE Aud ') || mn.startsWith('Pseudo/');

const BLACK = [0, 0, 0, 1];
const WHITE = [1, 1, 1, 1];

/**
 * The effects the page draws, by match name: the page's name for it and the defaults of parameters whose value the
 * file may leave out (Adobe's effect reference gives each default). `approximate` says what differs from After
 * Effects when the page draws it (listed as an approximation with that text).
 */
interface Drawn {
  kind: string;
  defaults?: Record<string, number[]>;
  approximate?: string;
}

const BLUR = { Blurriness: [0], 'Blur Dimensions': [1], 'Repeat Edge Pixels': [0] };
const LEVELS = {
  'Channel:': [1],
  'Input Black': [0],
  'Input White': [1],
  Gamma: [1],
  'Output Black': [0],
  'Output White': [1],
};

export const DRAWN_EFFECTS: Record<string, Drawn> = {
  'ADBE Gaussian Blur 2': { kind: 'gaussian-blur', defaults: BLUR },
  'ADBE Gaussian Blur': { kind: 'gaussian-blur', defaults: BLUR },
  'ADBE Fast Blur': { kind: 'gaussian-blur', defaults: BLUR },
  'ADBE Box Blur2': {
    kind: 'box-blur',
    defaults: { 'Blur Radius': [0], Iterations: [3], 'Blur Dimensions': [1], 'Repeat Edge Pixels': [0] },
  },
  'ADBE Box Blur': {
    kind: 'box-blur',
    defaults: { 'Blur Radius': [0], Iterations: [3], 'Blur Dimensions': [1], 'Repeat Edge Pixels': [0] },
  },
  'ADBE Motion Blur': { kind: 'directional-blur', defaults: { Direction: [0], 'Blur Length': [0] } },
  'ADBE Radial Blur': {
    kind: 'radial-blur',
    defaults: { Amount: [10], Type: [1], Antialiasing: [1] },
    approximate: 'Radial Blur is drawn with 32 samples (After Effects samples by its antialiasing quality)',
  },
  'ADBE Drop Shadow': {
    kind: 'drop-shadow',
    defaults: {
      'Shadow Color': BLACK,
      Opacity: [127.5],
      Direction: [135],
      Distance: [5],
      Softness: [0],
      'Shadow Only': [0],
    },
  },
  'ADBE Glo2': {
    kind: 'glow',
    defaults: {
      'Glow Based On': [2],
      'Glow Threshold': [153],
      'Glow Radius': [10],
      'Glow Intensity': [1],
      'Composite Original': [2],
      'Glow Operation': [3],
      'Glow Colors': [1],
      'Color A': WHITE,
      'Color B': BLACK,
      'Glow Dimensions': [1],
    },
    approximate: 'Glow is drawn as one blur of the pixels above the threshold (After Effects layers several)',
  },
  'ADBE Fill': {
    kind: 'fill',
    defaults: { Color: [1, 0, 0, 1], Invert: [0], 'Horizontal Feather': [0], 'Vertical Feather': [0], Opacity: [1] },
  },
  'ADBE Tint': { kind: 'tint', defaults: { 'Map Black To': BLACK, 'Map White To': WHITE, 'Amount to Tint': [100] } },
  'ADBE Tritone': {
    kind: 'tritone',
    defaults: { Highlights: WHITE, Midtones: [0.5, 0.4, 0.3, 1], Shadows: BLACK, 'Blend With Original': [0] },
  },
  'ADBE Easy Levels2': { kind: 'levels', defaults: LEVELS },
  'ADBE Pro Levels2': { kind: 'levels', defaults: LEVELS },
  'ADBE HUE SATURATION': {
    kind: 'hue-saturation',
    defaults: {
      'Master Hue': [0],
      'Master Saturation': [0],
      'Master Lightness': [0],
      Colorize: [0],
      'Colorize Hue': [0],
      'Colorize Saturation': [25],
      'Colorize Lightness': [0],
    },
  },
  'ADBE Brightness & Contrast 2': {
    kind: 'brightness-contrast',
    defaults: { Brightness: [0], Contrast: [0], 'Use Legacy': [0] },
  },
  'ADBE Exposure2': { kind: 'exposure', defaults: { Exposure: [0], Offset: [0], 'Gamma Correction': [1] } },
  'ADBE Invert': { kind: 'invert', defaults: { Channel: [1], 'Blend With Original': [0] } },
  'ADBE Change To Color': {
    kind: 'change-to-color',
    defaults: { Change: [1], 'Change By': [1], Hue: [0.05], Lightness: [0.5], Saturation: [0.5], Softness: [0.5] },
  },
  'ADBE Ramp': {
    kind: 'gradient-ramp',
    defaults: {
      'Start Color': BLACK,
      'End Color': WHITE,
      'Ramp Shape': [1],
      'Ramp Scatter': [0],
      'Blend With Original': [0],
    },
  },
  'ADBE 4ColorGradient': {
    kind: 'four-color-gradient',
    defaults: {
      'Color 1': [1, 1, 0, 1],
      'Color 2': [0, 1, 0, 1],
      'Color 3': [1, 0, 1, 1],
      'Color 4': [0, 0, 1, 1],
      Blend: [100],
      Jitter: [0],
      Opacity: [100],
      'Blending Mode': [1],
    },
  },
  'ADBE Linear Wipe': {
    kind: 'linear-wipe',
    defaults: { 'Transition Completion': [0], 'Wipe Angle': [90], Feather: [0] },
  },
  'ADBE Radial Wipe': {
    kind: 'radial-wipe',
    defaults: { 'Transition Completion': [0], 'Start Angle': [0], Wipe: [1], Feather: [0] },
  },
  'ADBE Venetian Blinds': {
    kind: 'venetian-blinds',
    defaults: { 'Transition Completion': [0], Direction: [0], Width: [10], Feather: [0] },
  },
  'ADBE Geometry2': {
    kind: 'transform',
    defaults: {
      'Uniform Scale': [1],
      Scale: [100],
      'Scale Height': [100],
      'Scale Width': [100],
      Skew: [0],
      'Skew Axis': [0],
      Rotation: [0],
      Opacity: [100],
    },
  },
  'ADBE Tile': {
    kind: 'motion-tile',
    defaults: {
      'Tile Width': [100],
      'Tile Height': [100],
      'Output Width': [100],
      'Output Height': [100],
      'Mirror Edges': [0],
      Phase: [0],
      'Horizontal Phase Shift': [0],
    },
  },
  'ADBE Wave Warp': {
    kind: 'wave-warp',
    defaults: {
      'Wave Type': [1],
      'Wave Height': [10],
      'Wave Width': [40],
      Direction: [90],
      'Wave Speed': [1],
      Phase: [0],
    },
  },
  'ADBE Displacement Map': {
    kind: 'displacement-map',
    defaults: {
      'Use For Horizontal Displacement': [1],
      'Max Horizontal Displacement': [5],
      'Use For Vertical Displacement': [2],
      'Max Vertical Displacement': [5],
    },
    approximate: 'Displacement Map reads the map layer as the composition shows it (not stretched or tiled)',
  },
  'ADBE Set Matte3': {
    kind: 'set-matte',
    defaults: { 'Use For Matte': [4], 'Invert Matte': [0], 'Composite Matte with Original': [1] },
  },
  'ADBE Set Matte2': {
    kind: 'set-matte',
    defaults: { 'Use For Matte': [4], 'Invert Matte': [0], 'Composite Matte with Original': [1] },
  },
  'ADBE Fractal Noise': {
    kind: 'fractal-noise',
    defaults: {
      'Fractal Type': [1],
      Invert: [0],
      Contrast: [100],
      Brightness: [0],
      Rotation: [0],
      'Uniform Scaling': [1],
      Scale: [100],
      'Scale Width': [100],
      'Scale Height': [100],
      Complexity: [6],
      'Sub Influence (%)': [70],
      'Sub Scaling': [56],
      Evolution: [0],
      'Random Seed': [0],
      Opacity: [100],
      'Blending Mode': [1],
    },
    approximate: "Fractal Noise is drawn with a value noise of the same scale and complexity, not After Effects' noise",
  },
  'ADBE Turbulent Displace': {
    kind: 'turbulent-displace',
    defaults: { Displacement: [1], Amount: [50], Size: [100], Complexity: [1], Evolution: [0], 'Random Seed': [0] },
    approximate:
      "Turbulent Displace moves pixels by a value noise of the same size and amount, not After Effects' noise",
  },
  // Roto Brush draws After Effects' own stored matte (roto-matte.ts); its refinement is listed (rotoApproximation)
  'ADBE Samurai': { kind: 'roto-brush' },
  'CC Light Sweep': {
    kind: 'light-sweep',
    defaults: {
      Direction: [35],
      Shape: [2],
      Width: [50],
      'Sweep Intensity': [50],
      'Edge Intensity': [100],
      'Edge Thickness': [1],
      'Light Color': WHITE,
      'Light Reception': [1],
    },
  },
};

/** The default of a parameter left out of the file, when it is known (else the definition's value is kept). */
export function effectDefault(effect: string, param: string): number[] | undefined {
  return DRAWN_EFFECTS[effect]?.defaults?.[param];
}

/**
 * An effect that leaves its layer as it is with the parameters it has: a Liquify whose distortion mesh was never
 * brushed (its data is the definition's, not keyframed) moves no pixel, whatever its brush settings.
 */
function leavesLayerAsIs(e: Effect): boolean {
  if (e.matchName !== 'ADBE LIQUIFY') return false;
  const mesh = e.params?.find((p) => p.matchName === 'ADBE LIQUIFY-0014');
  return mesh?.arbitrary === 'default' && !mesh.value.keyframes?.length;
}

/** How an effect is treated: drawn (with an approximation or not), silent (draws nothing), or not drawn. */
export function effectStatus(e: Effect): 'drawn' | 'silent' | 'missing' {
  if (isSilent(e.matchName) || leavesLayerAsIs(e)) return 'silent';
  if (e.matchName === 'ADBE Samurai' && !e.matte) return 'missing';
  return DRAWN_EFFECTS[e.matchName] ? 'drawn' : 'missing';
}

/**
 * An adjustment layer (an AV layer with the switch, or a shape or text layer with it) that the page draws: one with
 * an effect it draws. Its own pixels only say where the effects apply (draw-adjust.ts).
 */
export const isAdjustment = (l: Layer) => l.type === 'adjustment' || l.adjustment;
export const adjustsBelow = (l: Layer) =>
  isAdjustment(l) && l.effects.some((e) => e.enabled && effectStatus(e) === 'drawn');

/** What differs from After Effects when the page draws this effect at layer time `lt`, if anything. */
export const effectApproximation = (e: Effect, lt: number) =>
  e.matte ? rotoApproximation(e, lt) : DRAWN_EFFECTS[e.matchName]?.approximate;

/**
 * Roto Brush's controls past the stored matte that the page does not draw (docs/motion.md "Roto Brush"): Reduce
 * Chatter of the Fine-tune Roto Brush Matte step (a weighted average with neighbouring frames whose weights Adobe does
 * not give), and, whatever that step's switch, the Refine Edge matte around a base radius (Adobe's hair-detail
 * matting, not documented to the pixel), motion blur of the matte and Decontaminate Edge Colors.
 */
const ROTO_NOT_DRAWN: { param: string; when?: string; label?: string }[] = [
  { param: '/rmreducechatter', when: '/rmrefinematteenable' },
  { param: '/baserefineedgeradius', when: '/renderHB', label: 'Refine Edge' },
  { param: '/rmusemotionblur' },
  { param: '/rmcleanedgecolors' },
];

/** The stored matte's frame at layer time `lt` (the layer's source frame). */
const rotoFrame = (e: Effect, lt: number) => Math.floor(lt * e.matte!.frameRate + 1e-6);

/**
 * Roto Brush: the stored matte is the propagated segmentation; the page applies the Fine-tune Roto Brush Matte
 * step's Feather, Contrast and Shift Edge to it as Adobe documents them (draw-effects.ts). What it does not draw is
 * listed when set (ROTO_NOT_DRAWN). A frame with no stored matte draws the layer as it is: listed.
 */
function rotoApproximation(e: Effect, lt: number): string | undefined {
  if (!Object.hasOwn(e.matte!.frames, rotoFrame(e, lt)))
    return 'Roto Brush has no stored matte for this frame: the layer is drawn whole';
  const param = (mn: string) => e.params?.find((x) => x.matchName === mn);
  const set = (mn: string) => {
    const v = param(mn)?.value;
    return !!v && (v.value[0] !== 0 || !!v.keyframes?.length);
  };
  const names = ROTO_NOT_DRAWN.filter((n) => set(n.param) && (!n.when || set(n.when))).map(
    (n) => n.label ?? param(n.param)!.name,
  );
  if (!names.length) return undefined;
  return `Roto Brush's matte is drawn without ${names.join(', ')}`;
}

/** A parameter's value as the page gets it: a number for one dimension, else the array. */
const plain = (v: number[]) => (v.length === 1 ? v[0] : v);

/**
 * An effect at one instant for the display list: its kind and its parameters by name (layer parameters give the
 * layer's index in the composition). `num` samples a property at the layer's time, expressions included.
 */
export function displayEffect(
  e: Effect,
  num: (p: NumProperty) => number[],
  layerIndex: (id: number) => number | undefined,
  lt: number,
): DisplayEffect {
  const params: DisplayEffect['params'] = {};
  for (const p of e.params ?? []) {
    const key = uniqueKey(params, p);
    if (p.type === 'layer') {
      params[key] = p.layerId ? (layerIndex(p.layerId) ?? 0) : 0;
      continue;
    }
    params[key] = plain(num(p.value));
  }
  const out: DisplayEffect = { kind: DRAWN_EFFECTS[e.matchName].kind, match_name: e.matchName, params, time: lt };
  if (e.matte) {
    const alpha = inflateMatte(e.matte, rotoFrame(e, lt));
    if (alpha)
      out.matte = { width: e.matte.width, height: e.matte.height, alpha: Buffer.from(alpha).toString('base64') };
  }
  return out;
}

/** Parameters sharing a name (a group's "Opacity" and the effect's) keep the first; later ones get " 2", " 3". */
function uniqueKey(params: DisplayEffect['params'], p: EffectParam): string {
  let key = p.name || p.matchName;
  for (let k = 2; key in params; k++) key = `${p.name || p.matchName} ${k}`;
  return key;
}

/** Layer styles the page draws (docs/motion.md "Effects"); pattern overlay is listed. */
export const DRAWN_STYLES = new Set([
  'dropShadow',
  'innerShadow',
  'outerGlow',
  'innerGlow',
  'bevelEmboss',
  'chromeFX',
  'solidFill',
  'gradientFill',
  'frameFX',
]);

/**
 * What differs from After Effects in a drawn layer style, by kind (listed with the style). Satin is not here: its
 * only hidden control, the contour, is Photoshop's default "Gaussian" and drawn (preview/contours.ts).
 */
export const STYLE_APPROXIMATIONS: Record<string, string> = {
  bevelEmboss:
    "drawn from a height map of the blurred alpha (technique smooth, with Photoshop's default Linear gloss contour); " +
    "Photoshop documents technique Smooth only as blurring the matte's edges slightly, not its height profile; " +
    'chisel techniques and stroke emboss are drawn as smooth',
};

/** A layer style at one instant: its kind and its parameters by the part of the match name after the slash. */
export function displayStyle(s: LayerStyle, num: (p: NumProperty) => number[], lt: number): DisplayLayerStyle {
  const params: DisplayLayerStyle['params'] = {};
  for (const [mn, p] of Object.entries(s.params)) params[mn.slice(mn.indexOf('/') + 1)] = plain(num(p));
  const out: DisplayLayerStyle = { kind: s.kind, params };
  if (s.gradient) {
    const stops = sampleStops(s.gradient, lt);
    out.stops = stops.colors.map(([offset, r, g, b]) => ({ offset, color: [r, g, b, 1] }));
  }
  return out;
}

/**
 * The parameter `effect(e)(p)` names on a layer: the effect by its name, then its match name, or 1-based index; the
 * parameter by name or 1-based index (After Effects' expression reference). Layer parameters are not numbers: none.
 */
export function effectParam(l: Layer, e: string | number, p: string | number): EffectParam | undefined {
  const effect =
    typeof e === 'number'
      ? l.effects[e - 1]
      : (l.effects.find((x) => x.name === e) ?? l.effects.find((x) => x.matchName === e));
  const params = effect?.params ?? [];
  const param = typeof p === 'number' ? params[p - 1] : params.find((x) => x.name === p || x.matchName === p);
  return param && param.type !== 'layer' ? param : undefined;
}

/** True for a property path inside an effect that draws nothing (an expression control). */
export function silentEffectPath(l: Layer, path: string): boolean {
  const [parade, mn] = path.split('>');
  return parade === 'ADBE Effect Parade' && !!mn && isSilent(mn) && l.effects.some((e) => e.matchName === mn);
}
