import path from 'node:path';
import { runFile } from '../../tools/process.js';
import { systemFonts } from './font-folders.js';

/** A font a text layer asks for, as found on this machine. */
export interface FoundFont {
  /** The PostScript name the project asks for. */
  requested: string;
  /** The font file to load with @font-face, or none (the page's own sans-serif). */
  file?: string;
  /** The family of what is drawn. */
  family: string;
  /** True when the file is the font asked for (its PostScript name matches). */
  exact: boolean;
}

const FC_FORMAT = '%{file}\\n%{family[0]}\\n%{postscriptname}\\n';
const FONT_EXTENSIONS = new Set(['.ttf', '.otf', '.ttc', '.woff', '.woff2']);

function fcMatch(
  pattern: string,
  signal?: AbortSignal,
): Promise<{ file: string; family: string; postscript: string } | undefined> {
  return runFile('fc-match', ['-f', FC_FORMAT, pattern], { timeoutMs: 10_000, signal }).then(
    ({ stdout }) => {
      const [file, family, postscript] = stdout.split('\n');
      return file && FONT_EXTENSIONS.has(path.extname(file).toLowerCase()) ? { file, family, postscript } : undefined;
    },
    () => undefined,
  );
}

/** Style words of a PostScript name's suffix ("Arial-BoldItalicMT" → bold, italic), for a look-alike. */
function styleOf(postscript: string): string {
  const suffix = postscript.includes('-') ? postscript.slice(postscript.indexOf('-') + 1).toLowerCase() : '';
  const parts: string[] = [];
  for (const [word, fc] of [
    ['black', 'weight=black'],
    ['extrabold', 'weight=extrabold'],
    ['semibold', 'weight=semibold'],
    ['bold', 'weight=bold'],
    ['medium', 'weight=medium'],
    ['light', 'weight=light'],
    ['thin', 'weight=thin'],
  ])
    if (suffix.includes(word)) {
      parts.push(fc);
      break;
    }
  if (/italic|oblique/.test(suffix)) parts.push('slant=italic');
  return parts.map((p) => `:${p}`).join('');
}

/**
 * Finds a font by PostScript name: the exact face through fontconfig (`fc-match`) or in the system's font folders
 * (font-folders.ts), else fontconfig's closest face of the family named before the dash with the style the suffix
 * names, else nothing (the page draws the browser's sans-serif). fontconfig's pattern syntax escapes `-`, `:` and `\`; anything
 * else in a name from a project is passed as data, never to a shell.
 */
export async function findFont(postscript: string, signal?: AbortSignal): Promise<FoundFont> {
  const esc = (s: string) => s.replace(/[\\:,=-]/g, (c) => `\\${c}`);
  const exact = await fcMatch(`:postscriptname=${esc(postscript)}`, signal);
  if (exact && exact.postscript.toLowerCase() === postscript.toLowerCase())
    return { requested: postscript, file: exact.file, family: exact.family, exact: true };
  // Without fontconfig (macOS, Windows) or a face it does not know: the system's font folders, by their name tables.
  const installed = (await systemFonts()).get(postscript.toLowerCase());
  if (installed) return { requested: postscript, file: installed.file, family: installed.family, exact: true };
  const family = postscript.split('-')[0].replace(/(MT|PS|Std|Pro)$/, '');
  const near = await fcMatch(`${esc(family)}${styleOf(postscript)}`, signal);
  if (near) return { requested: postscript, file: near.file, family: near.family, exact: false };
  return { requested: postscript, family: 'sans-serif', exact: false };
}
