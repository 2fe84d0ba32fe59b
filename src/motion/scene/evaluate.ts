import {
  MASK_FEATHER_SIGMA,
  type Approximation,
  type Color,
  type DisplayFill,
  type DisplayGroup,
  type DisplayList,
  type DisplayMask,
  type DisplayNode,
  type DisplayShape,
  type DisplayStroke,
  type DisplayText,
  type GradientPaint,
  type Matrix,
} from './display.js';
import {
  applyToPath,
  ellipsePath,
  IDENTITY,
  invert,
  multiply,
  offsetPath,
  puckerBloat,
  rectPath,
  roundCorners,
  reversePath,
  starPath,
  transformMatrix,
  trimPaths,
  twist,
  twistRadius,
  zigZag,
} from './geometry.js';
import type {
  BezierPath,
  Composition,
  Dash,
  Layer,
  NumProperty,
  Property,
  SceneProject,
  ShapeGroup,
  ShapeItem,
  ShapeModifier,
  TextDocument,
} from './model.js';
import type {
  ExpressionComp,
  ExpressionContext,
  ExpressionEvaluator,
  ExpressionLayer,
  ExpressionResult,
} from './expressions.js';
import {
  DRAWN_STYLES,
  displayEffect,
  displayStyle,
  adjustsBelow,
  effectApproximation,
  effectParam,
  effectStatus,
  STYLE_APPROXIMATIONS,
  isAdjustment,
  silentEffectPath,
} from './effects.js';
import { motionBlurred } from './motion-blur.js';
import { sampleHeld, sampleNum, samplePath, sampleStops } from './sample.js';
import { paintStops } from './gradients.js';
import { copiesWithin, repeaterCopies } from './repeater.js';
import { mergePaths, type MergeEntry } from './merge-paths.js';
import { depthOrder, place, viewAt, worldMatrix, type Sampler, type Space } from './place-3d.js';
import { fromAffine, IDENTITY4, mul4 } from './three-d.js';
import { animatorNotes, characterChanges } from './text-animators.js';
import { shapeSourceRect, type SourceRect } from './source-rect.js';

export interface EvaluateOptions {
  /** Precomps nested deeper than this are not drawn (listed); guards against absurd nesting. Default 16. */
  maxDepth?: number;
  /**
   * Layers drawn in one instant, all precomps counted; past it the rest is left out (listed). Default 20,000: a
   * real project stays far below, a file whose precomps multiply each other (100 x 100 x ...) stops here.
   */
  maxLayers?: number;
  /**
   * Evaluates numeric properties' expressions (expressions.ts, one sandbox per preview). Without it, or when an
   * expression fails, the property's own value is drawn and the expression listed (with the reason it failed).
   */
  expressions?: ExpressionEvaluator;
  /**
   * False: a motion-blurred layer is evaluated once, at the instant itself, not at its shutter's samples (what is
   * listed stays the same; inspect's list of approximations needs no pictures). Default true.
   */
  motionBlur?: boolean;
}

/** Calls whose numbers come from After Effects' random generator (wiggle, random, gaussRandom, noise). */
const RANDOM_CALL = /\b(?:wiggle|random|gaussRandom|noise)\s*\(/;

/** Evaluation fails only for a composition id the project does not have (the caller checks names first). */
export class UnknownCompositionError extends Error {
  override name = 'UnknownCompositionError';
}

/**
 * The display list of composition `compId` at `time` (seconds from its first frame). Pure and cheap: it samples the
 * decoded model; nothing is decoded here. Layers that draw nothing at this instant (outside in/out, switched off,
 * guides, nulls, cameras, lights, adjustment layers without a drawn effect) are left out; what is not drawn as After Effects draws it is
 * listed in `approximations`, each once per layer and feature.
 */
export function evaluate(
  project: SceneProject,
  compId: number,
  time: number,
  options: EvaluateOptions = {},
): DisplayList {
  const comp = project.compositions.find((c) => c.id === compId);
  if (!comp) throw new UnknownCompositionError(`no composition with id ${compId}`);
  const ev = new Evaluator(project, comp.id, options.maxDepth ?? 16, options.maxLayers ?? 20_000, options.expressions);
  const root: DisplayGroup = { kind: 'group', matrix: IDENTITY, opacity: 1, blend: 'normal', children: [] };
  ev.sampleMotionBlur = options.motionBlur ?? true;
  root.children = ev.composition(comp, time, [comp.id]);
  ev.expressionNotes();
  return {
    composition: {
      id: comp.id,
      name: comp.name,
      width: comp.width,
      height: comp.height,
      pixelAspect: comp.pixelAspect,
      frameRate: comp.frameRate,
      background: comp.background,
    },
    time,
    root,
    approximations: ev.approximations,
  };
}

/**
 * The value of the expression on property `p` of `layer` at composition time `time` (seconds of the layer's own
 * composition), read as evaluate reads it (other layers' transforms through their own expressions): what an export
 * bakes into keys.
 */
export function expressionValueAt(
  project: SceneProject,
  layer: Layer,
  p: NumProperty,
  time: number,
  expressions: ExpressionEvaluator,
): ExpressionResult {
  return new Evaluator(project, -1, 16, 20_000, expressions).expressionAt(layer, p, time);
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/** A shape item's paths (changed in place by modifiers) and the matrix from its group into the current one. */
interface ShapeRef {
  entry: MergeEntry;
  m: Matrix;
}

/** Lookups of a project, made once per project (evaluate runs per frame). */
interface Index {
  comps: Map<number, Composition>;
  footage: Map<number, SceneProject['footage'][number]>;
  /** The composition each layer is in. */
  owner: Map<Layer, Composition>;
}
const indexes = new WeakMap<SceneProject, Index>();

function indexOf(project: SceneProject): Index {
  let ix = indexes.get(project);
  if (!ix) {
    ix = {
      comps: new Map(project.compositions.map((c) => [c.id, c])),
      footage: new Map(project.footage.map((f) => [f.id, f])),
      owner: new Map(project.compositions.flatMap((c) => c.layers.map((l) => [l, c] as const))),
    };
    indexes.set(project, ix);
  }
  return ix;
}

class Evaluator {
  readonly approximations: Approximation[] = [];
  private readonly seen = new Set<string>();
  private readonly comps: Map<number, Composition>;
  private readonly footage: Map<number, SceneProject['footage'][number]>;
  private readonly owner: Map<Layer, Composition>;
  /** Layers drawn or used (parents, mattes) at this instant, whose expressions are listed unless evaluated. */
  private readonly touched = new Set<Layer>();
  /** Layer groups made so far at this instant (bounded by maxLayers). */
  private drawn = 0;
  /** Layers whose effects are reading another layer (Displacement Map, Set Matte): no layer reads itself back. */
  private readonly reading = new Set<Layer>();
  /** Per layer, each expression's outcome at this instant by property path: true, or why it failed. */
  private readonly outcomes = new Map<Layer, Map<string, true | string>>();
  /** 3D: where the composition being evaluated places its layers, and the space a collapsed 3D precomp hands in. */
  private space: Space | undefined;
  private inner: Space | undefined;
  /** Groups of collapsed 3D precomps, whose layers join the depth order of the composition around them. */
  private readonly collapsed = new WeakSet<DisplayGroup>();
  /** Motion-blurred layers drawn as their samples over the shutter (EvaluateOptions.motionBlur). */
  sampleMotionBlur = true;
  private readonly sampler: Sampler = {
    num: (l, p, lt) => this.num(l, p, lt),
    matrix: (l, comp, t) => this.matrix(l, comp, t),
    layerTime: (l, t) => this.layerTime(l, t),
  };

  constructor(
    project: SceneProject,
    private readonly rootId: number,
    private readonly maxDepth: number,
    private readonly maxLayers: number,
    private readonly expressions: ExpressionEvaluator | undefined,
  ) {
    ({ comps: this.comps, footage: this.footage, owner: this.owner } = indexOf(project));
  }

  /** One approximation per layer, feature and detail; a precomposition's layers say which composition they are in. */
  private note(layer: Layer | undefined, feature: string, detail: string): void {
    const comp = layer ? this.owner.get(layer) : undefined;
    const text = comp && comp.id !== this.rootId ? `${detail} (in precomposition "${comp.name}")` : detail;
    const key = `${layer?.index ?? ''}|${layer?.name ?? ''}|${feature}|${text}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    const a: Approximation = { feature, detail: text };
    if (layer) {
      a.layer_index = layer.index;
      a.layer = layer.name;
    }
    this.approximations.push(a);
  }

  /** A numeric property of `l` at layer time `lt`: its expression's value when it evaluates, else its own. */
  private num(l: Layer, p: NumProperty, lt: number): number[] {
    const own = sampleNum(p, lt);
    if (!p.expression || !this.expressions) return own;
    const t = l.startTime + lt * l.stretch;
    const r = this.expressions.evaluate(p.expression, this.context(l, p, t, own));
    this.outcome(l, p, r);
    return r.ok ? r.value : own;
  }

  private outcome(l: Layer, p: NumProperty, r: ExpressionResult): void {
    let outcomes = this.outcomes.get(l);
    if (!outcomes) this.outcomes.set(l, (outcomes = new Map()));
    // one failure at any sample of this instant (auto-orient samples around it) is what gets listed
    if (outcomes.get(p.path) === undefined || !r.ok) outcomes.set(p.path, r.ok ? true : r.reason);
  }

  /** A text layer's document at layer time `lt`, its text the Source Text expression's when it has one that runs. */
  private sourceText(l: Layer, p: Property<TextDocument>, lt: number): TextDocument {
    const doc = sampleHeld(p, lt);
    if (!p.expression || !this.expressions?.evaluateText) return doc;
    const own: NumProperty = { path: p.path, value: [0] };
    const ctx = this.context(l, own, l.startTime + lt * l.stretch, [0]);
    ctx.keyframeTimes = (p.keyframes ?? []).map((k) => l.startTime + k.time * l.stretch);
    const r = this.expressions.evaluateText(p.expression, ctx, doc.text);
    this.outcome(l, own, r.ok ? { ok: true, value: [0] } : r);
    return r.ok ? { ...doc, text: r.text.replace(/\r\n?|\n/g, '\r') } : doc;
  }

  /** A text layer's animators at layer time `lt`: each character's change (text-animators.ts). */
  private textCharacters(l: Layer, n: DisplayText, lt: number): DisplayText['characters'] {
    const t = l.startTime + lt * l.stretch;
    const doc = { fill: n.fill, stroke: n.stroke, strokeWidth: n.stroke_width, size: n.size };
    return characterChanges(n.all_caps ? n.text.toUpperCase() : n.text, doc, l.textAnimators ?? [], {
      num: (p) => this.num(l, p, lt),
      time: lt,
      expression: (p, index, total, selectorValue) => {
        const own = sampleNum(p, lt);
        if (!p.expression || !this.expressions) return own;
        const ctx = { ...this.context(l, p, t, own), text: { index, total, selectorValue } };
        const r = this.expressions.evaluate(p.expression, ctx);
        this.outcome(l, p, r);
        return r.ok ? r.value : own;
      },
    });
  }

  /** The expression of `p` (of layer `l`) at composition time `t`. */
  expressionAt(l: Layer, p: NumProperty, t: number): ExpressionResult {
    const own = sampleNum(p, this.layerTime(l, t));
    if (!p.expression || !this.expressions) return { ok: true, value: own };
    return this.expressions.evaluate(p.expression, this.context(l, p, t, own));
  }

  /** What an expression on `p` of layer `l` reads at composition time `t`. */
  private context(l: Layer, p: NumProperty, t: number, own: number[]): ExpressionContext {
    const comp = this.owner.get(l)!;
    return {
      time: t,
      value: own,
      sampleOwn: (at) => sampleNum(p, this.layerTime(l, at)),
      keyframeTimes: (p.keyframes ?? []).map((k) => l.startTime + k.time * l.stretch),
      propertyPath: p.path,
      layerIndex: l.index,
      layer: (ref) => {
        const x = typeof ref === 'number' ? comp.layers[ref - 1] : comp.layers.find((y) => y.name === ref);
        return x && this.expressionLayer(x);
      },
      comp: compFacts(comp),
      compNamed: (name) => {
        const other = [...this.comps.values()].find((c) => c.name === name);
        if (!other) return undefined;
        const layer = (ref: string | number) => {
          const x = typeof ref === 'number' ? other.layers[ref - 1] : other.layers.find((y) => y.name === ref);
          return x && this.expressionLayer(x);
        };
        return { comp: compFacts(other), layer };
      },
    };
  }

  private expressionLayer(x: Layer): ExpressionLayer {
    const source = x.sourceId === undefined ? undefined : (this.footage.get(x.sourceId) ?? this.comps.get(x.sourceId));
    return {
      index: x.index,
      name: x.name,
      inPoint: x.inPoint,
      outPoint: x.outPoint,
      startTime: x.startTime,
      ...(source && source.width && source.height ? { width: source.width, height: source.height } : {}),
      transform: (name, time) => {
        const lt = this.layerTime(x, time);
        const tr = x.transform;
        if (name === 'position') return this.position(x, lt);
        const prop = { anchorPoint: tr.anchor, scale: tr.scale, rotation: tr.rotation, opacity: tr.opacity }[name];
        return this.num(x, prop, lt);
      },
      markers: (x.markers ?? []).map((k) => ({ time: x.startTime + k.time * x.stretch, comment: k.comment })),
      sourceRect: (time, extents) => this.sourceRect(x, time, extents),
      sourceText: (time) => (x.text ? this.sourceText(x, x.text, this.layerTime(x, time)).text : undefined),
      effect: (e, p, time) => {
        const param = effectParam(x, e, p);
        return param && this.num(x, param.value, this.layerTime(x, time));
      },
    };
  }

  /** `sourceRectAtTime()` of layer `x` at composition time `time`: its source's frame, a shape layer's paths' bounds. */
  private sourceRect(x: Layer, time: number, extents: boolean): SourceRect | undefined {
    if (x.type === 'shape') {
      const resolve: (() => void)[] = [];
      const { nodes } = this.shapes(x, x.shapes ?? [], this.layerTime(x, time), resolve);
      for (const r of resolve) r();
      return shapeSourceRect(nodes, extents);
    }
    const src = x.sourceId === undefined ? undefined : (this.footage.get(x.sourceId) ?? this.comps.get(x.sourceId));
    return src?.width && src.height ? { top: 0, left: 0, width: src.width, height: src.height } : undefined;
  }

  private position(l: Layer, lt: number): number[] {
    const tr = l.transform;
    return tr.position
      ? this.num(l, tr.position, lt)
      : [this.num(l, tr.positionX!, lt)[0], this.num(l, tr.positionY!, lt)[0]];
  }

  /** Lists the expressions of every layer drawn or used that did not give this instant's value. */
  expressionNotes(): void {
    for (const l of this.touched) {
      const outcomes = this.outcomes.get(l);
      for (const e of l.expressions) {
        const outcome = outcomes?.get(e.property);
        if (outcome === true) {
          // Drawn, but After Effects' random sequence is not published: the same kind of note as a wiggly selector's.
          if (RANDOM_CALL.test(e.expression))
            this.note(
              l,
              'expression',
              `${e.property}: draws the preview's own seeded noise, not After Effects' random sequence: ${e.expression}`,
            );
          continue;
        }
        // an expression control's own expression changes nothing drawn unless something reads it (then it has run)
        if (outcome === undefined && silentEffectPath(l, e.property)) continue;
        const why = outcome ?? 'expression not evaluated';
        this.note(l, 'expression', `${e.property}: ${why}; its own value is drawn: ${e.expression}`);
      }
    }
  }

  /** Layer time of a composition time (keyframes are stored in layer time). */
  private layerTime(l: Layer, t: number): number {
    return (t - l.startTime) / l.stretch;
  }

  /** A layer's matrix into its composition, through the whole parent chain (parents' opacity is not inherited). */
  private matrix(l: Layer, comp: Composition, t: number, chain = 0): Matrix {
    const lt = this.layerTime(l, t);
    const tr = l.transform;
    this.touched.add(l);
    const position = (at: number) => this.position(l, at);
    const pos = position(lt);
    let rotation = this.num(l, tr.rotation, lt)[0];
    if (l.autoOrient) rotation += this.pathAngle(position, lt);
    let m = transformMatrix(this.num(l, tr.anchor, lt), pos, this.num(l, tr.scale, lt), rotation);
    if (l.parentId !== undefined && chain < comp.layers.length) {
      const parent = comp.layers.find((p) => p.id === l.parentId);
      if (parent) m = multiply(this.matrix(parent, comp, t, chain + 1), m);
    }
    return m;
  }

  /** The direction of motion at `lt` in degrees (auto-orient): from a small step either side, wider at rest. */
  private pathAngle(position: (t: number) => number[], lt: number): number {
    for (const h of [1 / 100, 1 / 10, 1]) {
      const a = position(lt - h);
      const b = position(lt + h);
      if (Math.hypot(b[0] - a[0], b[1] - a[1]) > 1e-9) return (Math.atan2(b[1] - a[1], b[0] - a[0]) * 180) / Math.PI;
    }
    return 0;
  }

  /** The composition's layers at `t`, bottom first. */
  composition(comp: Composition, t: number, stack: number[]): DisplayNode[] {
    const solo = comp.layers.some((l) => l.solo && l.enabled);
    const outer = this.space;
    this.space = this.inner ?? { view: viewAt(comp, t, this.sampler), base: IDENTITY4, collapsed: false };
    this.inner = undefined;
    const out: DisplayNode[] = [];
    for (let i = comp.layers.length - 1; i >= 0; i--) {
      const l = comp.layers[i];
      if (!l.enabled || l.guide || (solo && !l.solo)) continue;
      if (t < l.inPoint || t >= l.outPoint) continue;
      if (this.drawn >= this.maxLayers) {
        this.note(
          undefined,
          'layer-limit',
          `more than ${this.maxLayers} layers at this instant: the rest is not drawn`,
        );
        break;
      }
      const g = this.blurredLayer(l, comp, t, stack);
      // a collapsed 3D precomp's layers are placed in this composition's space, its opacity on each
      if (g && this.collapsed.has(g))
        for (const c of g.children) out.push(c.kind === 'group' ? { ...c, opacity: c.opacity * g.opacity } : c);
      else if (g) out.push(g);
    }
    this.notes3d(comp, t, out);
    this.space = outer;
    return out;
  }

  /** A layer with motion blur averaged over the shutter (motion-blur.ts); in 3D it is listed and drawn sharp. */
  private blurredLayer(l: Layer, comp: Composition, t: number, stack: number[]): DisplayGroup | undefined {
    if (!l.motionBlur || !comp.motionBlur) return this.layer(l, comp, t, stack);
    if (l.threeD || this.space?.collapsed) {
      this.note(l, 'motion-blur', 'motion blur of a 3D layer is not drawn');
      return this.layer(l, comp, t, stack);
    }
    if (!this.sampleMotionBlur) return this.layer(l, comp, t, stack);
    return motionBlurred(comp, t, (at) =>
      at >= l.inPoint && at < l.outPoint ? this.layer(l, comp, at, stack) : undefined,
    );
  }

  /** Orders 3D layers by depth and lists what 3D drawing leaves out at this instant (lights, depth of field, crossings). */
  private notes3d(comp: Composition, t: number, out: DisplayNode[]): void {
    const space = this.space!;
    // a collapsed 3D precomp's layers are ordered with the composition around it
    if (space.collapsed) return;
    const placed = out.some((n) => n.kind === 'group' && n.warp);
    for (const crossing of depthOrder(out, space.view))
      for (const g of crossing.children as DisplayGroup[])
        if (g.blend !== 'normal')
          this.note(
            comp.layers.find((l) => g.composition_id === comp.id && l.index === g.layer_index),
            '3d',
            `blending mode ${g.blend} is drawn as normal where 3D layers cross (each pixel laid over by depth)`,
          );
    if (!placed) return;
    const live = (l: Layer) => l.enabled && t >= l.inPoint && t < l.outPoint;
    const cam = comp.layers.find((l) => l.type === 'camera' && live(l));
    if (cam?.camera && this.num(cam, cam.camera.depthOfField, this.layerTime(cam, t))[0])
      this.note(cam, 'camera', 'depth of field is not drawn (everything is in focus)');
    const lit = comp.layers.some(
      (l) => l.threeD && live(l) && l.material && this.num(l, l.material.acceptsLights, this.layerTime(l, t))[0],
    );
    for (const l of comp.layers)
      if (l.type === 'light' && live(l) && lit) this.note(l, 'light', 'the shading it gives 3D layers is not drawn');
  }

  /** One layer as a group, or nothing when it draws nothing. */
  private layer(l: Layer, comp: Composition, t: number, stack: number[], asMatte = false): DisplayGroup | undefined {
    if (l.type === 'null' || l.type === 'camera' || l.type === 'light') return undefined;
    const lt = this.layerTime(l, t);
    this.notes(l, lt);
    const adjusting = isAdjustment(l);
    if (adjusting && (l.threeD || this.space?.collapsed)) {
      if (adjustsBelow(l)) this.note(l, 'effect', 'effects of a 3D adjustment layer are not applied');
      return undefined;
    }
    if (adjusting && !adjustsBelow(l)) return undefined;
    this.drawn++;
    const collapsed3d = l.type === 'precomp' && l.collapse && l.threeD && this.space;
    if (collapsed3d) {
      const world = mul4(this.space!.base, worldMatrix(l, comp, t, this.sampler));
      this.inner = { view: this.space!.view, base: world, collapsed: true };
    }
    const children = this.content(l, comp, t, lt, stack);
    this.inner = undefined;
    if (!children) return undefined;
    const g: DisplayGroup = {
      kind: 'group',
      layer_index: l.index,
      layer: l.name,
      composition_id: comp.id,
      matrix: this.matrix(l, comp, t),
      opacity: clamp01(this.num(l, l.transform.opacity, lt)[0] / 100),
      blend: l.blendMode === 'unknown' ? 'normal' : l.blendMode,
      children,
    };
    if (l.type === 'shape' && children.some(blends)) g.isolate = true;
    if (l.type === 'precomp' && !l.collapse) {
      const src = this.comps.get(l.sourceId!);
      if (src) g.clip = { width: src.width, height: src.height };
    }
    const masks = this.masks(l, lt);
    if (masks.length) g.masks = masks;
    if (l.trackMatte && !asMatte) {
      const m = comp.layers.find((x) => x.id === l.trackMatte!.layerId);
      const live = m && t >= m.inPoint && t < m.outPoint;
      const node = live ? this.layer(m, comp, t, stack, true) : undefined;
      if (node && m?.motionBlur && comp.motionBlur)
        this.note(m, 'motion-blur', 'motion blur of a track matte is not drawn');
      // a matte that draws nothing at this instant (or is past its out point) hides the layer (alpha, luma) or
      // leaves it whole (inverted)
      if (node) g.matte = { mode: l.trackMatte.mode, node };
      else if (l.trackMatte.mode === 'alpha' || l.trackMatte.mode === 'luma') return undefined;
    }
    if (l.blendMode !== 'normal' && (adjusting || !CANVAS_BLENDS.has(l.blendMode)))
      this.note(l, 'blend-mode', `blending mode ${l.blendMode} is drawn as normal`);
    this.effects(l, comp, t, lt, stack, g);
    if (adjusting) {
      g.adjustment = true;
      if (g.styles) this.note(l, 'layer-style', 'layer styles of an adjustment layer are not drawn');
      delete g.styles;
    }
    if (collapsed3d) {
      // its layers are already placed in this composition's space
      g.matrix = IDENTITY;
      if (g.masks || g.matte)
        this.note(l, '3d', 'masks or a track matte of a collapsed 3D precomposition are applied in composition space');
      else this.collapsed.add(g);
    } else if (this.space && (l.threeD || this.space.collapsed))
      place(g, l.threeD ? worldMatrix(l, comp, t, this.sampler) : fromAffine(g.matrix), this.space);
    return g;
  }

  /** The layer's drawn effects and layer styles at layer time `lt` (effects.ts), with the rectangle they use. */
  private effects(l: Layer, comp: Composition, t: number, lt: number, stack: number[], g: DisplayGroup): void {
    const num = (p: NumProperty) => this.num(l, p, lt);
    const index = (id: number) => comp.layers.find((x) => x.id === id)?.index;
    const drawn = l.effects.filter((e) => e.enabled && effectStatus(e) === 'drawn');
    const fx = drawn.map((e) => displayEffect(e, num, index, lt));
    // layers an effect reads (a map, a matte): drawn as the composition shows them, once each; a layer reading itself
    // or one that reads it back uses nothing
    drawn.forEach((e, k) => {
      for (const p of e.params ?? []) {
        const ref = p.type === 'layer' && p.layerId ? comp.layers.find((x) => x.id === p.layerId) : undefined;
        if (!ref || ref === l || this.reading.has(ref) || t < ref.inPoint || t >= ref.outPoint) continue;
        this.reading.add(l);
        const node = this.layer(ref, comp, t, stack, true);
        this.reading.delete(l);
        if (node) (fx[k].layers ??= {})[p.name] = node;
      }
    });
    const styles = (l.styles ?? []).filter((s) => DRAWN_STYLES.has(s.kind)).map((s) => displayStyle(s, num, lt));
    if (fx.length) g.effects = fx;
    if (styles.length) g.styles = styles;
    if (!fx.length && !styles.length) return;
    const src = l.sourceId === undefined ? undefined : (this.footage.get(l.sourceId) ?? this.comps.get(l.sourceId));
    g.layerSize =
      src?.width && src.height ? { width: src.width, height: src.height } : { width: comp.width, height: comp.height };
  }

  /** What the layer draws in its own coordinates, or undefined for nothing. */
  private content(l: Layer, comp: Composition, t: number, lt: number, stack: number[]): DisplayNode[] | undefined {
    switch (l.type) {
      case 'solid': {
        const f = this.footage.get(l.sourceId!);
        if (!f) return undefined;
        return [{ kind: 'solid', width: f.width, height: f.height, color: (f.color ?? [0, 0, 0, 1]) as Color }];
      }
      case 'footage': {
        const f = l.sourceId !== undefined ? this.footage.get(l.sourceId) : undefined;
        // sound-only footage has no picture
        if (!f || !f.width || !f.height) return undefined;
        const source = l.timeRemap ? this.num(l, l.timeRemap, lt)[0] : lt;
        const media = f.kind === 'placeholder' ? 'placeholder' : f.still ? 'image' : 'video';
        const node: DisplayNode = {
          kind: 'footage',
          footage_id: f.id,
          name: f.name,
          width: f.width,
          height: f.height,
          media,
        };
        if (f.path) node.path = f.path;
        if (media === 'video') node.source_time = Math.max(0, source);
        return [node];
      }
      case 'precomp': {
        const src = this.comps.get(l.sourceId!);
        if (!src) return undefined;
        if (stack.includes(src.id) || stack.length >= this.maxDepth) {
          this.note(l, 'precomp-depth', `precomposition "${src.name}" nested too deep or in itself: not drawn`);
          return undefined;
        }
        const inner = l.timeRemap ? this.num(l, l.timeRemap, lt)[0] : lt;
        return this.composition(src, inner, [...stack, src.id]);
      }
      case 'adjustment': {
        // where it applies: its source's pixels (a solid's rectangle), drawn as that source would be
        const kind = this.comps.has(l.sourceId!)
          ? 'precomp'
          : this.footage.get(l.sourceId!)?.kind === 'solid'
            ? 'solid'
            : 'footage';
        return this.content({ ...l, type: kind }, comp, t, lt, stack);
      }
      case 'text': {
        if (!l.text) return undefined;
        const node = textNode(this.sourceText(l, l.text, lt));
        const characters = l.textAnimators && this.textCharacters(l, node, lt);
        // nothing changed at this instant: drawn as plain text (whole runs keep ligatures and shaping)
        if (characters?.some((c) => c)) node.characters = characters;
        return [node];
      }
      case 'shape': {
        const resolve: (() => void)[] = [];
        const { nodes } = this.shapes(l, l.shapes ?? [], lt, resolve);
        for (const r of resolve) r();
        return nodes.reverse();
      }
      default:
        return undefined;
    }
  }

  /** Approximations of a drawn layer: effects, 3D, layer styles, text animators (expressions: expressionNotes). */
  private notes(l: Layer, lt: number): void {
    this.touched.add(l);
    for (const e of l.effects) {
      if (!e.enabled || effectStatus(e) === 'silent') continue;
      if (effectStatus(e) === 'missing') this.note(l, 'effect', `${e.matchName} (${e.name}) is not drawn`);
      else if (effectApproximation(e, lt))
        this.note(l, 'effect', `${e.matchName} (${e.name}): ${effectApproximation(e, lt)}`);
    }
    for (const s of l.layerStyles)
      if (!DRAWN_STYLES.has(s.split('/')[0])) this.note(l, 'layer-style', `${s} is not drawn`);
      else if (STYLE_APPROXIMATIONS[s.split('/')[0]])
        this.note(l, 'layer-style', `${s}: ${STYLE_APPROXIMATIONS[s.split('/')[0]]}`);
    for (const a of l.textAnimators ?? [])
      for (const d of animatorNotes(a, !!l.text?.value.box)) this.note(l, 'text-animator', d);
    if (l.preserveTransparency)
      this.note(l, 'preserve-transparency', 'drawn over everything below, not only where it is opaque');
  }

  private masks(l: Layer, lt: number): DisplayMask[] {
    const out: DisplayMask[] = [];
    for (const m of l.masks) {
      if (m.mode === 'none') continue;
      const feather = this.num(l, m.feather, lt);
      const expansion = this.num(l, m.expansion, lt)[0];
      if (feather[0] || feather[1])
        this.note(
          l,
          'mask-feather',
          `mask "${m.name}": feather drawn as a Gaussian centred on the path, sigma ${MASK_FEATHER_SIGMA} x the ` +
            "feather (After Effects documents the Gaussian and where it lies, not its spread: skottie's factor)",
        );
      if ((feather[0] || feather[1] || m.variableFeather) && m.featherFalloff === 'linear')
        this.note(l, 'mask-feather', `mask "${m.name}": linear feather falloff drawn as smooth`);
      if (m.variableFeather) this.note(l, 'mask-feather', `mask "${m.name}": variable feather points are not drawn`);
      out.push({
        mode: m.mode,
        inverted: m.inverted,
        opacity: clamp01(this.num(l, m.opacity, lt)[0] / 100),
        feather: [feather[0] ?? 0, feather[1] ?? feather[0] ?? 0],
        expansion,
        path: samplePath(m.path, lt),
      });
    }
    return out;
  }

  /**
   * A shape group's items in After Effects' order: returns the nodes in that order (first = on top) and the shapes the
   * group holds, each with the matrix into the group's coordinates. As in After Effects, a modifier (trim paths)
   * changes every shape above it, in this group and in the groups above it, and a fill or stroke paints the shapes
   * above it as every modifier of their groups leaves them, including modifiers further down: so fills and strokes
   * get their paths in `resolve`, once the whole layer has been gone through.
   */
  private shapes(
    l: Layer,
    items: ShapeItem[],
    lt: number,
    resolve: (() => void)[],
    depth = 0,
  ): { nodes: DisplayNode[]; refs: ShapeRef[] } {
    const refs: ShapeRef[] = [];
    const nodes: DisplayNode[] = [];
    const num = (p: NumProperty) => this.num(l, p, lt);
    // `nodes` is in After Effects' order (first on top); a paint composited above previous goes over all before it
    const painted = (shape: DisplayShape, above: boolean) => {
      const shapes = [...refs];
      resolve.push(() => {
        // a merged shape's operands first, as its `merge` counts them
        const merged = shapes.filter((r) => r.entry.merge);
        const ordered = merged.length ? [merged[0], ...shapes.filter((r) => r !== merged[0])] : shapes;
        shape.paths = ordered.flatMap((r) => r.entry.paths.map((p) => applyToPath(r.m, p)));
        if (merged.length) shape.merge = merged[0].entry.merge;
        if (merged.length > 1 || (merged.length && shape.stroke))
          this.note(l, 'shape-operator', "merge paths: a stroke or a second merged shape follows the inputs' outlines");
      });
      if (above) nodes.unshift(shape);
      else nodes.push(shape);
    };
    for (const item of items) {
      if (!item.enabled) continue;
      switch (item.kind) {
        case 'group': {
          if (depth > 50) break;
          const inner = this.shapes(l, item.items, lt, resolve, depth + 1);
          const m = groupMatrix(item, num);
          for (const r of inner.refs) refs.push({ entry: r.entry, m: multiply(m, r.m) });
          if (inner.nodes.length) {
            nodes.push({
              kind: 'group',
              matrix: m,
              opacity: clamp01(num(item.transform.opacity)[0] / 100),
              blend: item.blendMode === 'unknown' ? 'normal' : item.blendMode,
              children: inner.nodes.reverse(),
            });
          }
          if (item.blendMode === 'unknown')
            this.note(l, 'blend-mode', `shape group "${item.name}": blending mode drawn as normal`);
          break;
        }
        case 'rect':
        case 'ellipse':
        case 'star':
        case 'path': {
          let p: BezierPath;
          if (item.kind === 'rect') p = rectPath(num(item.position), num(item.size), num(item.roundness)[0]);
          else if (item.kind === 'ellipse') p = ellipsePath(num(item.position), num(item.size));
          else if (item.kind === 'star')
            p = starPath(
              item.starType === 'star',
              num(item.position),
              num(item.points)[0],
              num(item.rotation)[0],
              num(item.outerRadius)[0],
              num(item.innerRadius)[0],
              num(item.outerRoundness)[0],
              num(item.innerRoundness)[0],
            );
          else p = samplePath(item.path, lt);
          refs.push({ entry: { paths: [item.reversed ? reversePath(p) : p] }, m: IDENTITY });
          break;
        }
        case 'merge': {
          const merged = mergePaths(refs, item.mode);
          refs.splice(0, refs.length, { entry: merged.entry, m: merged.m });
          if (merged.approximated)
            this.note(l, 'shape-operator', `merge paths "${item.name}": a shape merged within it joins as its paths`);
          break;
        }
        case 'trim': {
          // trimmed in this group's coordinates, each piece taken back to its shape's own
          const flat = refs.flatMap((r) => r.entry.paths.map((p) => applyToPath(r.m, p)));
          const cut = trimPaths(flat, num(item.start)[0], num(item.end)[0], num(item.offset)[0], item.individually);
          let k = 0;
          for (const r of refs) {
            const back = invert(r.m);
            const mine = cut.slice(k, k + r.entry.paths.length).flat();
            k += r.entry.paths.length;
            r.entry.paths = back ? mine.map((p) => applyToPath(back, p)) : [];
            if (r.entry.merge) {
              delete r.entry.merge;
              this.note(l, 'shape-operator', 'trim paths after merge paths: the merged inputs are trimmed as they are');
            }
          }
          break;
        }
        case 'fill':
        case 'gradient-fill': {
          const fill: DisplayFill = {
            color: item.kind === 'fill' ? (num(item.color) as Color) : [0, 0, 0, 1],
            opacity: clamp01(num(item.opacity)[0] / 100),
            rule: item.rule,
            blend: item.blendMode === 'unknown' ? 'normal' : item.blendMode,
          };
          if (item.kind === 'gradient-fill') fill.gradient = this.gradient(l, item, lt);
          painted({ kind: 'shape', paths: [], fill }, item.above);
          break;
        }
        case 'stroke':
        case 'gradient-stroke': {
          const { dashes, offset } = dashPattern(item.dashes, num);
          const stroke: DisplayStroke = {
            color: item.kind === 'stroke' ? (num(item.color) as Color) : [0, 0, 0, 1],
            opacity: clamp01(num(item.opacity)[0] / 100),
            width: num(item.width)[0],
            cap: item.cap,
            join: item.join,
            miter_limit: num(item.miterLimit)[0],
            dashes,
            dash_offset: offset,
            blend: item.blendMode === 'unknown' ? 'normal' : item.blendMode,
          };
          if (item.kind === 'gradient-stroke') stroke.gradient = this.gradient(l, item, lt);
          painted({ kind: 'shape', paths: [], stroke }, item.above);
          break;
        }
        case 'modifier': {
          // applied in this group's coordinates, like trim paths, each path taken back to its shape's own
          const amount = num(item.amount)[0];
          if (item.op === 'twist') {
            this.twist(l, item, amount, num(item.center ?? { path: '', value: [0, 0] }), refs);
            break;
          }
          const op = (q: BezierPath): BezierPath =>
            item.op === 'pucker-bloat'
              ? puckerBloat(q, amount)
              : item.op === 'round-corners'
                ? roundCorners(q, amount)
                : item.op === 'zig-zag'
                  ? zigZag(q, amount, item.ridges ? num(item.ridges)[0] : 5, !!item.smooth)
                  : offsetPath(q, amount, item.join ?? 'miter', item.miterLimit ? num(item.miterLimit)[0] : 4);
          for (const r of refs) {
            const back = invert(r.m);
            r.entry.paths = back ? r.entry.paths.map((q) => applyToPath(back, op(applyToPath(r.m, q)))) : [];
          }
          break;
        }
        case 'repeater': {
          // everything above, copied: the paints' nodes shared by every copy, the shapes once per copy for what
          // paints them further down (the first copy keeps the shapes' own entries, which the paints above read)
          const all = repeaterCopies({
            copies: num(item.copies)[0],
            offset: num(item.offset)[0],
            anchor: num(item.anchor),
            position: num(item.position),
            scale: num(item.scale),
            rotation: num(item.rotation)[0],
            startOpacity: num(item.startOpacity)[0],
            endOpacity: num(item.endOpacity)[0],
          });
          const within = copiesWithin(
            nodes,
            refs.reduce((n, r) => n + r.entry.paths.length, 0),
          );
          const copies = all.slice(0, within);
          if (within < all.length)
            this.note(
              l,
              'shape-operator',
              `repeater "${item.name}": ${within} of ${all.length} copies drawn (the limit)`,
            );
          const children = nodes.splice(0).reverse();
          const unit = refs.splice(0);
          for (const [k, c] of copies.entries()) {
            for (const r of unit)
              refs.push({
                entry: k === 0 ? r.entry : { ...r.entry, paths: [...r.entry.paths] },
                m: multiply(c.matrix, r.m),
              });
            if (children.length)
              nodes.push({ kind: 'group', matrix: c.matrix, opacity: c.opacity, blend: 'normal', children });
          }
          // `nodes` is top first: "above" puts the last copy on top
          if (item.above) nodes.reverse();
          break;
        }
        case 'unsupported':
          this.note(l, 'shape-operator', `${item.matchName} ("${item.name}") is not applied`);
          break;
      }
    }
    return { nodes, refs };
  }

  /**
   * Twist turns every shape above it about one centre, out to the farthest point of them all (geometry.ts `twist`),
   * in the group's coordinates. Its falloff is this project's choice (After Effects publishes none): listed.
   */
  private twist(l: Layer, item: ShapeModifier, angle: number, center: number[], refs: ShapeRef[]): void {
    if (!angle) return;
    const c: [number, number] = [center[0] ?? 0, center[1] ?? 0];
    const inGroup = refs.map((r) => r.entry.paths.map((q) => applyToPath(r.m, q)));
    const radius = twistRadius(inGroup.flat(), c);
    refs.forEach((r, k) => {
      const back = invert(r.m);
      r.entry.paths = back ? inGroup[k].map((q) => applyToPath(back, twist(q, angle, c, radius))) : [];
    });
    this.note(
      l,
      'shape-operator',
      `twist "${item.name}": the angle falls off linearly from the centre to the farthest point (After Effects does ` +
        'not publish its falloff)',
    );
  }

  private gradient(
    l: Layer,
    item: Extract<ShapeItem, { kind: 'gradient-fill' | 'gradient-stroke' }>,
    lt: number,
  ): GradientPaint {
    const stops = sampleStops(item.stops, lt);
    return {
      type: item.gradientType,
      start: this.num(l, item.start, lt).slice(0, 2) as [number, number],
      end: this.num(l, item.end, lt).slice(0, 2) as [number, number],
      highlight_length: this.num(l, item.highlightLength, lt)[0] / 100,
      highlight_angle: this.num(l, item.highlightAngle, lt)[0],
      stops: paintStops(stops),
    };
  }
}

/**
 * Blend modes the page draws: Canvas 2D's own (globalCompositeOperation) and those it computes per pixel
 * (draw-script.ts); the others are drawn as normal and listed.
 */
const CANVAS_BLENDS = new Set([
  'dissolve',
  'linear-burn',
  'linear-light',
  'vivid-light',
  'pin-light',
  'hard-mix',
  'subtract',
  'divide',
  'darker-color',
  'lighter-color',
  'classic-color-dodge',
  'classic-color-burn',
  'stencil-alpha',
  'silhouette-alpha',
  'normal',
  'add',
  'multiply',
  'screen',
  'overlay',
  'darken',
  'lighten',
  'color-dodge',
  'color-burn',
  'hard-light',
  'soft-light',
  'difference',
  'exclusion',
  'hue',
  'saturation',
  'color',
  'luminosity',
  'classic-difference',
  'linear-dodge',
]);

/** A composition as expressions see it (`thisComp`, `comp("name")`). */
function compFacts(comp: Composition): ExpressionComp {
  return {
    name: comp.name,
    width: comp.width,
    height: comp.height,
    pixelAspect: comp.pixelAspect,
    duration: comp.duration,
    frameDuration: 1 / comp.frameRate,
    displayStartTime: comp.displayStartTime,
    numLayers: comp.layers.length,
  };
}

/** Whether a shape layer's node blends other than normally (then the layer is drawn on its own surface). */
function blends(n: DisplayNode): boolean {
  if (n.kind === 'group') return n.blend !== 'normal' || n.children.some(blends);
  if (n.kind !== 'shape') return false;
  return (!!n.fill && n.fill.blend !== 'normal') || (!!n.stroke && n.stroke.blend !== 'normal');
}

function groupMatrix(g: ShapeGroup, num: (p: NumProperty) => number[]): Matrix {
  const tr = g.transform;
  return transformMatrix(
    num(tr.anchor),
    num(tr.position),
    num(tr.scale),
    num(tr.rotation)[0],
    num(tr.skew)[0],
    num(tr.skewAxis)[0],
  );
}

/** Canvas setLineDash from After Effects' dash/gap list (a lone dash repeats as dash, gap of the same length). */
function dashPattern(list: Dash[], num: (p: NumProperty) => number[]): { dashes: number[]; offset: number } {
  let offset = 0;
  const dashes: number[] = [];
  for (const d of list) {
    const v = Math.max(0, num(d.length)[0]);
    if (d.kind === 'offset') offset = v;
    else dashes.push(v);
  }
  if (dashes.length % 2 === 1) dashes.push(dashes[dashes.length - 1]);
  return { dashes: dashes.some((x) => x > 0) ? dashes : [], offset };
}

function textNode(doc: TextDocument): DisplayText {
  const t: DisplayText = {
    kind: 'text',
    text: doc.text.replace(/\r\n?|\u0003/g, '\n'),
    font: doc.font,
    size: doc.fontSize,
    stroke_width: doc.strokeWidth,
    stroke_over_fill: doc.strokeOverFill,
    tracking: doc.tracking,
    leading: doc.leading ?? doc.fontSize * 1.2,
    justification: doc.justification,
    all_caps: doc.allCaps,
    small_caps: doc.smallCaps,
    faux_bold: doc.fauxBold,
    faux_italic: doc.fauxItalic,
    baseline_shift: doc.baselineShift,
    horizontal_scale: doc.horizontalScale,
    vertical_scale: doc.verticalScale,
  };
  if (doc.fillColor) t.fill = doc.fillColor;
  if (doc.strokeColor) t.stroke = doc.strokeColor;
  if (doc.box)
    t.box = { x: doc.box.position[0], y: doc.box.position[1], width: doc.box.size[0], height: doc.box.size[1] };
  return t;
}
