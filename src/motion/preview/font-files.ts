import path from 'node:path';
import type { AppContext } from '../../context.js';
import { scanFontFolders } from './font-folders.js';

/**
 * The font files a preview uses before the machine's: those on the board and in the project's folder (template
 * packages ship their fonts beside the project, often in a `Fonts` folder) whose PostScript name a text layer asks
 * for, board first. Found by the name tables, not the file names; answered as `/media` URLs so that they are the job's
 * declared inputs and a render worker reads them like footage. Symbolic links are not followed (font-folders.ts), and
 * every URL is resolved through the media root again, so nothing outside it is used.
 */
export async function projectFontUrls(
  ctx: AppContext,
  boardId: string,
  project: { path: string; url: string },
  wanted: Iterable<string>,
): Promise<{ postscript: string; url: string }[]> {
  const missing = new Map([...wanted].map((ps) => [ps.toLowerCase(), ps]));
  if (!missing.size) return [];
  const projectDir = project.url.split(/[?#]/)[0].split('/').slice(0, -1).join('/');
  const places: [string, (relative: string) => string][] = [
    [await ctx.media.boardDir(boardId), (r) => ctx.media.urlFor(boardId, r)],
    [path.dirname(project.path), (r) => `${projectDir}/${r.split(path.sep).map(encodeURIComponent).join('/')}`],
  ];
  const found: { postscript: string; url: string }[] = [];
  for (const [dir, urlOf] of places) {
    const faces = await scanFontFolders([dir]);
    for (const [key, face] of faces) {
      const ps = missing.get(key);
      if (!ps) continue;
      const url = urlOf(path.relative(dir, face.file));
      const inside = await ctx.media.resolveUrl(url).then(
        () => true,
        () => false,
      );
      if (!inside) continue;
      found.push({ postscript: ps, url });
      missing.delete(key);
    }
  }
  return found;
}
