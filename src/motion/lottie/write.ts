import type { Approximation } from '../scene/display.js';
import type { ExpressionEvaluator } from '../scene/expressions.js';
import { expressionValueAt } from '../scene/evaluate.js';
import type {
  BezierPath,
  BlendMode,
  Composition,
  Dash,
  EffectParamType,
  Footage,
  GradientStops,
  Layer,
  Mask,
  NumProperty,
  Property,
  SceneProject,
  ShapeItem,
  ShapeModifier,
  ShapeTransform,
  TextAnimator,
  TextDocument,
  TextSelector,
} from '../scene/model.js';
import {
  bakedValue,
  keyFrame,
  numValue,
  otherValue,
  round,
  withoutEmptyPathKeys,
  type LottieValue,
  type TimeBase,
} from './keyframes.js';
import type { GlyphFont } from './glyphs.js';
import { keptExpression } from './kept-expression.js';
import { withMidpointStops } from '../scene/gradients.js';
import { MERGE_MODES } from '../scene/merge-paths.js';

/**
 * The scene model as Lottie 5.x JSON, field by field as bodymovin writes it (docs/lottie.md has the table). One
 * composition becomes the animation; each precomposition it shows becomes an asset (once, by id), each footage
 * picture an image asset whose bytes the caller supplies (`images`). Times are frames of the root composition's rate
 * (lottie-web and the other players run every precomposition on that clock). What Lottie cannot carry is listed in
 * `approximations`, once per layer and feature, as the preview lists what it does not draw.
 */

export interface ImageSource {
  /** What the image asset points at: a data URI (embedded) or a file name in the archive's image folder. */
  embedded?: string;
  file?: string;
  width: number;
  height: number;
}

export interface WriteOptions {
  /** `bake`: expressions evaluated at every frame into keys; `keep`: their text in `x` (lottie-web runs it). */
  expressions: 'bake' | 'keep';
  /** The sandbox used for baking (absent: expressions are kept as text and listed). */
  evaluator?: ExpressionEvaluator;
  /** The picture of each footage item found, by footage id (absent: the layer is left out and listed). */
  images: Map<number, ImageSource>;
  /** Folder of the image files (`files`): the assets' `u`. */
  imageFolder?: string;
  /** Text replacing a layer's Source Text (every key), by layer index of the root composition. */
  text?: Map<number, string>;
  /** Footage replacing a layer's source, by layer index of the root composition. */
  media?: Map<number, Footage>;
  /** Camera layers as cameras (ty 13, as bodymovin writes them) instead of nulls. */
  cameras?: boolean;
  /** Glyph outlines by PostScript name (glyphs.ts): their text's characters go in `chars`. */
  glyphs?: Map<string, GlyphFont>;
  /** Asked between layers and baked frames: true stops the writing (a cancelled job, a client gone). */
  cancelled?: () => boolean;
}

export interface Written {
  lottie: Record<string, unknown>;
  frames: number;
  approximations: Approximation[];
}

type Json = Record<string, unknown>;

/** Lottie's blend mode numbers (bm). */
const BLEND: Partial<Record<BlendMode, number>> = {
  normal: 0,
  multiply: 1,
  screen: 2,
  overlay: 3,
  darken: 4,
  lighten: 5,
  'color-dodge': 6,
  'color-burn': 7,
  'hard-light': 8,
  'soft-light': 9,
  difference: 10,
  'classic-difference': 10,
  exclusion: 11,
  hue: 12,
  saturation: 13,
  color: 14,
  luminosity: 15,
  add: 16,
  'linear-dodge': 16,
  'hard-mix': 17,
};

/** Lottie's effect types by match name (bodymovin's); any other effect is 5, found by its match name. */
const EFFECT_TYPE: Record<string, number> = {
  'ADBE Tint': 20,
  'ADBE Fill': 21,
  'ADBE Stroke': 22,
  'ADBE Tritone': 23,
  'ADBE Pro Levels2': 24,
  'ADBE Drop Shadow': 25,
  'ADBE Radial Wipe': 26,
  'ADBE Displacement Map': 27,
  'ADBE Set Matte3': 28,
  'ADBE Gaussian Blur 2': 29,
  'ADBE Twirl': 30,
  'ADBE MESH WARP': 31,
  'ADBE Ripple': 32,
  'ADBE Spherize': 33,
  'ADBE FreePin3': 34,
};
/** The effects lottie-web draws (its SVG renderer; canvas draws fewer). */
const LOTTIE_WEB_EFFECTS = new Set([
  'ADBE Tint',
  'ADBE Fill',
  'ADBE Stroke',
  'ADBE Tritone',
  'ADBE Pro Levels2',
  'ADBE Drop Shadow',
  'ADBE Set Matte3',
  'ADBE Gaussian Blur 2',
]);
/** Lottie's effect parameter types: 0 slider, 1 angle, 2 colour, 3 point, 4 checkbox, 7 dropdown, 10 layer, 6 none. */
const PARAM_TYPE: Record<EffectParamType, number> = {
  slider: 0,
  scalar: 0,
  integer: 0,
  angle: 1,
  color: 2,
  point: 3,
  point3d: 3,
  checkbox: 4,
  popup: 7,
  layer: 10,
  mask: 6,
  curve: 6,
  custom: 6,
};

const MATTE = { alpha: 1, 'alpha-inverted': 2, luma: 3, 'luma-inverted': 4 } as const;
const MASK_MODE = { none: 'n', add: 'a', subtract: 's', intersect: 'i', lighten: 'l', darken: 'd', difference: 'f' };
const CAP = { butt: 1, round: 2, square: 3 } as const;
const JOIN = { miter: 1, round: 2, bevel: 3 } as const;
const JUSTIFY = {
  left: 0,
  right: 1,
  center: 2,
  'justify-last-left': 3,
  'justify-last-right': 4,
  'justify-last-center': 5,
  'justify-all': 6,
} as const;

/** Lottie's text selector codes (`b`: based on, `sh`: shape), as bodymovin writes them. */
const BASED_ON = { characters: 1, 'characters-excluding-spaces': 2, words: 3, lines: 4 } as const;
const SELECTOR_SHAPE = { square: 1, 'ramp-up': 2, 'ramp-down': 3, triangle: 4, round: 5, smooth: 6 } as const;

const hex = (c: number[]) =>
  '#' +
  c
    .slice(0, 3)
    .map((x) =>
      Math.round(Math.min(1, Math.max(0, x)) * 255)
        .toString(16)
        .padStart(2, '0'),
    )
    .join('');

const pathJson = (p: BezierPath) => ({
  i: p.i.map(([x, y]) => [round(x), round(y)]),
  o: p.o.map(([x, y]) => [round(x), round(y)]),
  v: p.v.map(([x, y]) => [round(x), round(y)]),
  c: p.closed,
});

/**
 * Gradient stops as Lottie's flat list: colour stops [offset, r, g, b]..., then opacity stops [offset, a]..., with
 * bodymovin's stop at each midpoint (gradients.ts).
 */
function stopsJson(stops: GradientStops): number[] {
  const s = withMidpointStops(stops);
  const out = s.colors.flatMap((c) => c.map((x) => round(x)));
  // all-opaque gradients need no opacity stops (bodymovin leaves them out too)
  if (s.opacities.some((o) => o[1] < 1)) out.push(...s.opacities.flatMap((o) => o.map((x) => round(x))));
  return out;
}

/** Font family and style from a PostScript name (`Arial-BoldItalicMT` → Arial, BoldItalic). */
function fontParts(ps: string): { family: string; style: string } {
  const [family, style = 'Regular'] = ps.split('-');
  return { family: family || ps, style: style.replace(/MT$/, '') || 'Regular' };
}

class Writer {
  readonly approximations: Approximation[] = [];
  private readonly seen = new Set<string>();
  private readonly comps: Map<number, Composition>;
  private readonly footage: Map<number, Footage>;
  /** Assets written, by key: `comp_<id>` and `image_<id>`. */
  private readonly assets = new Map<string, Json>();
  private readonly fonts = new Map<string, Json>();
  /** The characters each glyph font draws (by PostScript name), for `chars`. */
  private readonly charsUsed = new Map<string, Set<string>>();
  private readonly fps: number;
  private depth = 0;

  constructor(
    private readonly project: SceneProject,
    private readonly root: Composition,
    private readonly options: WriteOptions,
  ) {
    this.comps = new Map(project.compositions.map((c) => [c.id, c]));
    this.footage = new Map([...project.footage, ...(options.media?.values() ?? [])].map((f) => [f.id, f]));
    this.fps = root.frameRate;
  }

  private note(comp: Composition, layer: Layer | undefined, feature: string, detail: string): void {
    const text = comp.id !== this.root.id ? `${detail} (in precomposition "${comp.name}")` : detail;
    const key = `${layer?.index ?? ''}|${layer?.name ?? ''}|${feature}|${text}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.approximations.push({
      ...(layer ? { layer_index: layer.index, layer: layer.name } : {}),
      feature,
      detail: text,
    });
  }

  write(): Written {
    const layers = this.layers(this.root);
    const frames = Math.round(this.root.duration * this.fps);
    const lottie: Json = {
      v: '5.12.2',
      fr: round(this.fps),
      ip: 0,
      op: frames,
      w: this.root.width,
      h: this.root.height,
      nm: this.root.name,
      ddd: this.root.layers.some((l) => l.threeD) ? 1 : 0,
      assets: [...this.assets.values()],
      ...(this.fonts.size ? { fonts: { list: [...this.fonts.values()] } } : {}),
      ...(this.charsUsed.size ? { chars: this.chars() } : {}),
      layers,
      markers: [],
    };
    return { lottie, frames, approximations: this.approximations };
  }

  /** Each glyph font's characters as bodymovin writes them: outlines at size 100 in a group, the advance in `w`. */
  private chars(): Json[] {
    const out: Json[] = [];
    for (const [ps, used] of this.charsUsed) {
      const font = this.options.glyphs!.get(ps)!;
      const missing: string[] = [];
      for (const ch of [...used].sort()) {
        const glyph = font.char(ch);
        if (!glyph) {
          missing.push(ch);
          continue;
        }
        const it = glyph.paths.map((p, k) => ({
          ind: k,
          ty: 'sh',
          ix: k + 1,
          ks: { a: 0, k: pathJson(p), ix: 2 },
          nm: ch,
          mn: 'ADBE Vector Shape - Group',
          hd: false,
        }));
        const group = { ty: 'gr', it, nm: ch, np: it.length, cix: 2, bm: 0, ix: 1, mn: 'ADBE Vector Group', hd: false };
        out.push({
          ch,
          size: 100,
          style: font.style,
          w: round(glyph.w),
          data: { shapes: [group] },
          fFamily: font.family,
        });
      }
      if (missing.length)
        this.approximations.push({
          feature: 'text-glyphs',
          detail: `${ps} has no glyph for ${missing.map((c) => JSON.stringify(c)).join(', ')}: players draw nothing there`,
        });
    }
    return out;
  }

  /** A composition's layers, top first (Lottie's order, as After Effects lists them). */
  private layers(comp: Composition): Json[] {
    const solo = comp.layers.some((l) => l.solo && l.enabled);
    const hidden = (l: Layer) => !l.enabled || l.guide || (solo && !l.solo);
    const inds = new Map(comp.layers.map((l) => [l.id, l.index]));
    let spare = comp.layers.reduce((m, l) => Math.max(m, l.index), 0);
    const out: Json[] = [];
    /** Hidden matte layers already written as a matte (td) under their own index. */
    const moved = new Set<number>();
    for (let n = 0; n < comp.layers.length; n++) {
      const l = comp.layers[n];
      this.checkCancelled();
      if (moved.has(l.id)) continue;
      // a hidden layer's matte changes nothing drawn (AE 23+ files also mark a matte layer with its user)
      const matte = !hidden(l) && l.trackMatte ? comp.layers.find((m) => m.id === l.trackMatte!.layerId) : undefined;
      const json = this.layer(l, comp, inds, hidden(l));
      if (!json) continue;
      if (matte && l.trackMatte) {
        // Lottie's matte is the layer just above, marked td and not drawn itself: the matte layer itself when it is
        // hidden and not written yet (just above, or further down in AE 23+), else a copy under a spare index
        const above = out[out.length - 1];
        let td: Json | undefined = above;
        if (hidden(matte) && above?.ind === matte.index && comp.layers[n - 1] === matte && above.td === undefined) {
          above.td = 1;
          delete above.hd;
        } else {
          const own = hidden(matte) && comp.layers.indexOf(matte) > n;
          const copy = this.layer(matte, comp, inds, false);
          if (copy) {
            if (own) moved.add(matte.id);
            else copy.ind = ++spare;
            copy.td = 1;
            out.push(copy);
          }
          td = copy;
        }
        // tp names the matte (lottie-web 5.12+ reads it, and without it takes the layer whose ind is one less)
        if (td) Object.assign(json, { tt: MATTE[l.trackMatte.mode], tp: td.ind });
      }
      out.push(json);
    }
    return out;
  }

  /**
   * A layer's effects as bodymovin writes them (`ef`: type, match name, parameters in order with their control
   * types); players find them by type (lottie-web) or match name (skottie). One without parameters read is listed.
   */
  private effects(l: Layer, comp: Composition, inds: Map<number, number>): Json[] {
    const out: Json[] = [];
    for (const [k, e] of l.effects.entries()) {
      if (!e.enabled) continue;
      if (!e.params) {
        this.note(comp, l, 'effect', `${e.matchName} (${e.name}) is not written (its parameters are not read)`);
        continue;
      }
      if (!LOTTIE_WEB_EFFECTS.has(e.matchName))
        this.note(comp, l, 'effect', `${e.matchName} (${e.name}) is written; lottie-web does not draw it`);
      const ef = e.params.map((p, j) => {
        const ty = PARAM_TYPE[p.type];
        const v =
          p.type === 'layer'
            ? { a: 0, k: p.layerId ? (inds.get(p.layerId) ?? 0) : 0 }
            : this.num(p.value, l, comp, ty === 2 ? { dims: 4 } : ty === 3 ? { dims: 2 } : { scalar: true });
        return { ty, nm: p.name, mn: p.matchName, ix: j + 1, v: { ...v, ix: j + 1 } };
      });
      // np: bodymovin counts the effect's compositing options too
      out.push({
        ty: EFFECT_TYPE[e.matchName] ?? 5,
        nm: e.name,
        np: ef.length + 2,
        mn: e.matchName,
        ix: k + 1,
        en: 1,
        ef,
      });
    }
    return out;
  }

  /** Whether any of the layer's transform, mask or shape keys holds (text documents are listed apart). */
  private holdsKeys(l: Layer): boolean {
    const props: Property<unknown>[] = [
      ...Object.values(l.transform).filter((p): p is NumProperty => p !== undefined),
      ...l.masks.flatMap((m) => [m.path, m.opacity, m.feather, m.expansion]),
    ];
    const inShapes = (items: ShapeItem[]): boolean =>
      items.some((i) =>
        i.kind === 'group'
          ? inShapes(i.items)
          : Object.values(i).some((v) =>
              (v as Property<unknown>)?.keyframes?.some((k) => k.outInterpolation === 'hold'),
            ),
      );
    return props.some((p) => p.keyframes?.some((k) => k.outInterpolation === 'hold')) || inShapes(l.shapes ?? []);
  }

  private checkCancelled(): void {
    if (this.options.cancelled?.()) throw new Error('cancelled');
  }

  private base(l: Layer): TimeBase {
    return { startTime: l.startTime, stretch: l.stretch, fps: this.fps };
  }

  /** A numeric property, its expression baked or kept. */
  private num(
    p: NumProperty,
    l: Layer,
    comp: Composition,
    opts: { scalar?: boolean; dims?: number } = {},
  ): LottieValue {
    const v = numValue(p, this.base(l), opts);
    if (!p.expression) return v;
    if (this.options.expressions === 'keep' || !this.options.evaluator) {
      const kept = keptExpression(p.expression);
      if (!kept.ok) this.note(comp, l, 'expression', `${p.path}: kept as written, but ${kept.reason}: ${p.expression}`);
      else if (this.options.expressions === 'bake')
        this.note(comp, l, 'expression', `${p.path}: not baked (no sandbox); kept as text: ${p.expression}`);
      return { ...v, x: kept.text };
    }
    return this.baked(p, l, comp, opts) ?? v;
  }

  /** The expression's value at every frame of the layer's time in its composition, or undefined when it fails. */
  private baked(p: NumProperty, l: Layer, comp: Composition, opts: { scalar?: boolean; dims?: number }) {
    const from = Math.max(0, Math.floor(l.inPoint * this.fps));
    const to = Math.min(Math.ceil(comp.duration * this.fps), Math.ceil(l.outPoint * this.fps));
    const frames: { t: number; v: number[] }[] = [];
    for (let f = from; f <= Math.max(from, to); f++) {
      this.checkCancelled();
      const r = expressionValueAt(this.project, l, p, f / this.fps, this.options.evaluator!);
      if (!r.ok) {
        this.note(comp, l, 'expression', `${p.path}: ${r.reason}; its own value is written: ${p.expression}`);
        return undefined;
      }
      let v = opts.dims ? r.value.slice(0, opts.dims) : r.value;
      while (opts.dims && v.length < opts.dims) v = [...v, 0];
      frames.push({ t: f, v });
    }
    return bakedValue(frames, opts.scalar ?? false);
  }

  private transform(l: Layer, comp: Composition): Json {
    const tr = l.transform;
    const ks: Json = {
      o: { ...this.num(tr.opacity, l, comp, { scalar: true }), ix: 11 },
      a: { ...this.num(tr.anchor, l, comp, { dims: 3 }), ix: 1, l: 2 },
      s: { ...this.num(tr.scale, l, comp, { dims: 3 }), ix: 6, l: 2 },
    };
    if (tr.position) ks.p = { ...this.num(tr.position, l, comp, { dims: 3 }), ix: 2, l: 2 };
    else
      ks.p = {
        s: true,
        x: { ...this.num(tr.positionX!, l, comp, { scalar: true }), ix: 3 },
        y: { ...this.num(tr.positionY!, l, comp, { scalar: true }), ix: 4 },
      };
    if (l.threeD) {
      // players read all four of a 3D layer (lottie-web fails on a missing one): absent ones are at rest
      const zero = (path: string, value: number[]): NumProperty => ({ path, value });
      const g = 'ADBE Transform Group>';
      ks.rx = { ...this.num(tr.rotationX ?? zero(`${g}ADBE Rotate X`, [0]), l, comp, { scalar: true }), ix: 8 };
      ks.ry = { ...this.num(tr.rotationY ?? zero(`${g}ADBE Rotate Y`, [0]), l, comp, { scalar: true }), ix: 9 };
      ks.rz = { ...this.num(tr.rotation, l, comp, { scalar: true }), ix: 10 };
      ks.or = { ...this.num(tr.orientation ?? zero(`${g}ADBE Orientation`, [0, 0, 0]), l, comp, { dims: 3 }), ix: 7 };
    } else ks.r = { ...this.num(tr.rotation, l, comp, { scalar: true }), ix: 10 };
    return ks;
  }

  /** One layer, or undefined for what Lottie has no layer for (and nothing uses). */
  private layer(l: Layer, comp: Composition, inds: Map<number, number>, hidden: boolean): Json | undefined {
    const json: Json = {
      ddd: l.threeD ? 1 : 0,
      ind: l.index,
      ty: 3,
      nm: l.name,
      sr: round(l.stretch),
      ks: this.transform(l, comp),
      ao: l.autoOrient ? 1 : 0,
      ip: round(l.inPoint * this.fps),
      op: round(l.outPoint * this.fps),
      st: round(l.startTime * this.fps),
      bm: 0,
    };
    if (l.parentId !== undefined && inds.has(l.parentId)) json.parent = inds.get(l.parentId);
    if (hidden) json.hd = true;
    const bm = BLEND[l.blendMode];
    if (bm !== undefined) json.bm = bm;
    else this.note(comp, l, 'blend-mode', `blending mode ${l.blendMode} has no Lottie equivalent: written as normal`);
    this.content(l, comp, json);
    if (l.masks.length && json.ty !== 3) {
      json.hasMask = true;
      json.masksProperties = l.masks.map((m) => this.mask(m, l, comp));
    }
    if (l.timeRemap && (json.ty === 0 || json.ty === 2)) json.tm = this.num(l.timeRemap, l, comp, { scalar: true });
    const ef = this.effects(l, comp, inds);
    if (ef.length) json.ef = ef;
    for (const s of l.layerStyles) this.note(comp, l, 'layer-style', `${s} is not written`);
    if (l.stretch < 0 && this.holdsKeys(l))
      this.note(
        comp,
        l,
        'time-stretch',
        'played backwards with hold keys: each held value starts at the other end of its segment in the file',
      );
    if (l.preserveTransparency)
      this.note(comp, l, 'preserve-transparency', 'written as a normal layer (Lottie has no preserve transparency)');
    if (l.motionBlur && comp.motionBlur) this.note(comp, l, 'motion-blur', 'motion blur is not written');
    return json;
  }

  private content(l: Layer, comp: Composition, json: Json): void {
    const media = comp.id === this.root.id ? this.options.media?.get(l.index) : undefined;
    const sourceId = media ? media.id : l.sourceId;
    switch (l.type) {
      case 'solid': {
        const f = sourceId !== undefined ? this.footage.get(sourceId) : undefined;
        if (!f) return;
        if (f.kind === 'solid') {
          Object.assign(json, { ty: 1, sc: hex(f.color ?? [0, 0, 0]), sw: f.width, sh: f.height });
          return;
        }
        this.image(l, comp, f, json);
        return;
      }
      case 'footage': {
        const f = sourceId !== undefined ? this.footage.get(sourceId) : undefined;
        if (!f) return;
        if (f.kind === 'solid')
          Object.assign(json, { ty: 1, sc: hex(f.color ?? [0, 0, 0]), sw: f.width, sh: f.height });
        else this.image(l, comp, f, json);
        return;
      }
      case 'precomp': {
        const src = sourceId !== undefined ? this.comps.get(sourceId) : undefined;
        if (!src) {
          const f = sourceId !== undefined ? this.footage.get(sourceId) : undefined;
          if (f) this.image(l, comp, f, json);
          return;
        }
        const id = `comp_${src.id}`;
        if (!this.assets.has(id)) {
          if (this.depth >= 16) {
            this.note(comp, l, 'precomp-depth', `precomposition "${src.name}" nested too deep or in itself: left out`);
            return;
          }
          // reserved before its layers are written: a composition inside itself refers to the asset, not again
          const asset: Json = { id, nm: src.name, fr: round(src.frameRate), layers: [] };
          this.assets.set(id, asset);
          this.depth++;
          asset.layers = this.layers(src);
          this.depth--;
          // the asset goes after the ones it uses, as bodymovin orders them
          this.assets.delete(id);
          this.assets.set(id, asset);
        }
        Object.assign(json, { ty: 0, refId: id, w: src.width, h: src.height });
        if (l.collapse)
          this.note(comp, l, 'collapse', 'collapsed transformations: the precomposition is clipped to its frame');
        return;
      }
      case 'text': {
        if (!l.text) return;
        const edit = comp.id === this.root.id ? this.options.text?.get(l.index) : undefined;
        const base = this.base(l);
        const keys = edit !== undefined ? undefined : l.text.keyframes;
        let docs = keys?.length
          ? keys.map((k) => ({ s: this.doc(k.value), t: keyFrame(base, k.time) }))
          : [{ s: this.doc(edit !== undefined ? { ...l.text.value, text: edit } : l.text.value), t: 0 }];
        if (docs.length > 1 && l.stretch < 0) {
          // played backwards: between two keys the one earlier in layer time shows, so each document starts at
          // the key after it in composition time (the last key's from a frame before the first)
          const back = [...docs].reverse();
          docs = back.map((d, j) => ({ s: d.s, t: j === 0 ? back[0].t - 1 : back[j - 1].t }));
        }
        Object.assign(json, {
          ty: 5,
          t: {
            d: { k: docs },
            p: {},
            m: { g: 1, a: { a: 0, k: [0, 0], ix: 2 } },
            a: (l.textAnimators ?? []).flatMap((a) => this.textAnimator(a, l, comp)),
          },
        });
        const fonts = docs.map((d) => d.s.f as string);
        if (fonts.some((f) => !this.options.glyphs?.has(f)))
          this.note(
            comp,
            l,
            'text-glyphs',
            "written with its font by name, without glyph outlines (chars): lottie-web's canvas renderer cannot draw it (its SVG renderer, skottie and ThorVG can, where the font is installed)",
          );
        if (l.text.expression && edit === undefined)
          this.note(comp, l, 'expression', `Source Text expression not written: ${l.text.expression}`);
        return;
      }
      case 'shape':
        Object.assign(json, { ty: 4, shapes: this.shapes(l.shapes ?? [], l, comp, 0) });
        return;
      case 'null':
        return;
      case 'adjustment':
        this.note(comp, l, 'adjustment', 'adjustment layer written as a null (its effects are not written)');
        return;
      case 'camera': {
        if (!this.options.cameras || !l.camera) {
          this.note(comp, l, 'camera', 'camera written as a null (cameras: true writes it as a camera)');
          return;
        }
        // bodymovin's camera: zoom as `pe`, the point of interest as the anchor of a two-node camera; no scale
        // or opacity
        const ks = json.ks as Json;
        delete ks.s;
        delete ks.o;
        if (!l.camera.twoNode) delete ks.a;
        Object.assign(json, { ty: 13, ddd: 1, pe: { ...this.num(l.camera.zoom, l, comp, { scalar: true }), ix: 1 } });
        return;
      }
      case 'light':
        this.note(comp, l, 'light', 'light written as a null (Lottie has no lights)');
        return;
    }
  }

  private image(l: Layer, comp: Composition, f: Footage, json: Json): void {
    const img = this.options.images.get(f.id);
    if (!img) {
      const why =
        f.kind === 'placeholder' ? 'a placeholder' : !f.still ? 'a video (Lottie has no video layers)' : 'not found';
      this.note(comp, l, 'missing-footage', `footage "${f.name}" is ${why}: written as an empty layer`);
      return;
    }
    const id = `image_${f.id}`;
    if (!this.assets.has(id))
      this.assets.set(
        id,
        img.embedded !== undefined
          ? { id, w: img.width, h: img.height, u: '', p: img.embedded, e: 1 }
          : { id, w: img.width, h: img.height, u: this.options.imageFolder ?? 'images/', p: img.file, e: 0 },
      );
    Object.assign(json, { ty: 2, refId: id });
  }

  /** A mask or shape path; keys without vertices among keys with some are left out and listed. */
  private path(p: Property<BezierPath>, l: Layer, comp: Composition): LottieValue {
    const { path, dropped } = withoutEmptyPathKeys(p);
    if (dropped)
      this.note(
        comp,
        l,
        'path-keys',
        `${p.path}: ${dropped} keys without vertices left out (players cannot blend them)`,
      );
    return otherValue(path, this.base(l), pathJson, true);
  }

  private mask(m: Mask, l: Layer, comp: Composition): Json {
    const feather = m.feather.value;
    if (m.feather.keyframes?.length || feather.some((x) => x !== 0))
      this.note(
        comp,
        l,
        'mask-feather',
        `mask "${m.name}": feather written; skottie draws it as the preview does, lottie-web and ThorVG do not`,
      );
    return {
      inv: m.inverted,
      mode: MASK_MODE[m.mode],
      pt: { ...this.path(m.path, l, comp), ix: 1 },
      o: { ...this.num(m.opacity, l, comp, { scalar: true }), ix: 3 },
      x: { ...this.num(m.expansion, l, comp, { scalar: true }), ix: 4 },
      f: { ...this.num(m.feather, l, comp, { dims: 2 }), ix: 2 },
      nm: m.name,
    };
  }

  private doc(d: TextDocument): Json {
    const glyphs = this.options.glyphs?.get(d.font);
    if (!this.fonts.has(d.font)) {
      // origin 0: a font the player finds by name (with glyphs, lottie-web draws the outlines and loads nothing)
      if (glyphs)
        this.fonts.set(d.font, {
          fName: d.font,
          fFamily: glyphs.family,
          fStyle: glyphs.style,
          ascent: round(glyphs.ascent),
          origin: 0,
        });
      else {
        const { family, style } = fontParts(d.font);
        this.fonts.set(d.font, { fName: d.font, fFamily: family, fStyle: style, ascent: 75, origin: 0 });
      }
    }
    if (glyphs) {
      const used = this.charsUsed.get(d.font) ?? new Set<string>();
      // lottie-web looks characters up one by one; line breaks are not drawn
      for (const ch of d.text) if (ch !== '\r' && ch !== '\n' && ch !== '\u0003') used.add(ch);
      this.charsUsed.set(d.font, used);
    }
    const doc: Json = {
      s: round(d.fontSize),
      f: d.font,
      t: d.text,
      ca: d.allCaps ? 1 : d.smallCaps ? 2 : 0,
      j: JUSTIFY[d.justification],
      tr: round(d.tracking),
      lh: round(d.leading ?? d.fontSize * 1.2),
      ls: round(d.baselineShift),
    };
    if (d.fillColor) doc.fc = d.fillColor.slice(0, 3).map((x) => round(x));
    if (d.strokeColor) {
      doc.sc = d.strokeColor.slice(0, 3).map((x) => round(x));
      doc.sw = round(d.strokeWidth);
      doc.of = d.strokeOverFill;
    }
    if (d.box) {
      doc.sz = d.box.size.map((x) => round(x));
      doc.ps = d.box.position.map((x) => round(x));
    }
    return doc;
  }

  /**
   * A text animator as Lottie's `t.a[]` entry: its properties (`a`) and one selector (`s`; Lottie has one per
   * animator, so the first enabled one is written and the others listed). A switched-off animator changes nothing and
   * is left out; one without a selector selects every character fully, as in After Effects.
   */
  private textAnimator(a: TextAnimator, l: Layer, comp: Composition): Json[] {
    if (!a.enabled) return [];
    const where = `animator "${a.name}"`;
    const [first, ...rest] = a.selectors.filter((s) => s.enabled);
    if (rest.length)
      this.note(comp, l, 'text-animator', `${where}: only its first selector is written (Lottie has one per animator)`);
    if (a.unsupported.length)
      this.note(comp, l, 'text-animator', `${where}: ${a.unsupported.join(', ')} not written (no Lottie field)`);
    const s = first ? this.textSelector(first, where, l, comp) : { t: 0, a: { a: 0, k: 100 }, b: 1, r: 1, sh: 1 };
    if (!s) return [];
    const num = (p: NumProperty, opts: { scalar?: boolean; dims?: number }) => this.num(p, l, comp, opts);
    const {
      anchor,
      position,
      scale,
      skew,
      skewAxis,
      rotation,
      opacity,
      fillColor,
      strokeColor,
      strokeWidth,
      tracking,
    } = a.properties;
    const props: Json = {};
    if (anchor) props.a = num(anchor, { dims: 3 });
    if (position) props.p = num(position, { dims: 3 });
    if (scale) props.s = num(scale, { dims: 3 });
    if (skew) props.sk = num(skew, { scalar: true });
    if (skewAxis) props.sa = num(skewAxis, { scalar: true });
    if (rotation) props.r = num(rotation, { scalar: true });
    if (opacity) props.o = num(opacity, { scalar: true });
    if (fillColor) props.fc = num(fillColor, { dims: 4 });
    if (strokeColor) props.sc = num(strokeColor, { dims: 4 });
    if (strokeWidth) props.sw = num(strokeWidth, { scalar: true });
    if (tracking) props.t = num(tracking, { scalar: true });
    return [{ nm: a.name, s, a: props }];
  }

  /** A range selector (`t: 0`) or an expression selector (`t: 1`, its text for lottie-web); wiggly ones have no field. */
  private textSelector(sel: TextSelector, where: string, l: Layer, comp: Composition): Json | undefined {
    const num = (p: NumProperty) => this.num(p, l, comp, { scalar: true });
    switch (sel.kind) {
      case 'range':
        if (sel.mode !== 'add')
          this.note(
            comp,
            l,
            'text-animator',
            `${where}: selector mode ${sel.mode} written as add (Lottie has no mode)`,
          );
        if (sel.randomize)
          this.note(comp, l, 'text-animator', `${where}: randomized order (players draw their own, unseeded)`);
        return {
          t: 0,
          xe: num(sel.easeHigh),
          ne: num(sel.easeLow),
          a: num(sel.amount),
          b: BASED_ON[sel.basedOn],
          rn: sel.randomize ? 1 : 0,
          sh: SELECTOR_SHAPE[sel.shape],
          s: num(sel.start),
          e: num(sel.end),
          o: num(sel.offset),
          r: sel.units === 'percent' ? 1 : 2,
          sm: num(sel.smoothness),
        };
      case 'expression': {
        const kept = keptExpression(sel.amount.expression ?? `${sel.amount.value[0] ?? 100}`);
        this.note(
          comp,
          l,
          'text-animator',
          `${where}: expression selector written as text (lottie-web runs it; skottie and ThorVG select nothing)`,
        );
        return { t: 1, b: BASED_ON[sel.basedOn], ...numValue(sel.amount, this.base(l), { dims: 3 }), x: kept.text };
      }
      case 'wiggly':
        this.note(
          comp,
          l,
          'text-animator',
          `${where}: wiggly selector not written (Lottie has none): animator left out`,
        );
        return undefined;
    }
  }

  private shapeTransform(tr: ShapeTransform, l: Layer, comp: Composition): Json {
    return {
      ty: 'tr',
      p: { ...this.num(tr.position, l, comp, { dims: 2 }), ix: 2 },
      a: { ...this.num(tr.anchor, l, comp, { dims: 2 }), ix: 1 },
      s: { ...this.num(tr.scale, l, comp, { dims: 2 }), ix: 3 },
      r: { ...this.num(tr.rotation, l, comp, { scalar: true }), ix: 6 },
      o: { ...this.num(tr.opacity, l, comp, { scalar: true }), ix: 7 },
      sk: { ...this.num(tr.skew, l, comp, { scalar: true }), ix: 4 },
      sa: { ...this.num(tr.skewAxis, l, comp, { scalar: true }), ix: 5 },
      nm: 'Transform',
    };
  }

  private dashes(list: Dash[], l: Layer, comp: Composition): Json[] {
    const n = { dash: 'd', gap: 'g', offset: 'o' } as const;
    return list.map((d, k) => ({
      n: n[d.kind],
      nm: d.kind === 'offset' ? 'offset' : `${d.kind} ${k + 1}`,
      v: { ...this.num(d.length, l, comp, { scalar: true }), ix: k + 1 },
    }));
  }

  /**
   * A path operator as bodymovin writes it: pucker & bloat `pb`, round corners `rd`, zig zag `zz`, offset `op`, twist
   * `tw` (angle `a`, centre `c`: lottie-docs' schema; bodymovin's exporter writes the same).
   */
  private modifier(item: ShapeModifier, l: Layer, comp: Composition): Json {
    const num = (p: NumProperty, ix: number) => ({ ...this.num(p, l, comp, { scalar: true }), ix });
    switch (item.op) {
      case 'pucker-bloat':
        return { ty: 'pb', a: num(item.amount, 1) };
      case 'round-corners':
        return { ty: 'rd', r: num(item.amount, 1) };
      case 'zig-zag':
        return {
          ty: 'zz',
          s: num(item.amount, 1),
          r: item.ridges ? num(item.ridges, 2) : { a: 0, k: 5, ix: 2 },
          pt: { a: 0, k: item.smooth ? 2 : 1, ix: 3 },
        };
      case 'offset':
        return {
          ty: 'op',
          a: num(item.amount, 1),
          lj: JOIN[item.join ?? 'miter'],
          ml: item.miterLimit ? num(item.miterLimit, 3) : { a: 0, k: 4, ix: 3 },
        };
      case 'twist':
        return {
          ty: 'tw',
          a: num(item.amount, 1),
          c: item.center ? { ...this.num(item.center, l, comp, { dims: 2 }), ix: 2 } : { a: 0, k: [0, 0], ix: 2 },
        };
    }
  }

  /** Shape items in After Effects' order (first on top), as Lottie keeps them. */
  private shapes(items: ShapeItem[], l: Layer, comp: Composition, depth: number): Json[] {
    const out: Json[] = [];
    const num = (p: NumProperty, opts: { scalar?: boolean; dims?: number } = {}) => this.num(p, l, comp, opts);
    for (const [k, item] of items.entries()) {
      // switched-off items draw nothing and are left out, as bodymovin leaves them out
      if (!item.enabled) continue;
      const common = { nm: item.name, mn: item.matchName, hd: false };
      switch (item.kind) {
        case 'group': {
          if (depth > 50) break;
          const it = this.shapes(item.items, l, comp, depth + 1);
          it.push(this.shapeTransform(item.transform, l, comp));
          const bm = BLEND[item.blendMode] ?? 0;
          out.push({ ty: 'gr', it, np: item.items.length, cix: 2, bm, ix: k + 1, ...common });
          break;
        }
        case 'rect':
          out.push({
            ty: 'rc',
            d: item.reversed ? 3 : 1,
            s: { ...num(item.size, { dims: 2 }), ix: 2 },
            p: { ...num(item.position, { dims: 2 }), ix: 3 },
            r: { ...num(item.roundness, { scalar: true }), ix: 4 },
            ...common,
          });
          break;
        case 'ellipse':
          out.push({
            ty: 'el',
            d: item.reversed ? 3 : 1,
            s: { ...num(item.size, { dims: 2 }), ix: 2 },
            p: { ...num(item.position, { dims: 2 }), ix: 3 },
            ...common,
          });
          break;
        case 'star': {
          const star: Json = {
            ty: 'sr',
            sy: item.starType === 'star' ? 1 : 2,
            d: item.reversed ? 3 : 1,
            pt: { ...num(item.points, { scalar: true }), ix: 3 },
            p: { ...num(item.position, { dims: 2 }), ix: 4 },
            r: { ...num(item.rotation, { scalar: true }), ix: 5 },
            or: { ...num(item.outerRadius, { scalar: true }), ix: 7 },
            os: { ...num(item.outerRoundness, { scalar: true }), ix: 9 },
            ...common,
          };
          if (item.starType === 'star') {
            star.ir = { ...num(item.innerRadius, { scalar: true }), ix: 6 };
            star.is = { ...num(item.innerRoundness, { scalar: true }), ix: 8 };
          }
          out.push(star);
          break;
        }
        case 'path':
          out.push({
            ty: 'sh',
            ind: k,
            ix: k + 1,
            ks: { ...this.path(item.path, l, comp), ix: 2 },
            d: item.reversed ? 3 : 1,
            ...common,
          });
          break;
        case 'fill':
          if (item.above)
            this.note(comp, l, 'shape-composite', `"${item.name}": composite above previous is written in list order`);
          out.push({
            ty: 'fl',
            c: { ...num(item.color, { dims: 4 }), ix: 4 },
            o: { ...num(item.opacity, { scalar: true }), ix: 5 },
            r: item.rule === 'evenodd' ? 2 : 1,
            bm: BLEND[item.blendMode] ?? 0,
            ...common,
          });
          break;
        case 'stroke':
          out.push({
            ty: 'st',
            c: { ...num(item.color, { dims: 4 }), ix: 3 },
            o: { ...num(item.opacity, { scalar: true }), ix: 4 },
            w: { ...num(item.width, { scalar: true }), ix: 5 },
            lc: CAP[item.cap],
            lj: JOIN[item.join],
            ml: round(item.miterLimit.value[0] ?? 4),
            bm: BLEND[item.blendMode] ?? 0,
            ...(item.dashes.length ? { d: this.dashes(item.dashes, l, comp) } : {}),
            ...common,
          });
          break;
        case 'gradient-fill':
        case 'gradient-stroke': {
          const g: Json = {
            ty: item.kind === 'gradient-fill' ? 'gf' : 'gs',
            o: { ...num(item.opacity, { scalar: true }), ix: 9 },
            s: { ...num(item.start, { dims: 2 }), ix: 5 },
            e: { ...num(item.end, { dims: 2 }), ix: 6 },
            t: item.gradientType === 'linear' ? 1 : 2,
            g: {
              p: Math.max(0, item.stops.value.colors.length * 2 - 1),
              k: { ...otherValue(item.stops, this.base(l), stopsJson), ix: 8 },
            },
            bm: BLEND[item.blendMode] ?? 0,
            ...common,
          };
          if (item.gradientType === 'radial') {
            g.h = { ...num(item.highlightLength, { scalar: true }), ix: 7 };
            g.a = { ...num(item.highlightAngle, { scalar: true }), ix: 8 };
          }
          if (item.kind === 'gradient-fill') g.r = item.rule === 'evenodd' ? 2 : 1;
          else
            Object.assign(g, {
              w: { ...num(item.width, { scalar: true }), ix: 10 },
              lc: CAP[item.cap],
              lj: JOIN[item.join],
              ml: round(item.miterLimit.value[0] ?? 4),
              ...(item.dashes.length ? { d: this.dashes(item.dashes, l, comp) } : {}),
            });
          out.push(g);
          break;
        }
        case 'trim':
          out.push({
            ty: 'tm',
            s: { ...num(item.start, { scalar: true }), ix: 1 },
            e: { ...num(item.end, { scalar: true }), ix: 2 },
            o: { ...num(item.offset, { scalar: true }), ix: 3 },
            // Lottie keeps After Effects' numbering: 1 "simultaneously" (each path on its own), 2 one after another
            m: item.individually ? 1 : 2,
            ix: k + 1,
            ...common,
          });
          break;
        case 'modifier':
          out.push({ ...this.modifier(item, l, comp), ix: k + 1, ...common });
          // ThorVG logs "Twist(tw) is not supported yet"; lottie-web and skottie skip it
          if (item.op === 'twist')
            this.note(comp, l, 'shape-operator', `twist "${item.name}" written; no common Lottie player draws it`);
          break;
        case 'merge':
          // Lottie keeps After Effects' numbering (skottie draws it; lottie-web joins the paths as they are)
          out.push({ ty: 'mm', mm: MERGE_MODES.indexOf(item.mode), ix: k + 1, ...common });
          if (item.mode !== 'merge')
            this.note(comp, l, 'shape-operator', `merge paths "${item.name}" written; lottie-web does not draw it`);
          break;
        case 'repeater': {
          const s = (p: NumProperty, ix: number) => ({ ...num(p, { scalar: true }), ix });
          const d = (p: NumProperty, ix: number) => ({ ...num(p, { dims: 2 }), ix });
          // Lottie's repeater is After Effects' (m: its composite, 1 below, 2 above)
          out.push({
            ty: 'rp',
            c: s(item.copies, 1),
            o: s(item.offset, 2),
            m: item.above ? 2 : 1,
            tr: {
              ty: 'tr',
              a: d(item.anchor, 1),
              p: d(item.position, 2),
              s: d(item.scale, 3),
              r: s(item.rotation, 4),
              so: s(item.startOpacity, 5),
              eo: s(item.endOpacity, 6),
              nm: 'Transform',
            },
            ix: k + 1,
            ...common,
          });
          break;
        }
        case 'unsupported':
          this.note(
            comp,
            l,
            'shape-operator',
            `${item.matchName} ("${item.name}") is not written (its parameters are not read)`,
          );
          break;
      }
    }
    return out;
  }
}

/** The Lottie animation of composition `compId` of a decoded project. */
export function writeLottie(project: SceneProject, compId: number, options: WriteOptions): Written {
  const root = project.compositions.find((c) => c.id === compId);
  if (!root) throw new Error(`no composition with id ${compId}`);
  return new Writer(project, root, options).write();
}
