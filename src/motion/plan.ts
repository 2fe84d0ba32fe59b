import fsp from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../context.js';
import type { ProjectFile } from './inspect.js';
import type {
  ExpressionEdit,
  InspectedComposition,
  InspectedLayer,
  InspectedProject,
  MediaEdit,
  PresetInputs,
  RenderBody,
  TextEdit,
} from './schemas.js';
import { InvalidInput } from '../errors.js';

/**
 * A render request checked against the inspected project: every layer resolved to its index, every file (the
 * project, the board files the edits use, the footage the composition shows) to its `/media` URL. Built before
 * anything is launched; the job runs exactly this (a snapshot in the job's params) wherever it runs: it names no path
 * of the service's machine but the footage paths stored in the project, so a render worker runs it too.
 */
export interface RenderPlan {
  boardId: string;
  project: { name: string; url: string; elementId?: string };
  /** Names the script checks before editing (null: a name After Effects derives, which is not checked). */
  composition: {
    name: string;
    width: number;
    height: number;
    frameRate: number;
    duration: number;
    layerNames: (string | null)[];
  };
  overrides: { width?: number; height?: number; fps?: number };
  startFrame?: number;
  endFrame?: number;
  outputFormat: OutputFormat;
  text: { layer: number; text: string }[];
  media: { layer: number; url: string }[];
  expressions: { layer: number; property: string[]; expression: string }[];
  add: {
    type: 'text' | 'media' | 'solid';
    name: string;
    text?: string;
    url?: string;
    color?: [number, number, number];
    position?: [number, number];
  }[];
  /**
   * The project's footage files the composition shows (through its precomps too) that lie in the media root: `id` the
   * footage item, `path` as the project stores it. Relinked by the script wherever the job's copy is elsewhere.
   */
  footage: { id: number; path: string; url: string }[];
}

export type OutputFormat = 'mp4' | 'webm' | 'mov';

const invalid = (field: string, message: string) => new InvalidInput(`${field}: ${message}`, { field }, 'invalid_edit');

/** Layer types whose source can be replaced (AVLayer.replaceSource). */
const REPLACEABLE: InspectedLayer['type'][] = ['footage', 'solid', 'precomp', 'adjustment'];
const MEDIA_ELEMENTS = ['image', 'video', 'audio'];

function resolveLayer(comp: InspectedComposition, ref: string | number, field: string): InspectedLayer {
  const layer = typeof ref === 'number' ? comp.layers[ref - 1] : comp.layers.find((l) => l.name === ref);
  if (!layer) {
    throw invalid(
      field,
      typeof ref === 'number'
        ? `composition "${comp.name}" has ${comp.layers.length} layers, there is no layer ${ref}`
        : `composition "${comp.name}" has no layer named ${JSON.stringify(ref)}`,
    );
  }
  return layer;
}

/**
 * Preset inputs with the request's explicit edits on top: an explicit edit list replaces the preset's edits of the
 * same kind on the same layer (added layers: of the same name); the preset's other edits stay.
 */
function mergeInputs(comp: InspectedComposition, preset: PresetInputs, explicit: PresetInputs): Required<PresetInputs> {
  const key = (ref: string | number) =>
    comp.layers.find((l, i) => (typeof ref === 'number' ? i + 1 === ref : l.name === ref))?.index ?? `?${ref}`;
  function merge<T extends { layer: string | number }>(base: T[] = [], over: T[] | undefined): T[] {
    if (!over) return base;
    const taken = new Set(over.map((e) => key(e.layer)));
    return [...base.filter((e) => !taken.has(key(e.layer))), ...over];
  }
  const names = new Set((explicit.addLayers ?? []).map((a) => a.name));
  return {
    textEdits: merge<TextEdit>(preset.textEdits, explicit.textEdits),
    mediaEdits: merge<MediaEdit>(preset.mediaEdits, explicit.mediaEdits),
    expressionEdits: merge<ExpressionEdit>(preset.expressionEdits, explicit.expressionEdits),
    addLayers: [
      ...(preset.addLayers ?? []).filter((a) => !explicit.addLayers || !names.has(a.name)),
      ...(explicit.addLayers ?? []),
    ],
  };
}

function pickComposition(project: InspectedProject, name: string | undefined): InspectedComposition {
  if (name === undefined) {
    if (project.compositions.length === 1) return project.compositions[0];
    throw invalid(
      'composition',
      `required: the project has ${project.compositions.length} compositions (${project.compositions.map((c) => JSON.stringify(c.name)).join(', ')})`,
    );
  }
  const comp = project.compositions.find((c) => c.name === name);
  if (!comp) throw invalid('composition', `the project has no composition named ${JSON.stringify(name)}`);
  return comp;
}

/** A board file for a media edit or a media layer, as the `/media` URL of a file that exists (400 naming the field). */
async function boardMedia(
  ctx: AppContext,
  boardId: string,
  ref: { element_id?: string; url?: string },
  field: string,
): Promise<string> {
  if ((ref.element_id === undefined) === (ref.url === undefined)) throw invalid(field, 'give either element_id or url');
  if (ref.url !== undefined) {
    try {
      await ctx.media.resolveUrl(ref.url);
      return ref.url;
    } catch (err) {
      throw invalid(`${field}.url`, err instanceof Error ? err.message : String(err));
    }
  }
  let found: { element: { type: string; url: string | null }; path: string };
  try {
    found = await ctx.boards.elementFile(boardId, ref.element_id!);
  } catch (err) {
    throw invalid(`${field}.element_id`, err instanceof Error ? err.message : String(err));
  }
  if (!MEDIA_ELEMENTS.includes(found.element.type))
    throw invalid(
      `${field}.element_id`,
      `element ${ref.element_id} is ${found.element.type}, not an image, video or audio file`,
    );
  return found.element.url!;
}

/** Composition ids reachable from `comp` through precomp layers, `comp` included. */
export function compositionsShown(project: InspectedProject, comp: InspectedComposition): Set<number> {
  const seen = new Set<number>([comp.id]);
  const todo = [comp];
  for (let c = todo.pop(); c; c = todo.pop()) {
    for (const l of c.layers) {
      if (l.source?.kind !== 'composition' || seen.has(l.source.id)) continue;
      seen.add(l.source.id);
      const next = project.compositions.find((x) => x.id === l.source!.id);
      if (next) todo.push(next);
    }
  }
  return seen;
}

/**
 * The `/media` URL of a footage file the project stores by its path on this machine: inside the render's board folder
 * or the media root, checked by resolving the URL back to the same file (a link leading out is not inside). Undefined
 * for a path that does not exist here (a path of the author's machine: After Effects shows it missing, as it would
 * on the service) and for an image sequence's folder in the media root (read in place, not sent to workers); a file
 * or folder that exists outside the media root is refused, as every path outside it is.
 */
async function footageUrl(
  ctx: AppContext,
  boardId: string,
  stored: string,
  field: string,
): Promise<string | undefined> {
  const real = await fsp.realpath(stored).catch(() => undefined);
  if (!real) return undefined;
  const within = async (base: string) => {
    const rel = path.relative(await fsp.realpath(base).catch(() => base), real);
    return rel && rel.split(path.sep)[0] !== '..' && !path.isAbsolute(rel) ? rel : undefined;
  };
  const inBoard = await within(await ctx.media.boardDir(boardId));
  const inRoot = inBoard === undefined ? await within(ctx.media.root) : undefined;
  const url =
    inBoard !== undefined
      ? ctx.media.urlFor(boardId, inBoard)
      : inRoot !== undefined
        ? ctx.media.rootUrl(inRoot)
        : undefined;
  if (url && (await fsp.stat(real)).isDirectory()) return undefined;
  const resolved = url ? await ctx.media.resolveUrl(url).catch(() => undefined) : undefined;
  if (!url || resolved?.path !== real)
    throw new InvalidInput(
      `${field}: the project's footage ${stored} is not a file of the media root; only footage in the media root is rendered`,
      { field, footage: stored },
      'footage_outside_media_root',
    );
  return url;
}

function hexColor(hex: string): [number, number, number] {
  return [1, 3, 5].map((i) => Math.round((parseInt(hex.slice(i, i + 2), 16) / 255) * 10_000) / 10_000) as [
    number,
    number,
    number,
  ];
}

/** Checks every edit against the inspected project and resolves it; throws 400 naming the first problem. */
export async function buildPlan(
  ctx: AppContext,
  file: ProjectFile,
  project: InspectedProject,
  body: RenderBody,
  preset?: { composition: string; inputs: PresetInputs },
  /** `skip`: footage outside the media root is left out of `footage` (a preview draws it missing) instead of refused. */
  outside: 'refuse' | 'skip' = 'refuse',
): Promise<RenderPlan> {
  const comp = pickComposition(project, body.composition ?? preset?.composition);
  const inputs = mergeInputs(comp, preset && preset.composition === comp.name ? preset.inputs : {}, body);
  const plan: RenderPlan = {
    boardId: body.board_id,
    project: {
      name: file.name,
      url: file.url,
      ...(file.elementId ? { elementId: file.elementId } : {}),
    },
    composition: {
      name: comp.name,
      width: comp.width,
      height: comp.height,
      frameRate: comp.frame_rate,
      duration: comp.duration,
      layerNames: comp.layers.map((l) => (l.named ? l.name : null)),
    },
    overrides: { width: body.width, height: body.height, fps: body.fps },
    startFrame: body.start_frame,
    endFrame: body.end_frame,
    outputFormat: !body.output_format || body.output_format === 'auto' ? 'mp4' : body.output_format,
    text: [],
    media: [],
    expressions: [],
    add: [],
    footage: [],
  };
  const fps = body.fps ?? comp.frame_rate;
  const lastFrame = Math.max(0, Math.round(comp.duration * fps) - 1); // as renderFrames counts them
  if (body.start_frame !== undefined && body.start_frame > lastFrame)
    throw invalid('start_frame', `the composition's last frame is ${lastFrame}`);
  if (body.end_frame !== undefined && body.end_frame < (body.start_frame ?? 0))
    throw invalid('end_frame', 'is before start_frame');
  inputs.textEdits.forEach((e, i) => {
    const layer = resolveLayer(comp, e.layer, `textEdits[${i}].layer`);
    if (layer.type !== 'text')
      throw invalid(
        `textEdits[${i}].layer`,
        `layer ${layer.index} "${layer.name}" is a ${layer.type} layer, not a text layer`,
      );
    plan.text.push({ layer: layer.index, text: e.text });
  });
  for (const [i, e] of inputs.mediaEdits.entries()) {
    const layer = resolveLayer(comp, e.layer, `mediaEdits[${i}].layer`);
    if (!REPLACEABLE.includes(layer.type))
      throw invalid(
        `mediaEdits[${i}].layer`,
        `layer ${layer.index} "${layer.name}" is a ${layer.type} layer; only footage, solid and precomp layers take new media`,
      );
    plan.media.push({ layer: layer.index, url: await boardMedia(ctx, body.board_id, e, `mediaEdits[${i}]`) });
  }
  inputs.expressionEdits.forEach((e, i) => {
    const layer = resolveLayer(comp, e.layer, `expressionEdits[${i}].layer`);
    const property = e.property.split('>').map((s) => s.trim());
    if (property.some((s) => !s))
      throw invalid(`expressionEdits[${i}].property`, `${JSON.stringify(e.property)} has an empty name between ">"`);
    plan.expressions.push({ layer: layer.index, property, expression: e.expression });
  });
  for (const [i, a] of inputs.addLayers.entries()) {
    const field = `addLayers[${i}]`;
    const entry: RenderPlan['add'][number] = { type: a.type, name: a.name };
    if (a.type === 'text') {
      if (a.text === undefined) throw invalid(`${field}.text`, 'a text layer needs its text');
      entry.text = a.text;
    } else if (a.element_id !== undefined || a.text !== undefined) {
      if (a.type === 'solid') throw invalid(field, 'a solid layer takes a color, not text or element_id');
    }
    if (a.type === 'media') {
      if (a.element_id === undefined) throw invalid(`${field}.element_id`, 'a media layer needs the element to import');
      entry.url = await boardMedia(ctx, body.board_id, { element_id: a.element_id }, field);
    }
    if (a.color) entry.color = hexColor(a.color);
    if (a.position) entry.position = [a.position[0], a.position[1]];
    plan.add.push(entry);
  }
  const shown = compositionsShown(project, comp);
  const used = new Set(
    project.compositions
      .filter((c) => shown.has(c.id))
      .flatMap((c) => c.layers.flatMap((l) => (l.source?.kind === 'file' ? [l.source.id] : []))),
  );
  for (const f of project.footage) {
    if (f.kind !== 'file' || !f.path || !used.has(f.id)) continue;
    const url = await footageUrl(ctx, body.board_id, f.path, 'project').catch((err: unknown) => {
      if (outside === 'skip' && err instanceof InvalidInput) return undefined;
      throw err;
    });
    if (url) plan.footage.push({ id: f.id, path: f.path, url });
  }
  return plan;
}

/** A file name for a copy inside the job folder: its index keeps two files of the same name apart. */
export const jobFileName = (i: number, name: string) => `${String(i + 1).padStart(3, '0')}-${name}`;

/** The file name a `/media` URL ends with. */
export const urlFileName = (url: string) => decodeURIComponent(url.split(/[?#]/)[0].split('/').pop() ?? 'media');
