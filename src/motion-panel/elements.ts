import path from 'node:path';
import type { AppContext } from '../context.js';
import type { Element } from '../boards/schemas.js';
import { badRequest } from '../http/errors.js';
import type { CardVideos } from '../html/card-video.js';
import type { PanelEntry } from './schemas.js';

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown) => (typeof v === 'string' && v ? v : null);

export const downloadUrl = (boardId: string, elementId: string) =>
  `/api/integrations/motion-editor/elements/${encodeURIComponent(elementId)}/download?board_id=${encodeURIComponent(boardId)}`;

/** The panel's import types: files After Effects imports as footage, and html cards through their video. */
const IMPORTABLE = ['image', 'video', 'html'];

/**
 * The board's importable elements, board order. Images and videos carry what their probe found; an html card is
 * rendered to a video (cached per htmlVersion, nothing added to the board), one card at a time.
 */
export async function listPanelEntries(
  ctx: AppContext,
  cardVideos: CardVideos,
  boardId: string,
  signal?: AbortSignal,
): Promise<PanelEntry[]> {
  const out: PanelEntry[] = [];
  for (const el of ctx.boards.listElements(boardId)) {
    if (!IMPORTABLE.includes(el.type) || !el.url) continue;
    try {
      out.push(await panelEntry(cardVideos, el, signal));
    } catch (err) {
      // One card that cannot be rendered (say, Chromium missing) leaves the rest of the list usable.
      if (signal?.aborted || el.type !== 'html') throw err;
      ctx.log.warn(
        { err, element: el.id },
        'html card left out of the motion-editor panel list: its video could not be rendered',
      );
    }
  }
  return out;
}

async function panelEntry(cardVideos: CardVideos, el: Element, signal?: AbortSignal): Promise<PanelEntry> {
  const base = {
    id: el.id,
    name: el.name ?? path.basename(decodeURIComponent(el.url!)),
    download_url: downloadUrl(el.board_id, el.id),
  };
  if (el.type === 'html') {
    const v = await cardVideos.get(el.board_id, el.id, signal);
    return {
      ...base,
      type: 'html',
      url: v.url,
      width: v.width,
      height: v.height,
      duration: v.duration,
      thumbnail_url: v.posterUrl,
    };
  }
  return {
    ...base,
    type: el.type as 'image' | 'video',
    url: el.url!,
    width: num(el.data.width) ?? el.width,
    height: num(el.data.height) ?? el.height,
    duration: el.type === 'video' ? num(el.data.duration) : null,
    thumbnail_url: str(el.data.thumbnail_url),
  };
}

/** The file a download serves and the name it is saved under (a card: its video, named after the card). */
export async function panelFile(
  ctx: AppContext,
  cardVideos: CardVideos,
  boardId: string,
  elementId: string,
  signal?: AbortSignal,
): Promise<{ path: string; filename: string }> {
  const el = ctx.boards.requireElement(boardId, elementId);
  if (!IMPORTABLE.includes(el.type))
    throw badRequest(`Element ${elementId} is ${el.type}; the panel imports images, videos and html cards`);
  if (el.type === 'html') {
    const v = await cardVideos.get(boardId, elementId, signal);
    return { path: v.path, filename: `${path.parse(el.name ?? elementId).name || elementId}.mp4` };
  }
  const { path: file } = await ctx.boards.elementFile(boardId, elementId);
  return { path: file, filename: path.basename(file) };
}
