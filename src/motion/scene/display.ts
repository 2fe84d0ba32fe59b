/**
 * The display list: what a composition looks like at one instant, as plain JSON for the preview page to draw on a
 * Canvas 2D (evaluate.ts makes it from the scene model). Everything is already sampled at that instant: the page does
 * no animation, no parenting, no timing. Additive changes only: the preview page is built against these types.
 *
 * Coordinates: composition pixels, y down. A `matrix` is Canvas' `setTransform(a, b, c, d, e, f)` order
 * (x' = a*x + c*y + e, y' = b*x + d*y + f), applied on top of the enclosing group's. Colours are RGBA 0..1.
 * Children are in PAINT order: the first child is drawn first (bottom), the last on top (the reverse of the Timeline).
 */
import type {
  BezierPath,
  BlendMode,
  Composition,
  Justification,
  LineCap,
  LineJoin,
  MaskMode,
  MatteMode,
} from './model.js';

export type { BezierPath, BlendMode, Justification, LineCap, LineJoin, MaskMode, MatteMode } from './model.js';

/**
 * A mask feather's Gaussian standard deviation per pixel of feather. After Effects documents a Gaussian straddling the
 * path, half the feather inside and half outside, whose influence past that width is "very small", but not its
 * spread; 0.38 is skottie's factor, measured against After Effects (at half the feather out, 9 % is left).
 */
export const MASK_FEATHER_SIGMA = 0.38;

export type Matrix = [number, number, number, number, number, number];
export type Color = [number, number, number, number];

export interface DisplayList {
  /** The composition drawn (its background is painted by the page unless the output is transparent). */
  composition: Pick<Composition, 'id' | 'name' | 'width' | 'height' | 'pixelAspect' | 'frameRate' | 'background'>;
  /** Seconds from the composition's first frame. */
  time: number;
  /** The composition's layers, bottom first. */
  root: DisplayGroup;
  /** What is not drawn as After Effects draws it; empty when nothing is known to differ. */
  approximations: Approximation[];
}

export interface Approximation {
  /** The layer (1-based index and name) in its composition; absent for composition-wide notes. */
  layer_index?: number;
  layer?: string;
  /** A short stable key: `effect`, `expression`, `3d`, `camera`, `light`, `shape-operator`, `layer-style`,
   * `text-animator`, `mask-mode`, `blend-mode`, `time-remap`, `motion-blur`, `precomp-depth`... */
  feature: string;
  /** Human text: the effect's match name, the expression's property and text, the operator... */
  detail: string;
}

export type DisplayNode = DisplayGroup | DisplaySolid | DisplayFootage | DisplayText | DisplayShape;

/** A layer, a precomp's contents or a shape group: children drawn into one surface, then composited. */
export interface DisplayGroup {
  kind: 'group';
  /** The layer this group draws (absent for shape groups and the root). */
  layer_index?: number;
  layer?: string;
  /** The composition the layer is in (precomp contents carry the inner composition's id). */
  composition_id?: number;
  matrix: Matrix;
  /** 0..1, multiplied into the group's composite (not inherited from parent layers: After Effects does not). */
  opacity: number;
  blend: BlendMode;
  /**
   * Drawn on a surface of its own even at full opacity and normal blending: its contents blend with each other (a
   * shape fill's blend mode), not with the layers below, as After Effects composites a layer.
   */
  isolate?: boolean;
  /** Clip rectangle in the group's own coordinates (a precomp's frame, 0,0 to its size). */
  clip?: { width: number; height: number };
  /** Masks in the group's own coordinates, applied in order (After Effects' mask stack) before the matte. */
  masks?: DisplayMask[];
  /**
   * Track matte: `node` is drawn in the SAME coordinates as this group's parent (its own matrix is not multiplied by
   * this group's), and this group's pixels are kept by its alpha or luma.
   */
  matte?: { mode: MatteMode; node: DisplayGroup };
  /**
   * A 3D layer (place-3d.ts): its children are drawn flat in its own coordinates (`matrix` is then the identity), then
   * placed on the parent's coordinates by this homography [h0..h8], row-major: x' = (h0 x + h1 y + h2) / w,
   * y' = (h3 x + h4 y + h5) / w, where w = h6 x + h7 y + h8 is the point's distance in front of the camera (pixels;
   * nothing with w < 1 is drawn).
   */
  warp?: number[];
  /** With `warp`: the rectangle [x0, y0, x1, y1] the children draw in, in the group's own coordinates. */
  bounds?: [number, number, number, number];
  /**
   * 3D layers that cross each other (children: placed groups, far first): drawn together, each pixel laying the layers
   * there over each other from the farthest point to the nearest, as Classic 3D cuts crossing layers.
   */
  intersect?: boolean;
  /**
   * Effects, in order, applied to the layer's pixels after its masks (draw-effects.ts). Their lengths and points are
   * in the layer's coordinates (this group's matrix takes them to the output).
   */
  effects?: DisplayEffect[];
  /** Layer styles, applied after the effects, in composition coordinates (a style does not turn with its layer). */
  styles?: DisplayLayerStyle[];
  /** The layer's own rectangle (0,0 to its size) that effects with edges (Repeat Edge Pixels, ramps) use. */
  layerSize?: { width: number; height: number };
  /**
   * An adjustment layer (draw-adjust.ts): its children draw only where it covers (their alpha, with its masks and
   * matte); its effects work on what the layers below it in the same parent drew, kept there at its opacity.
   */
  adjustment?: boolean;
  /**
   * Motion blur (motion-blur.ts): the children are the layer at instants spread over the open shutter, and this many
   * samples are averaged (instants where the layer is not there count as empty); the group's blend applies to the
   * average.
   */
  motionBlur?: number;
  children: DisplayNode[];
}

/** An effect at this instant: the page's kind for it, its match name, and its parameters by their names. */
export interface DisplayEffect {
  kind: string;
  match_name: string;
  /** After Effects' stored units (effects.ts); layer parameters are the layer's 1-based index (0: none). */
  params: Record<string, number | number[]>;
  /** The layer's time in seconds (effects that move by themselves: Wave Warp's speed). */
  time: number;
  /**
   * Layers the effect reads (Displacement Map's map, Set Matte's matte) by parameter name, drawn in the SAME
   * coordinates as this group's parent, as a track matte is.
   */
  layers?: Record<string, DisplayGroup>;
  /** Roto Brush: After Effects' matte of this frame, width x height alpha bytes (base64) over the layer's rectangle. */
  matte?: { width: number; height: number; alpha: string };
}

/** A layer style at this instant (`dropShadow`...) with its parameters by name (`distance`, `color`...). */
export interface DisplayLayerStyle {
  kind: string;
  params: Record<string, number | number[]>;
  /** Gradient overlay: its colour stops. */
  stops?: { offset: number; color: Color }[];
}

export interface DisplayMask {
  mode: MaskMode;
  inverted: boolean;
  /** 0..1. */
  opacity: number;
  /**
   * Pixels [x, y] in the layer's coordinates; 0 = hard edge. Drawn as After Effects documents it: a Gaussian falloff
   * centred on the path (half the feather inside, half outside), each axis its own, of standard deviation
   * MASK_FEATHER_SIGMA x the feather.
   */
  feather: [number, number];
  /** Pixels; positive grows the mask (drawn by stroking when non-zero). */
  expansion: number;
  path: BezierPath;
}

/** A solid layer's rectangle, from 0,0 to its size. */
export interface DisplaySolid {
  kind: 'solid';
  width: number;
  height: number;
  color: Color;
}

/** Image or video footage, drawn from 0,0 at its own size; the page resolves the file by `footage_id`. */
export interface DisplayFootage {
  kind: 'footage';
  footage_id: number;
  name: string;
  /** As the project stores it (absolute, from the author's machine). */
  path?: string;
  width: number;
  height: number;
  media: 'image' | 'video' | 'placeholder';
  /** Video: seconds of source time to show (after stretch and time remapping). */
  source_time?: number;
}

/**
 * A text layer's text document at this instant, in the layer's coordinates. The origin is on the first baseline: for
 * point text at the line's start, middle or end by its justification (left, center, right); box text is laid out in
 * its box.
 */
export interface DisplayText {
  kind: 'text';
  /** Lines separated by '\n' (paragraph breaks); box text is wrapped by the page. */
  text: string;
  /** PostScript name as the project asks for it. */
  font: string;
  size: number;
  fill?: Color;
  stroke?: Color;
  stroke_width: number;
  stroke_over_fill: boolean;
  /** Thousandths of an em. */
  tracking: number;
  /** Line distance in pixels (auto leading resolved to 120% of the size). */
  leading: number;
  justification: Justification;
  all_caps: boolean;
  small_caps: boolean;
  faux_bold: boolean;
  faux_italic: boolean;
  baseline_shift: number;
  /** Percent. */
  horizontal_scale: number;
  vertical_scale: number;
  /**
   * Box (paragraph) text: the box in layer coordinates; lines wrap at its width. The first baseline is the box's top
   * plus the font's ascent (at y = 0 for a box as After Effects creates it), as After Effects lays it out (draw-text.ts).
   */
  box?: { x: number; y: number; width: number; height: number };
  /**
   * Text animators at this instant: one entry per character of `text` (code points, line breaks included; null:
   * unchanged), drawn glyph by glyph (text-animators.ts, draw-text.ts).
   */
  characters?: (DisplayCharacter | null)[];
}

/** One character's change by text animators; absent fields leave the document's. */
export interface DisplayCharacter {
  /**
   * Applied to the laid-out glyph about its anchor (the middle of its advance on the baseline): its anchor, position,
   * scale, skew and rotation offsets as one Canvas matrix.
   */
  matrix?: Matrix;
  /** 0..1, multiplied into the glyph's fill and stroke. */
  opacity?: number;
  fill?: Color;
  stroke?: Color;
  stroke_width?: number;
  /** Pixels added after the character (tracking animators), moving the rest of its line. */
  tracking?: number;
  /** The character drawn instead (character offset); the line is laid out with it. */
  text?: string;
}

export interface GradientPaint {
  type: 'linear' | 'radial';
  start: [number, number];
  end: [number, number];
  /** Radial: the highlight's offset as a fraction -1..1 of the radius and its angle in degrees. */
  highlight_length: number;
  highlight_angle: number;
  /** Colour stops merged with the opacity stops, offsets 0..1. */
  stops: { offset: number; color: Color }[];
}

export interface DisplayFill {
  color: Color;
  gradient?: GradientPaint;
  /** 0..1. */
  opacity: number;
  rule: 'nonzero' | 'evenodd';
  blend: BlendMode;
}

export interface DisplayStroke {
  color: Color;
  gradient?: GradientPaint;
  opacity: number;
  width: number;
  cap: LineCap;
  join: LineJoin;
  miter_limit: number;
  /** Canvas setLineDash lengths (empty: solid) and lineDashOffset. */
  dashes: number[];
  dash_offset: number;
  blend: BlendMode;
}

/**
 * One fill or stroke of a shape layer with the paths it paints, already in this node's coordinates (the transforms of
 * nested shape groups are applied to the points; the stroke width is in the coordinates of the group holding it).
 */
export interface DisplayShape {
  kind: 'shape';
  paths: BezierPath[];
  fill?: DisplayFill;
  stroke?: DisplayStroke;
  /**
   * Trim paths, when not already applied to `paths`: keep the part from `start` to `end` (0..1 of the length),
   * shifted by `offset` turns; `individually` trims each path on its own, else all of them as one length.
   */
  trim?: { start: number; end: number; offset: number; individually: boolean };
  /**
   * Merge Paths: the first paths, `operands[k]` of them for input shape k (top first, each filled non-zero), combine
   * by `mode` (add: union; subtract: the first minus the others; intersect; exclude: each pixel kept where an odd
   * number of inputs cover it) into the area the fill paints (merge-paths.ts).
   */
  merge?: { mode: 'add' | 'subtract' | 'intersect' | 'exclude'; operands: number[] };
}
