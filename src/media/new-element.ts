import fsp from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../context.js';
import { commitUnique, tempPathIn } from '../files/atomic.js';
import { kindOfFile } from '../files/media-types.js';
import { sanitizeFilename } from '../files/names.js';
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
 * Writes a new file into the board folder: `write` fills a temp path (carrying the final extension, so ffmpeg and
 * sharp pick the format from it), then the file is committed under a unique name and added to the board.
 * The temp file is removed on any failure, including an abort.
 */
export async function produceElement(
  ctx: AppContext,
  boardId: string,
  filename: string,
  write: (tempPath: string) => Promise<void>,
  data?: Record<string, unknown>,
): Promise<NewMediaResult> {
  const dir = await ctx.media.boardDir(boardId);
  const name = sanitizeFilename(filename, 'media');
  const temp = tempPathIn(dir, name);
  let stored: string;
  try {
    await write(temp);
    stored = await commitUnique(temp, dir, name);
  } catch (err) {
    await fsp.rm(temp, { force: true });
    throw err;
  }
  return addFileElement(ctx, boardId, stored, data);
}

/** Adds a file already in the board folder as an element and shapes the answer. */
export async function addFileElement(ctx: AppContext, boardId: string, stored: string, data?: Record<string, unknown>): Promise<NewMediaResult> {
  const url = ctx.media.urlFor(boardId, stored);
  const el = await ctx.boards.addElement(boardId, { type: kindOfFile(stored), url, name: stored, data });
  return { element: { id: el.id, type: el.type, url: el.url, name: el.name, data: el.data }, filename: stored, url };
}
