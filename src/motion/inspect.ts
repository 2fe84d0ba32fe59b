import fsp from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { AppContext } from '../context.js';
import { badRequest } from '../http/errors.js';
import { ProjectFormatError } from './chunks.js';
import { inThread } from './preview/display-list-pool.js';
import { parseProject } from './read.js';
import type { InspectedProject } from './schemas.js';
import { InvalidInput } from '../errors.js';
import { projectApproximations, type CompositionApproximations } from './scene/approximations.js';
import { decodeScene } from './scene/decode.js';

/** Files up to this size parse on the event loop (a few ms each, see bench/motion.bench.ts); bigger ones on a thread. */
const WORKER_THRESHOLD_BYTES = 1024 * 1024;
/** A project bigger than this is refused before reading (the largest real templates are a few hundred MB). */
const MAX_PROJECT_BYTES = 1024 * 1024 * 1024;

const PROJECT_EXTENSIONS = ['.aep', '.aepx'];

export interface ProjectFile {
  path: string;
  /** The /media URL of the project (short form). */
  url: string;
  name: string;
  size: number;
  elementId?: string;
}

/** The project file a request names: a board element, or a /media URL of an .aep/.aepx file. */
export async function resolveProjectFile(
  ctx: AppContext,
  ref: { board_id: string; element_id?: string; url?: string },
): Promise<ProjectFile> {
  ctx.boards.requireBoard(ref.board_id);
  if ((ref.element_id === undefined) === (ref.url === undefined))
    throw badRequest('Give either element_id or url (a /media URL of an .aep/.aepx file)');
  let file: ProjectFile;
  if (ref.element_id !== undefined) {
    const { element, path: p } = await ctx.boards.elementFile(ref.board_id, ref.element_id);
    const stat = await fsp.stat(p);
    file = {
      path: p,
      url: element.url!,
      name: element.name ?? path.basename(p),
      size: stat.size,
      elementId: element.id,
    };
  } else {
    const r = await ctx.media.resolveField(ref.url!, 'url');
    file = { path: r.path, url: ref.url!, name: path.basename(r.path), size: r.size };
  }
  const ext = path.extname(file.path).toLowerCase();
  if (!PROJECT_EXTENSIONS.includes(ext)) {
    throw new InvalidInput(`${file.name} is not a motion-editor project (.aep or .aepx)`, undefined, 'not_a_project');
  }
  if (file.size > MAX_PROJECT_BYTES)
    throw new InvalidInput(
      `${file.name} is ${file.size} bytes, over the ${MAX_PROJECT_BYTES}-byte limit`,
      undefined,
      'invalid_project',
    );
  return file;
}

/** Reads a project without After Effects. A file that is not a readable project is a 400 naming what is wrong. */
export async function inspectFile(file: { path: string; name: string; size: number }): Promise<InspectedProject> {
  try {
    if (file.size <= WORKER_THRESHOLD_BYTES) return parseProject(await fsp.readFile(file.path));
    return await parseInThread(file.path);
  } catch (err) {
    if (err instanceof ProjectFormatError)
      throw new InvalidInput(`${file.name}: ${err.message}`, undefined, 'invalid_project');
    throw err;
  }
}

const FROM_SOURCE = import.meta.url.endsWith('.ts');

/**
 * Starts a worker module given by its URL (`.ts` from source, `.js` when built). The built .js worker runs as is; from
 * source the worker first registers the TypeScript loader the process runs under (workers skip `--import` preloads):
 * the tests' (scripts/ts-hooks.mjs, which names itself in BMS_TS_HOOKS), else tsx (dev).
 */
export function startModuleWorker(url: URL, workerData: unknown): Worker {
  if (!url.pathname.endsWith('.ts')) return new Worker(url, { workerData });
  const hooks = process.env.BMS_TS_HOOKS;
  const loader = hooks ? `import(${JSON.stringify(hooks)})` : `import('tsx/esm/api').then((m) => m.register())`;
  const boot = `${loader}.then(() => import(${JSON.stringify(url.href)}))`;
  return new Worker(boot, { eval: true, workerData });
}

/** A big project read on a motion thread (display-list-pool.ts): started once, not per file. */
const parseInThread = (file: string) =>
  inThread({ kind: 'inspect', file }, new AbortController().signal).catch((err: unknown) => {
    if (err instanceof ProjectFormatError) throw err;
    throw new Error(`project reader failed: ${err instanceof Error ? err.message : String(err)}`);
  });

/** Projects up to this size without expressions are listed on the event loop (a few ms); others in a worker thread. */
const APPROXIMATE_INLINE_BYTES = 256 * 1024;
const APPROXIMATIONS_WORKER_URL = new URL(
  `./scene/approximations-worker${FROM_SOURCE ? '.ts' : '.js'}`,
  import.meta.url,
);

/**
 * What a preview of each composition would list over its whole duration (scene/approximations.ts), without drawing.
 * Expressions need the sandbox, whose time limit is per call: a project with any is listed in a worker thread, as a
 * big one is. A project the scene decoder cannot read lists that for every composition (inspect itself has read it).
 */
export async function approximateFile(
  file: { path: string; size: number },
  project: InspectedProject,
): Promise<CompositionApproximations[]> {
  const expressions = project.compositions.some((c) => c.layers.some((l) => l.expressions.length > 0));
  try {
    if (file.size <= APPROXIMATE_INLINE_BYTES && !expressions)
      return projectApproximations(decodeScene(await fsp.readFile(file.path)));
    return await new Promise((resolve, reject) => {
      const worker = startModuleWorker(APPROXIMATIONS_WORKER_URL, { file: file.path });
      worker.once('message', (m: { list?: CompositionApproximations[]; error?: string }) => {
        if (m.list) resolve(m.list);
        else reject(new Error(m.error));
        void worker.terminate();
      });
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`approximations worker exited with code ${code}`)));
    });
  } catch (err) {
    const detail = `the preview cannot read this project: ${err instanceof Error ? err.message : String(err)}`;
    return project.compositions.map((c) => ({
      composition_id: c.id,
      composition: c.name,
      approximations: [{ feature: 'unreadable', detail }],
    }));
  }
}
