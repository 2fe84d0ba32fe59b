import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Approximation, DisplayGroup, DisplayList, DisplayNode } from '../scene/display.js';
import { evaluate } from '../scene/evaluate.js';
import { createExpressionEvaluator, type ExpressionEvaluator } from '../scene/expressions.js';
import type { Composition, Footage, Layer, SceneProject } from '../scene/model.js';
import type { PreviewParams } from './contract.js';
import { PREVIEW_LIMITS as L } from './limits.js';

/** What sampling needs (the project's bytes are read by whoever runs it, here or in a worker thread). */
export type SampleInput = Pick<
  PreviewParams,
  'format' | 'fps' | 'time' | 'start' | 'duration' | 'text' | 'expressions'
> & {
  compositionId: number;
  /** Media edits: the footage item (probed on the service side) that replaces each layer's source. */
  media: { layer: number; footage: Footage }[];
};

/** The layer a footage leaf or a text belongs to, for approximations. */
export type LayerRef = Pick<Approximation, 'layer_index' | 'layer'>;

/** Every output frame's display list, deduplicated and written to files; what the lists use. */
export interface Sampled {
  /** Composition time of each output frame. */
  times: number[];
  /** Output frame → index of its display list among the distinct ones. */
  frames: number[];
  /** The distinct lists, `chunk` per file: `files[k]` holds lists k x chunk ... */
  files: string[];
  /** The only list, when every frame shows the same (it goes in the page itself). */
  single?: DisplayList;
  approximations: Approximation[];
  composition: { width: number; height: number; background: [number, number, number] };
  /** The project's footage items and the media edits'. */
  footage: Footage[];
  /** Footage the lists draw: the source times asked of it (videos) and the layers showing it. */
  uses: Record<number, { name: string; path?: string; sourceTimes: number[]; layers: LayerRef[] }>;
  /** PostScript names the texts ask for, with the first layer asking. */
  fonts: Record<string, LayerRef>;
}

/** The output frames' composition times: one at floor(time x fps), or a video's from start. */
function frameTimes(
  input: SampleInput,
  comp: { duration: number; workArea: { start: number; end: number } },
): number[] {
  if (input.format === 'png') return [Math.floor((input.time ?? 0) * input.fps + 1e-9) / input.fps];
  const start = input.start ?? 0;
  const workLength = comp.workArea.end - comp.workArea.start || comp.duration;
  const duration = input.duration ?? Math.min(L.defaultMaxDuration, workLength, comp.duration - start);
  const count = Math.max(1, Math.round(duration * input.fps));
  return Array.from({ length: count }, (_, f) => start + f / input.fps);
}

/** Every node of a display list with the layer group it belongs to. */
function walk(node: DisplayNode, fn: (n: DisplayNode, layer?: DisplayGroup) => void, layer?: DisplayGroup): void {
  fn(node, layer);
  if (node.kind !== 'group') return;
  const here = node.layer_index !== undefined ? node : layer;
  for (const c of node.children) walk(c, fn, here);
  if (node.matte) walk(node.matte.node, fn, here);
}

const layerRef = (g?: DisplayGroup): LayerRef => ({
  ...(g?.layer_index !== undefined ? { layer_index: g.layer_index } : {}),
  ...(g?.layer !== undefined ? { layer: g.layer } : {}),
});

/**
 * The scene with the text and media edits applied, without changing `decoded` (a sampling thread keeps it for the
 * next preview of the same file): the edited layers and their composition are copies.
 */
function edited(decoded: SceneProject, input: SampleInput): { scene: SceneProject; comp: Composition } {
  const original = decoded.compositions.find((c) => c.id === input.compositionId);
  if (!original) throw new Error(`composition ${input.compositionId} is not in the decoded project`);
  const layers = original.layers.map((layer) => {
    const text = input.text.findLast((e) => e.layer === layer.index);
    const media = input.media.findLast((e) => e.layer === layer.index);
    if (!media && !(text && layer.text)) return layer;
    const out: Layer = { ...layer };
    if (text && layer.text) {
      // As a render's script does: the edit replaces every keyframe and switches off the Source Text expression.
      out.text = {
        ...layer.text,
        value: { ...layer.text.value, text: text.text },
        keyframes: undefined,
        expression: undefined,
      };
      out.expressions = layer.expressions.filter((x) => !x.property.endsWith('ADBE Text Document'));
    }
    if (media) {
      out.sourceId = media.footage.id;
      out.type = 'footage';
    }
    return out;
  });
  const comp: Composition = { ...original, layers };
  return {
    comp,
    scene: {
      ...decoded,
      compositions: decoded.compositions.map((c) => (c.id === comp.id ? comp : c)),
      footage: [...decoded.footage, ...input.media.map((e) => e.footage)],
    },
  };
}

/**
 * Applies the text and media edits to a decoded project and samples the display list of every output frame into JSON
 * files in `work` (`L.framesPerChunk` lists each); identical lists are kept once (a still composition is drawn once),
 * known by a hash, so memory holds one chunk of lists at a time however long the preview. Expressions are evaluated
 * by `expressions` (one sandbox per preview); those it cannot evaluate are listed. Synchronous: run on the event loop
 * only for small work (sampling.ts decides), else on a sampling thread.
 */
export function sampleFrames(
  decoded: SceneProject,
  input: SampleInput,
  work: string,
  progress?: (fraction: number) => void,
  cancelled?: () => boolean,
  expressions?: ExpressionEvaluator,
): Sampled {
  const { scene, comp } = edited(decoded, input);
  const times = frameTimes(input, comp);
  const out: Sampled = {
    times,
    frames: [],
    files: [],
    approximations: [],
    composition: { width: comp.width, height: comp.height, background: comp.background },
    footage: scene.footage,
    uses: {},
    fonts: {},
  };
  const byHash = new Map<string, number>();
  const notes = new Map<string, Approximation>();
  const sourceTimes = new Map<number, Set<number>>();
  const seenLayers = new Set<string>();
  let pending: string[] = [];
  let first: DisplayList | undefined;
  const flush = () => {
    const file = path.join(work, `lists-${out.files.length}.json`);
    fs.writeFileSync(file, `[${pending.join(',')}]`);
    out.files.push(file);
    pending = [];
  };
  for (const [f, t] of times.entries()) {
    if (cancelled?.()) throw new Error('cancelled');
    const list = evaluate(scene, comp.id, t, { expressions });
    for (const a of list.approximations) notes.set(`${a.layer_index}|${a.layer}|${a.feature}|${a.detail}`, a);
    const json = JSON.stringify(list);
    const hash = crypto.createHash('sha1').update(JSON.stringify(list.root)).digest('base64');
    let index = byHash.get(hash);
    if (index === undefined) {
      index = byHash.size;
      byHash.set(hash, index);
      first ??= list;
      pending.push(json);
      if (pending.length === L.framesPerChunk) flush();
      walk(list.root, (n, g) => {
        if (n.kind === 'text' && !(n.font in out.fonts)) out.fonts[n.font] = layerRef(g);
        if (n.kind !== 'footage') return;
        const use = (out.uses[n.footage_id] ??= { name: n.name, path: n.path, sourceTimes: [], layers: [] });
        const key = `${n.footage_id}|${g?.layer_index}|${g?.layer}`;
        if (!seenLayers.has(key)) {
          seenLayers.add(key);
          use.layers.push(layerRef(g));
        }
        if (n.source_time !== undefined) {
          let set = sourceTimes.get(n.footage_id);
          if (!set) sourceTimes.set(n.footage_id, (set = new Set()));
          set.add(n.source_time);
        }
      });
    }
    out.frames.push(index);
    if (progress && (f % 30 === 29 || f === times.length - 1)) progress((f + 1) / times.length);
  }
  if (pending.length) flush();
  if (byHash.size === 1) out.single = first;
  for (const [id, set] of sourceTimes) out.uses[id].sourceTimes = [...set];
  out.approximations = [...notes.values()];
  return out;
}

/** Runs `fn` with an expression sandbox of its own (one per preview), freed afterwards. */
export async function withExpressions<T>(fn: (expressions: ExpressionEvaluator) => T): Promise<T> {
  const expressions = await createExpressionEvaluator();
  try {
    return fn(expressions);
  } finally {
    expressions.dispose();
  }
}
