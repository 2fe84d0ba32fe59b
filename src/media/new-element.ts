import path from 'node:path';
import type { AppContext } from '../context.js';
import { BoardOutputs, type CommittedOutput } from '../boards/outputs.js';
import { badRequest } from '../http/errors.js';
import type { JobContext, JobOutcome } from '../jobs/runner.js';
import type { Element } from '../boards/schemas.js';

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

/** A queued media job's params: its request and the file URL of each source element, looked up when it was queued. */
export type WithSources<P> = P & { sources: Record<string, string> };

/** The file URL of each element, for a queued job's params (a render worker has no board to look them up in). */
export const elementSources = (ctx: AppContext, boardId: string, elementIds: string[]): Record<string, string> =>
  Object.fromEntries(elementIds.map((id) => [id, ctx.boards.requireElement(boardId, id).url ?? '']));

/** The sources' URLs, as the job kind's declared `inputs`. */
export const sourceUrls = (p: { sources: Record<string, string> }): string[] =>
  Object.values(p.sources).filter(Boolean);

/**
 * A source element of a media job (convert-video, concat-videos; run now or queued): its file as the runner resolved
 * its URL (on a render worker a copy named by its content hash, so the stem comes from the URL). These jobs take only
 * videos (checked before they run).
 */
export function jobSource(job: JobContext<{ sources: Record<string, string> }>, elementId: string): SourceFile {
  const url = job.params.sources[elementId];
  if (!url) throw badRequest(`Element ${elementId} has no file`);
  const stem = path.posix.parse(decodeURIComponent(url.slice(url.lastIndexOf('/') + 1))).name;
  return { element: { id: elementId, type: 'video' }, path: job.input(url), stem };
}

/** A media job's new file: `write` fills the pending output, which goes back to the runner to commit as an element. */
export async function produceOutput(
  job: JobContext<unknown>,
  boardId: string,
  filename: string,
  write: (tempPath: string) => Promise<void>,
  data?: Record<string, unknown>,
): Promise<JobOutcome> {
  const out = await job.output(boardId, filename);
  await write(out.temp);
  return { output: { file: out, element: { data } } };
}

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
