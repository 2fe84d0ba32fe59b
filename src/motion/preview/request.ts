import type { AppContext } from '../../context.js';
import { InvalidInput, NotFound } from '../../errors.js';
import { resolveProjectFile, type ProjectFile } from '../inspect.js';
import { buildPlan, compositionsShown } from '../plan.js';
import type { InspectedComposition, InspectedProject, PreviewBody } from '../schemas.js';
import { PREVIEW_LIMITS as L } from './limits.js';
import type { PreviewParams } from './contract.js';
import { projectFontUrls } from './font-files.js';

const invalid = (field: string, message: string) =>
  new InvalidInput(`${field}: ${message}`, { field }, 'invalid_request');

/** A composition by its name (the first of that name) or its id as inspect gives it; else 404 naming it. */
function findComposition(project: InspectedProject, ref: string | number): InspectedComposition {
  const comp =
    typeof ref === 'number'
      ? project.compositions.find((c) => c.id === ref)
      : project.compositions.find((c) => c.name === ref);
  if (!comp)
    throw new NotFound(
      `The project has no composition ${typeof ref === 'number' ? `with id ${ref}` : `named ${JSON.stringify(ref)}`}`,
      'composition_not_found',
      { composition: ref },
    );
  return comp;
}

const even = (n: number) => Math.max(2, 2 * Math.floor(n / 2));

/**
 * The output size: the composition's (scaled down to fit the largest side allowed), one side given (the other keeps
 * the aspect), or both (the composition fitted inside). Videos need even sizes (H.264 and VP9 in yuv420p): derived
 * sides are rounded down to even, given ones must be even.
 */
function outputSize(comp: InspectedComposition, body: PreviewBody, video: boolean): { width: number; height: number } {
  const round = (n: number) => (video ? even(n) : Math.max(1, Math.round(n)));
  for (const field of ['width', 'height'] as const) {
    const v = body[field];
    if (video && v !== undefined && v % 2) throw invalid(field, `must be even for a ${body.format} video`);
  }
  const aspect = comp.width / comp.height;
  let width: number;
  let height: number;
  if (body.width !== undefined && body.height !== undefined)
    ({ width, height } = { width: body.width, height: body.height });
  else if (body.width !== undefined) ({ width, height } = { width: body.width, height: round(body.width / aspect) });
  else if (body.height !== undefined) ({ width, height } = { width: round(body.height * aspect), height: body.height });
  else {
    const scale = Math.min(1, L.maxSize / Math.max(comp.width, comp.height));
    ({ width, height } = { width: round(comp.width * scale), height: round(comp.height * scale) });
  }
  if (width > L.maxSize) throw invalid('height', `gives a width of ${width} px, more than ${L.maxSize}`);
  if (height > L.maxSize) throw invalid('width', `gives a height of ${height} px, more than ${L.maxSize}`);
  return { width, height };
}

/** Where a footage file the project shows is found: the rules of the render plan, then a board file or one beside the project. */
async function footageUrls(
  ctx: AppContext,
  project: InspectedProject,
  comp: InspectedComposition,
  planned: { id: number; url: string }[],
  boardId: string,
  projectUrl: string,
): Promise<{ id: number; url: string }[]> {
  const found = new Map(planned.map((f) => [f.id, f.url]));
  const shown = compositionsShown(project, comp);
  const used = new Set(
    project.compositions
      .filter((c) => shown.has(c.id))
      .flatMap((c) => c.layers.flatMap((l) => (l.source?.kind === 'file' ? [l.source.id] : []))),
  );
  const projectDir = projectUrl.split(/[?#]/)[0].split('/').slice(0, -1).join('/');
  for (const f of project.footage) {
    if (f.kind !== 'file' || !f.path || !used.has(f.id) || found.has(f.id)) continue;
    // Paths of the machine that saved the project, Windows or POSIX: the name is what survives a move.
    const name = f.path.split(/[\\/]/).pop();
    if (!name) continue;
    for (const url of [ctx.media.urlFor(boardId, name), `${projectDir}/${encodeURIComponent(name)}`]) {
      if (
        await ctx.media.resolveUrl(url).then(
          () => true,
          () => false,
        )
      ) {
        found.set(f.id, url);
        break;
      }
    }
  }
  return [...found].map(([id, url]) => ({ id, url }));
}

/**
 * Checks a preview request before any drawing, in the issue's order: the board and project (an unreadable project is
 * inspect's 400), the composition (404), times and sizes (400 naming the field), then the edits exactly as a render
 * checks them. Answers the job's params: everything the drawing needs, by `/media` URL, so it runs on any worker.
 */
export async function checkPreview(
  ctx: AppContext,
  body: PreviewBody,
  timeoutMs: number,
  inspect: (file: ProjectFile) => Promise<InspectedProject>,
): Promise<PreviewParams> {
  const file = await resolveProjectFile(ctx, body);
  const project = await inspect(file);
  const comp = findComposition(project, body.composition);
  const format = body.format ?? 'png';
  const video = format !== 'png';
  const fps = body.fps ?? Math.min(L.maxFps, Math.max(L.minFps, comp.frame_rate));
  if (!video) {
    for (const field of ['start', 'duration'] as const)
      if (body[field] !== undefined) throw invalid(field, 'is for videos (format mp4 or webm); a png takes time');
  } else if (body.time !== undefined) throw invalid('time', 'is for a png; a video takes start and duration');
  const time = body.time ?? 0;
  if (time >= comp.duration)
    throw invalid('time', `must be below the composition's duration of ${comp.duration} s (0 <= time < duration)`);
  const start = body.start ?? 0;
  if (start >= comp.duration) throw invalid('start', `must be below the composition's duration of ${comp.duration} s`);
  if (body.duration !== undefined && start + body.duration > comp.duration + 1e-6)
    throw invalid('duration', `start + duration passes the composition's end at ${comp.duration} s`);
  const size = outputSize(comp, body, video);
  const plan = await buildPlan(
    ctx,
    file,
    project,
    { board_id: body.board_id, composition: comp.name, textEdits: body.textEdits, mediaEdits: body.mediaEdits },
    undefined,
    'skip',
  );
  const footage = await footageUrls(ctx, project, comp, plan.footage, body.board_id, file.url);
  const shown = compositionsShown(project, comp);
  const expressions = project.compositions.some((c) => shown.has(c.id) && c.layers.some((l) => l.expressions.length));
  const wanted = project.compositions.flatMap((c) => (shown.has(c.id) ? c.layers.flatMap((l) => l.fonts ?? []) : []));
  const fonts = await projectFontUrls(ctx, body.board_id, file, new Set(wanted));
  return {
    boardId: body.board_id,
    project: { url: file.url, name: file.name },
    composition: { id: comp.id, name: comp.name },
    format,
    ...size,
    fps,
    ...(video ? { start, ...(body.duration !== undefined ? { duration: body.duration } : {}) } : { time }),
    text: plan.text,
    media: plan.media,
    expressions,
    footage,
    ...(fonts.length ? { fonts } : {}),
    addToBoard: body.add_to_board ?? false,
    timeoutMs,
  };
}
