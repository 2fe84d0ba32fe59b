import fsp from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../context.js';
import { BoardOutputs, type CommittedOutput } from '../boards/outputs.js';
import { badRequest } from '../http/errors.js';
import type { JobContext, JobOutcome } from '../jobs/runner.js';
import type { Element } from '../boards/schemas.js';
import type { ProbeCache } from './probe-cache.js';
import type { Tools } from '../tools/locate.js';

/** The service context plus what the media operations share (built once in registerMedia). */
export interface MediaContext extends AppContext {
  probes: ProbeCache;
}

/** What the ffmpeg work of a media operation needs: the same in the service and on a render worker. */
export interface MediaTools {
  tools: Tools;
  probes: ProbeCache;
}

/** What every media operation answers: the new element, plus `filename`/`url` at the top level for upload-style clients. */
export interface NewMediaResult {
  element: Pick<Element, 'id' | 'type' | 'url' | 'name' | 'data'>;
  filename: string;
  url: string;
}

/** The element behind a request and its file, with the stem new names derive from (`clip` for `clip.mp4`). */
export interface SourceFile {
  element: Pick<Element, 'id' | 'type'>;
  path: string;
  stem: string;
}

export async function loadSource(ctx: AppContext, boardId: string, elementId: string): Promise<SourceFile> {
  const { element, path: file } = await ctx.boards.elementFile(boardId, elementId);
  return { element, path: file, stem: path.parse(file).name };
}

/**
 * Where a media operation reads its sources and puts its new file: straight on the board when it runs in the request
 * (`boardIo`), or through the job runner's seam when it runs as a job (`jobIo`: inputs resolved by the runner, the
 * output handed back for the runner to commit). `T` is what producing answers in each case.
 */
export interface MediaIo<T> {
  source(boardId: string, elementId: string): Promise<SourceFile>;
  produce(
    boardId: string,
    filename: string,
    write: (tempPath: string) => Promise<void>,
    data?: Record<string, unknown>,
  ): Promise<T>;
  /** A folder for work files (a concat list), removed by whoever owns it. */
  scratch(): Promise<string>;
}

export const boardIo = (ctx: AppContext): MediaIo<NewMediaResult> => ({
  source: (boardId, elementId) => loadSource(ctx, boardId, elementId),
  produce: (boardId, filename, write, data) => produceElement(ctx, boardId, filename, write, data),
  async scratch() {
    const dir = path.join(ctx.config.dataDir, 'tmp');
    await fsp.mkdir(dir, { recursive: true });
    return dir;
  },
});

/** A queued media job's params: its request and the file URL of each source element, looked up when it was queued. */
export type WithSources<P> = P & { sources: Record<string, string> };

/** The file URL of each element, for a queued job's params (a render worker has no board to look them up in). */
export const elementSources = (ctx: AppContext, boardId: string, elementIds: string[]): Record<string, string> =>
  Object.fromEntries(elementIds.map((id) => [id, ctx.boards.requireElement(boardId, id).url ?? '']));

/** The sources' URLs, as the job kind's declared `inputs`. */
export const sourceUrls = (p: { sources: Record<string, string> }): string[] =>
  Object.values(p.sources).filter(Boolean);

/**
 * A media job's sources come resolved from the runner and its new file goes back to it: the same on a render worker.
 * Queued media jobs take only videos (checked when they were queued).
 */
export const jobIo = <P extends { sources: Record<string, string> }>(job: JobContext<P>): MediaIo<JobOutcome> => ({
  async source(_boardId, elementId) {
    const url = job.params.sources[elementId];
    if (!url) throw badRequest(`Element ${elementId} has no file`);
    // The name comes from the URL: on a render worker the local copy is named by its content hash.
    const stem = path.posix.parse(decodeURIComponent(url.slice(url.lastIndexOf('/') + 1))).name;
    return { element: { id: elementId, type: 'video' }, path: job.input(url), stem };
  },
  async produce(boardId, filename, write, data) {
    const out = await job.output(boardId, filename);
    await write(out.temp);
    return { output: { file: out, element: { data } } };
  },
  scratch: () => job.scratch(),
});

/**
 * Writes a new file into the board folder through the one recipe (`BoardOutputs.produce`): `write` fills a temp path
 * carrying the final extension (so ffmpeg and sharp pick the format from it), then the file gets a unique name and is
 * added to the board; the temp file is removed on any failure, including an abort.
 */
export async function produceElement(
  ctx: AppContext,
  boardId: string,
  filename: string,
  write: (tempPath: string) => Promise<void>,
  data?: Record<string, unknown>,
): Promise<NewMediaResult> {
  return newMediaResult(await new BoardOutputs(ctx.media, ctx.boards).produce(boardId, filename, write, { data }));
}

/** Shapes a file committed to a board as the media operations' answer. */
export const newMediaResult = ({ element: el, filename, url }: CommittedOutput): NewMediaResult => ({
  element: { id: el.id, type: el.type, url: el.url, name: el.name, data: el.data },
  filename,
  url,
});
