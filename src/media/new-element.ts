import path from 'node:path';
import type { AppContext } from '../context.js';
import { BoardOutputs, type CommittedOutput } from '../boards/outputs.js';
import { badRequest } from '../http/errors.js';
import type { JobContext, JobOutcome } from '../jobs/runner.js';
import type { Element } from '../boards/schemas.js';
import type { ProbeCache } from './probe-cache.js';

/** The service context plus what the media operations share (built once in registerMedia). */
export interface MediaContext extends AppContext {
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
  element: Element;
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
}

export const boardIo = (ctx: AppContext): MediaIo<NewMediaResult> => ({
  source: (boardId, elementId) => loadSource(ctx, boardId, elementId),
  produce: (boardId, filename, write, data) => produceElement(ctx, boardId, filename, write, data),
});

/** The media URL of an element's file, for a job kind's `inputs` (an element without one fails in `source`). */
export const elementUrls = (ctx: AppContext, boardId: string, elementIds: string[]): string[] =>
  elementIds.flatMap((id) => ctx.boards.requireElement(boardId, id).url ?? []);

export const jobIo = <P>(ctx: AppContext, job: JobContext<P>): MediaIo<JobOutcome> => ({
  async source(boardId, elementId) {
    const element = ctx.boards.requireElement(boardId, elementId);
    if (!element.url) throw badRequest(`Element ${elementId} has no file`);
    const file = job.input(element.url);
    return { element, path: file, stem: path.parse(file).name };
  },
  async produce(boardId, filename, write, data) {
    const out = await job.output(boardId, filename);
    await write(out.temp);
    return { output: { file: out, element: { data }, result: newMediaResult } };
  },
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
