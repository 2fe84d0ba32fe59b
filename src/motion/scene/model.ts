import type { RotoMatte } from './roto-matte.js';

/**
 * The scene model: an After Effects project decoded for drawing (not for inspect's answer). Plain data, built once per
 * project file (decode.ts, off the event loop in a worker), then sampled at any time by evaluate.ts.
 *
 * Conventions:
 * - Times are seconds. Keyframe times are LAYER time: seconds from the layer's start time, before its time stretch
 *   (After Effects stores them so; comp time = startTime + layerTime x stretch).
 * - Numeric property values are arrays (a scalar is `[v]`), in After Effects' own units: pixels, degrees, percent for
 *   scale and opacity (0..100), colours as RGBA 0..1.
 * - Every property keeps its match-name path (`ADBE Transform Group>ADBE Position`) so approximations can name it.
 */

/** A cubic bezier path in After Effects' form: vertices with tangents relative to their vertex. */
export interface BezierPath {
  closed: boolean;
  /** Vertices [x, y]. */
  v: [number, number][];
  /** In tangents, relative to their vertex. */
  i: [number, number][];
  /** Out tangents, relative to their vertex. */
  o: [number, number][];
}

/** How a keyframe is left or entered. */
export type Interpolation = 'linear' | 'bezier' | 'hold';

/** Temporal ease of one dimension on one side of a keyframe: speed in units per second, influence 0..1. */
export interface Ease {
  speed: number;
  influence: number;
}

export interface Keyframe<V> {
  /** Layer time in seconds (see the conventions above). */
  time: number;
  value: V;
  inInterpolation: Interpolation;
  outInterpolation: Interpolation;
  /** Temporal eases, one per dimension, or a single one for a spatial (position-like) property. */
  inEase?: Ease[];
  outEase?: Ease[];
  /** Spatial tangents of a position-like property, relative to the value (the motion path is a bezier). */
  inTangent?: number[];
  outTangent?: number[];
  /** A roving key: its time is recomputed so the speed along the path is constant between its neighbours. */
  roving?: boolean;
}

export interface Property<V> {
  /** Match-name path from the layer's root group, joined with '>'. */
  path: string;
  /** The static value, or the value at the first keyframe when animated. */
  value: V;
  /** Sorted by time; absent or empty when the property is not animated. */
  keyframes?: Keyframe<V>[];
  /** Not evaluated: the value above is drawn and the expression listed in approximations. */
  expression?: string;
  /** True for position-like properties whose keyframes carry spatial tangents. */
  spatial?: boolean;
}

export type NumProperty = Property<number[]>;

/** Paragraph justification (full justifications name where their last line goes). */
export type Justification =
  | 'left'
  | 'right'
  | 'center'
  | 'justify-last-left'
  | 'justify-last-right'
  | 'justify-last-center'
  | 'justify-all';

/** A text document (one per Source Text keyframe), from the COS text of `btdk` (cos.ts). */
export interface TextDocument {
  /** The text; paragraphs are separated by '\r' as After Effects stores them (the final '\r' removed). */
  text: string;
  /** PostScript font name. */
  font: string;
  fontSize: number;
  /** RGBA 0..1; absent: no fill. */
  fillColor?: [number, number, number, number];
  /** RGBA 0..1; absent: no stroke. */
  strokeColor?: [number, number, number, number];
  strokeWidth: number;
  strokeOverFill: boolean;
  /** Thousandths of an em, as After Effects' Tracking field. */
  tracking: number;
  /** Line distance in pixels; absent: auto leading (120% of the size). */
  leading?: number;
  justification: Justification;
  allCaps: boolean;
  smallCaps: boolean;
  fauxBold: boolean;
  fauxItalic: boolean;
  baselineShift: number;
  horizontalScale: number;
  verticalScale: number;
  /** Box (paragraph) text: the box's top-left corner relative to the layer origin and its size. Absent: point text. */
  box?: { position: [number, number]; size: [number, number] };
}

/** What a text selector counts: its start, end and offset are in these units, one amount per unit. */
export type TextSelectorBasis = 'characters' | 'characters-excluding-spaces' | 'words' | 'lines';

/** How a selector's amounts combine with those of the selectors above it (AE's Mode, 1..6). */
export type TextSelectorMode = 'add' | 'subtract' | 'intersect' | 'min' | 'max' | 'difference';

/**
 * A range selector (ADBE Text Selector; Lottie's `t.a[].s` with `t: 0`). Start/end/offset are percent of the units'
 * count (`units: 'percent'`) or unit indices (`'index'`); amount, ease high/low and smoothness are percent.
 */
export interface TextRangeSelector {
  kind: 'range';
  name: string;
  enabled: boolean;
  units: 'percent' | 'index';
  basedOn: TextSelectorBasis;
  mode: TextSelectorMode;
  start: NumProperty;
  end: NumProperty;
  offset: NumProperty;
  amount: NumProperty;
  shape: 'square' | 'ramp-up' | 'ramp-down' | 'triangle' | 'round' | 'smooth';
  smoothness: NumProperty;
  easeHigh: NumProperty;
  easeLow: NumProperty;
  randomize: boolean;
  seed: NumProperty;
}

/** A wiggly selector (ADBE Text Wiggly Selector): amounts between min and max that wander in time and along the text. */
export interface TextWigglySelector {
  kind: 'wiggly';
  name: string;
  enabled: boolean;
  basedOn: TextSelectorBasis;
  mode: TextSelectorMode;
  /** Percent, -100..100. */
  maxAmount: NumProperty;
  minAmount: NumProperty;
  wigglesPerSecond: NumProperty;
  /** Percent: 100 moves every unit together, 0 each on its own. */
  correlation: NumProperty;
  /** Degrees (360 = one wiggle). */
  temporalPhase: NumProperty;
  spatialPhase: NumProperty;
  /** 1: every dimension takes the same amount. */
  lockDimensions: NumProperty;
  seed: NumProperty;
}

/** An expression selector (ADBE Text Expressible Selector): `amount`'s expression runs per unit (textIndex, textTotal). */
export interface TextExpressionSelector {
  kind: 'expression';
  name: string;
  enabled: boolean;
  basedOn: TextSelectorBasis;
  /** Percent per dimension [x, y, z]; its expression is the selector. */
  amount: NumProperty;
}

export type TextSelector = TextRangeSelector | TextWigglySelector | TextExpressionSelector;

/**
 * The properties a text animator sets, each absent unless the animator has it (Lottie's `t.a[].a`: a, p, s, sk, sa,
 * r, o, fc, sc, sw, t). Units as After Effects shows them: pixels, percent (scale, opacity), degrees, RGBA 0..1,
 * tracking in thousandths of an em.
 */
export interface TextAnimatorProperties {
  anchor?: NumProperty;
  position?: NumProperty;
  scale?: NumProperty;
  skew?: NumProperty;
  skewAxis?: NumProperty;
  rotation?: NumProperty;
  opacity?: NumProperty;
  fillColor?: NumProperty;
  strokeColor?: NumProperty;
  strokeWidth?: NumProperty;
  tracking?: NumProperty;
  /** Characters to shift each selected character by (rounded with the amount); not in Lottie. */
  characterOffset?: NumProperty;
  /** With characterOffset: 1 keeps a-z, A-Z and 0-9 within their groups (After Effects' default), 2 full Unicode. */
  characterRange?: NumProperty;
}

/** A text animator (ADBE Text Animator, Lottie's `t.a[]`): its properties, applied per character by its selectors. */
export interface TextAnimator {
  name: string;
  enabled: boolean;
  selectors: TextSelector[];
  properties: TextAnimatorProperties;
  /** Match names of the properties it has that are not drawn (character offset, 3D rotation, blur, line spacing...). */
  unsupported: string[];
}

export type BlendMode =
  | 'normal'
  | 'dissolve'
  | 'add'
  | 'multiply'
  | 'screen'
  | 'overlay'
  | 'soft-light'
  | 'hard-light'
  | 'darken'
  | 'lighten'
  | 'difference'
  | 'exclusion'
  | 'hue'
  | 'saturation'
  | 'color'
  | 'luminosity'
  | 'color-dodge'
  | 'color-burn'
  | 'linear-burn'
  | 'linear-dodge'
  | 'linear-light'
  | 'vivid-light'
  | 'pin-light'
  | 'hard-mix'
  | 'lighter-color'
  | 'darker-color'
  | 'subtract'
  | 'divide'
  | 'classic-color-dodge'
  | 'classic-color-burn'
  | 'classic-difference'
  | 'stencil-alpha'
  | 'stencil-luma'
  | 'silhouette-alpha'
  | 'silhouette-luma'
  | 'alpha-add'
  | 'luminescent-premul'
  | 'unknown';

export type MatteMode = 'alpha' | 'alpha-inverted' | 'luma' | 'luma-inverted';

export type MaskMode = 'none' | 'add' | 'subtract' | 'intersect' | 'lighten' | 'darken' | 'difference';

export interface Mask {
  name: string;
  mode: MaskMode;
  inverted: boolean;
  path: Property<BezierPath>;
  /** 0..100. */
  opacity: NumProperty;
  /** [x, y] pixels. */
  feather: NumProperty;
  /** Pixels. */
  expansion: NumProperty;
  /** Mask Feather Falloff "Linear" (absent: "Smooth", the default). */
  featherFalloff?: 'linear';
  /** Variable-width feather points with a radius on the path (drawn without them, listed). */
  variableFeather?: boolean;
}

export interface Transform {
  anchor: NumProperty;
  /** Absent when the dimensions are separated: then positionX/positionY (and positionZ). */
  position?: NumProperty;
  positionX?: NumProperty;
  positionY?: NumProperty;
  /** The separated Z position of a 3D layer (pixels, z away from the viewer). */
  positionZ?: NumProperty;
  /** Percent, [x, y] (z ignored: drawn flat). */
  scale: NumProperty;
  /** Degrees; the Z rotation of a 3D layer. */
  rotation: NumProperty;
  /** 0..100. */
  opacity: NumProperty;
  /** 3D only, in degrees (orientation: its static value; its keys are not read). */
  orientation?: NumProperty;
  rotationX?: NumProperty;
  rotationY?: NumProperty;
}

/** Shape layer contents, in After Effects' order (the first item is drawn on top). */
export type ShapeItem =
  | ShapeGroup
  | ShapeRect
  | ShapeEllipse
  | ShapeStar
  | ShapePathItem
  | ShapeFill
  | ShapeStroke
  | ShapeGradientFill
  | ShapeGradientStroke
  | ShapeTrim
  | ShapeModifier
  | ShapeRepeater
  | ShapeMerge
  | ShapeUnsupported;

interface ShapeBase {
  name: string;
  matchName: string;
  enabled: boolean;
}

export interface ShapeTransform {
  anchor: NumProperty;
  position: NumProperty;
  scale: NumProperty;
  skew: NumProperty;
  skewAxis: NumProperty;
  rotation: NumProperty;
  opacity: NumProperty;
}

export interface ShapeGroup extends ShapeBase {
  kind: 'group';
  blendMode: BlendMode;
  items: ShapeItem[];
  transform: ShapeTransform;
}

/** Paths run clockwise (1, After Effects' default) or reversed (3). */
interface PathShapeBase extends ShapeBase {
  reversed: boolean;
}

export interface ShapeRect extends PathShapeBase {
  kind: 'rect';
  size: NumProperty;
  position: NumProperty;
  roundness: NumProperty;
}

export interface ShapeEllipse extends PathShapeBase {
  kind: 'ellipse';
  size: NumProperty;
  position: NumProperty;
}

export interface ShapeStar extends PathShapeBase {
  kind: 'star';
  starType: 'star' | 'polygon';
  points: NumProperty;
  position: NumProperty;
  rotation: NumProperty;
  innerRadius: NumProperty;
  outerRadius: NumProperty;
  /** Percent. */
  innerRoundness: NumProperty;
  outerRoundness: NumProperty;
}

export interface ShapePathItem extends PathShapeBase {
  kind: 'path';
  path: Property<BezierPath>;
}

export interface ShapeFill extends ShapeBase {
  kind: 'fill';
  blendMode: BlendMode;
  /** Composite "above previous in same group" (2): painted over the items before it, not under. */
  above: boolean;
  color: NumProperty;
  opacity: NumProperty;
  rule: 'nonzero' | 'evenodd';
}

export type LineCap = 'butt' | 'round' | 'square';
export type LineJoin = 'miter' | 'round' | 'bevel';

export interface Dash {
  kind: 'dash' | 'gap' | 'offset';
  length: NumProperty;
}

export interface ShapeStroke extends ShapeBase {
  kind: 'stroke';
  blendMode: BlendMode;
  /** Composite "above previous in same group" (2): painted over the items before it, not under. */
  above: boolean;
  color: NumProperty;
  opacity: NumProperty;
  width: NumProperty;
  cap: LineCap;
  join: LineJoin;
  miterLimit: NumProperty;
  dashes: Dash[];
}

/** Colour stops `[offset, r, g, b]` and opacity stops `[offset, a]`, offsets 0..1. */
export interface GradientStops {
  colors: [number, number, number, number][];
  opacities: [number, number][];
  /**
   * Each stop's midpoint (0..1 of the way to the next stop, where the two are mixed half and half; 0.5 = a straight
   * blend), in the order of `colors` / `opacities`. Absent: all 0.5.
   */
  colorMidpoints?: number[];
  opacityMidpoints?: number[];
}

interface GradientBase extends ShapeBase {
  blendMode: BlendMode;
  /** Composite "above previous in same group" (2): painted over the items before it, not under. */
  above: boolean;
  gradientType: 'linear' | 'radial';
  start: NumProperty;
  end: NumProperty;
  /** Radial: percent, and degrees. */
  highlightLength: NumProperty;
  highlightAngle: NumProperty;
  opacity: NumProperty;
  stops: Property<GradientStops>;
}

export interface ShapeGradientFill extends GradientBase {
  kind: 'gradient-fill';
  rule: 'nonzero' | 'evenodd';
}

export interface ShapeGradientStroke extends GradientBase {
  kind: 'gradient-stroke';
  width: NumProperty;
  cap: LineCap;
  join: LineJoin;
  miterLimit: NumProperty;
  dashes: Dash[];
}

export interface ShapeTrim extends ShapeBase {
  kind: 'trim';
  /** Percent. */
  start: NumProperty;
  end: NumProperty;
  /** Degrees (360 = one turn). */
  offset: NumProperty;
  /**
   * Trim each path on its own, or all of them as one length in order. Beware After Effects' names, which say the
   * opposite: its "Simultaneously" (1, the default) trims each path on its own (true here), its "Individually" (2)
   * trims them one after another as one length (false here); ae-renders' trim-individually shows it.
   */
  individually: boolean;
}

/**
 * A path operator applied to every shape above it (like trim paths): pucker & bloat (`amount` percent), round corners
 * (`amount` = radius), zig zag (`amount` = size, `ridges` per segment, `smooth` points), offset paths (`amount`
 * pixels, `join`, `miterLimit`) and twist (`amount` = angle in degrees, `center` in the group's coordinates).
 */
export interface ShapeModifier extends ShapeBase {
  kind: 'modifier';
  op: 'pucker-bloat' | 'round-corners' | 'zig-zag' | 'offset' | 'twist';
  amount: NumProperty;
  center?: NumProperty;
  ridges?: NumProperty;
  smooth?: boolean;
  join?: LineJoin;
  miterLimit?: NumProperty;
}

/**
 * Repeater: copies of everything above it in its group (shapes and paints), copy k transformed k + offset times by
 * its transform (repeater.ts), opacity from start (first copy) to end (last).
 */
export interface ShapeRepeater extends ShapeBase {
  kind: 'repeater';
  copies: NumProperty;
  offset: NumProperty;
  /** Composite "Above" (2): each copy over the one before; "Below" (1, the default): under it. */
  above: boolean;
  anchor: NumProperty;
  position: NumProperty;
  /** Percent. */
  scale: NumProperty;
  /** Degrees. */
  rotation: NumProperty;
  /** Percent. */
  startOpacity: NumProperty;
  endOpacity: NumProperty;
}

/** Merge Paths: the shapes above it in its group made one, by `mode` (merge-paths.ts). */
export interface ShapeMerge extends ShapeBase {
  kind: 'merge';
  mode: 'merge' | 'add' | 'subtract' | 'intersect' | 'exclude';
}

/** Wiggle paths and other operators not read: listed, not drawn. */
export interface ShapeUnsupported extends ShapeBase {
  kind: 'unsupported';
}

/** What an effect parameter is (the parameter definition's control type, `pard` byte 15: docs/motion.md "Effects"). */
export type EffectParamType =
  | 'layer'
  | 'integer'
  | 'scalar'
  | 'angle'
  | 'checkbox'
  | 'color'
  | 'point'
  | 'popup'
  | 'slider'
  | 'curve'
  | 'mask'
  | 'point3d'
  | 'custom';

/**
 * One parameter of an effect, in the Effect Controls' order. Values are After Effects' stored units (what bodymovin
 * exports): sliders, angles (degrees) and scalars as shown, colours RGBA 0..1, points in layer pixels, popups 1-based,
 * checkboxes 0/1. A parameter the file leaves out has the value its definition (`pard`) holds.
 */
export interface EffectParam {
  /** `<effect match name>-NNNN`: NNNN numbers parameters as the effect registers them, not in display order. */
  matchName: string;
  /** The definition's (English) name, or the checkbox's label; `dropShadow/...` names for layer styles. */
  name: string;
  type: EffectParamType;
  value: NumProperty;
  /** Layer parameters: the layer's id in the same composition (0: none). */
  layerId?: number;
  /** Popup parameters: the choices, 1-based in `value`. */
  options?: string[];
  /**
   * Arbitrary-data parameters (type `curve`: Liquify's mesh, Curves' curves): `default` when the effect's data is
   * byte for byte its definition's (never edited), `edited` otherwise. Absent when the file stores none.
   */
  arbitrary?: 'default' | 'edited';
}

export interface Effect {
  matchName: string;
  name: string;
  enabled: boolean;
  /** The parameters (groups left out), in display order; absent when the effect has none readable. */
  params?: EffectParam[];
  /** Roto Brush (`ADBE Samurai`): After Effects' propagated matte, per frame (roto-matte.ts). */
  matte?: RotoMatte;
}

/** A layer style (drop shadow...) with its parameters by match name (`dropShadow/distance`...). */
export interface LayerStyle {
  /** `dropShadow`, `innerShadow`, `outerGlow`, `innerGlow`, `bevelEmboss`, `chromeFX`, `solidFill`, `gradientFill`, `patternFill`, `frameFX`. */
  kind: string;
  params: { [matchName: string]: NumProperty };
  /** Gradient overlay's gradient (`gradientFill/gradient`). */
  gradient?: Property<GradientStops>;
}

/** A camera layer's options (ADBE Camera Options Group), in After Effects' units. */
export interface CameraOptions {
  /** Pixels from the camera to the plane drawn at 100 % (the angle of view follows from it and the width). */
  zoom: NumProperty;
  /** Depth of field switch (listed, not drawn), focus distance in pixels, aperture in pixels, blur level percent. */
  depthOfField: NumProperty;
  focusDistance: NumProperty;
  aperture: NumProperty;
  blurLevel: NumProperty;
  /** Two-node camera: auto-orient towards its point of interest (stored as its anchor point; ldta byte 38 bit 6). */
  twoNode: boolean;
}

/** A light layer's options (ADBE Light Options Group): what decides whether it changes the picture. */
export interface LightOptions {
  /** ldta u32 at 136: 0 parallel, 1 spot, 2 point, 3 ambient (corpus layer_light.aep, its lights named by type). */
  lightType: 'parallel' | 'spot' | 'point' | 'ambient' | 'unknown';
  /** Percent. */
  intensity: NumProperty;
  color: NumProperty;
  castsShadows: NumProperty;
}

/** A 3D layer's material options (ADBE Material Options Group); 1 = on for the switches. */
export interface MaterialOptions {
  castsShadows: NumProperty;
  acceptsShadows: NumProperty;
  acceptsLights: NumProperty;
}

export type LayerType = 'footage' | 'solid' | 'precomp' | 'text' | 'shape' | 'null' | 'adjustment' | 'camera' | 'light';

export interface Layer {
  /** 1-based, as `comp.layer(i)`. */
  index: number;
  id: number;
  name: string;
  type: LayerType;
  /** Footage or composition item id; absent for text, shape, camera, light. */
  sourceId?: number;
  /** Comp seconds. */
  startTime: number;
  inPoint: number;
  outPoint: number;
  /** 1 = 100 %; negative plays backwards. */
  stretch: number;
  enabled: boolean;
  solo: boolean;
  shy: boolean;
  guide: boolean;
  threeD: boolean;
  adjustment: boolean;
  /** Collapse transformations (precomp) / continuous rasterisation (vector). */
  collapse: boolean;
  /** Auto-orient along its motion path: turned to the direction it moves in (ldta byte 38 bit 0). */
  autoOrient: boolean;
  /** The layer's motion blur switch (drawn blurred when the composition's switch is on too: motion-blur.ts). */
  motionBlur: boolean;
  /** Parent layer id (the whole chain is followed through the composition's layers). */
  parentId?: number;
  blendMode: BlendMode;
  preserveTransparency: boolean;
  /** This layer is matted by another: the layer above (older files) or `layerId` (AE 23+). */
  trackMatte?: { mode: MatteMode; layerId?: number };
  /** True when another layer uses this one as its matte (a matte is not drawn itself). */
  isMatte: boolean;
  transform: Transform;
  masks: Mask[];
  effects: Effect[];
  /** Layer styles switched on (`dropShadow/enabled`...). */
  layerStyles: string[];
  /** The same styles with their parameters, in the file's order. */
  styles?: LayerStyle[];
  /** Seconds of source time at layer time, when time remapping is on. */
  timeRemap?: NumProperty;
  /** Source Text keyframes of a text layer. */
  text?: Property<TextDocument>;
  /** The text layer's animators, in the Timeline's order (text-animators.ts draws them); absent when it has none. */
  textAnimators?: TextAnimator[];
  /** Shape contents of a shape layer. */
  shapes?: ShapeItem[];
  /** Camera layers: zoom, depth of field, one- or two-node. */
  camera?: CameraOptions;
  /** Light layers: intensity, colour, shadows. */
  light?: LightOptions;
  /** 3D layers: whether they cast and accept shadows and accept lights. */
  material?: MaterialOptions;
  /** Layer markers: layer time (seconds, as keyframes) and comment (`ADBE Marker` > mrst). */
  markers?: { time: number; comment: string }[];
  /** Every expression under the layer, with the property path; the ones on drawn properties are also on them. */
  expressions: { property: string; expression: string }[];
}

export interface Composition {
  id: number;
  name: string;
  width: number;
  height: number;
  pixelAspect: number;
  frameRate: number;
  /** Seconds. */
  duration: number;
  /** RGB 0..1. */
  background: [number, number, number];
  /** Comp seconds from the first frame. */
  workArea: { start: number; end: number };
  /** What the timeline shows for the first frame (seconds); times in this model are from the first frame. */
  displayStartTime: number;
  hideShyLayers: boolean;
  /** The composition's motion blur switch (cdta byte 139 bit 3). */
  motionBlur: boolean;
  /** Motion blur settings (cdta): shutter angle and phase in degrees, samples per frame, adaptive sample limit. */
  shutter?: { angle: number; phase: number; samples: number; limit: number };
  layers: Layer[];
}

export interface Footage {
  id: number;
  name: string;
  kind: 'solid' | 'file' | 'placeholder';
  /** The path as the project stores it (resolved by the preview, not here). */
  path?: string;
  width: number;
  height: number;
  /** Solid colour RGBA 0..1. */
  color?: [number, number, number, number];
  /** Seconds; 0 for a still. */
  duration: number;
  frameRate: number;
  /** An image (or image sequence of one frame): no source time needed. */
  still: boolean;
}

export interface SceneProject {
  aeVersion: string;
  compositions: Composition[];
  footage: Footage[];
}
