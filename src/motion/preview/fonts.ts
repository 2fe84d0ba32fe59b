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
/** fontconfig's pattern syntax escapes `-`, `:`, `,`, `=` and `\\`. */
const esc = (s: string) => s.replace(/[\\:,=-]/g, (c) => `\\${c}`);

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
 * Open or common faces with the same advance widths as a missing face (Liberation was drawn to Arial's, Times New
 * Roman's and Courier New's metrics; Arial to Helvetica's), so that box text breaks its lines where After Effects did.
 * By the family at the start of the PostScript name; each style's PostScript names, tried in order.
 */
const METRIC_TWINS: [RegExp, string[][]][] = [
  [
    /^(helvetica(?!neue|rounded|inserat|compressed|condensed|narrow)|arial(?!narrow|black|rounded|unicode))/i,
    [
      ['LiberationSans', 'ArialMT', 'Helvetica'],
      ['LiberationSans-Bold', 'Arial-BoldMT', 'Helvetica-Bold'],
      ['LiberationSans-Italic', 'Arial-ItalicMT', 'Helvetica-Oblique'],
      ['LiberationSans-BoldItalic', 'Arial-BoldItalicMT', 'Helvetica-BoldOblique'],
    ],
  ],
  [
    /^(times|timesnewroman)/i,
    [
      ['LiberationSerif', 'TimesNewRomanPSMT', 'Times-Roman'],
      ['LiberationSerif-Bold', 'TimesNewRomanPS-BoldMT', 'Times-Bold'],
      ['LiberationSerif-Italic', 'TimesNewRomanPS-ItalicMT', 'Times-Italic'],
      ['LiberationSerif-BoldItalic', 'TimesNewRomanPS-BoldItalicMT', 'Times-BoldItalic'],
    ],
  ],
  [
    /^courier/i,
    [
      ['LiberationMono', 'CourierNewPSMT', 'Courier'],
      ['LiberationMono-Bold', 'CourierNewPS-BoldMT', 'Courier-Bold'],
      ['LiberationMono-Italic', 'CourierNewPS-ItalicMT', 'Courier-Oblique'],
      ['LiberationMono-BoldItalic', 'CourierNewPS-BoldItalicMT', 'Courier-BoldOblique'],
    ],
  ],
];

/** The PostScript names of a metric-compatible face for `postscript`, best first (none: no twin known). */
export function metricTwins(postscript: string): string[] {
  const twins = METRIC_TWINS.find(([family]) => family.test(postscript))?.[1];
  if (!twins) return [];
  const suffix = postscript.includes('-') ? postscript.slice(postscript.indexOf('-') + 1) : '';
  const bold = /bold|black|heavy/i.test(suffix) ? 1 : 0;
  const italic = /italic|oblique/i.test(suffix) ? 2 : 0;
  return twins[bold + italic].filter((ps) => ps.toLowerCase() !== postscript.toLowerCase());
}

/** A face installed under exactly this PostScript name: fontconfig's, else the system's font folders'. */
async function installed(
  postscript: string,
  signal?: AbortSignal,
): Promise<{ file: string; family: string } | undefined> {
  const exact = await fcMatch(`:postscriptname=${esc(postscript)}`, signal);
  if (exact && exact.postscript.toLowerCase() === postscript.toLowerCase()) return exact;
  return (await systemFonts()).get(postscript.toLowerCase());
}

/**
 * Finds a font by PostScript name: the exact face through fontconfig (`fc-match`) or in the system's font folders
 * (font-folders.ts), else a metric-compatible face installed (METRIC_TWINS: Liberation Sans for Helvetica and Arial,
 * Liberation Serif for Times, Liberation Mono for Courier), else fontconfig's closest face of the family named before
 * the dash with the style the suffix names, else nothing (the page draws the browser's sans-serif). A name from a
 * project reaches fontconfig escaped (`esc`), as data, never through a shell.
 */
export async function findFont(postscript: string, signal?: AbortSignal): Promise<FoundFont> {
  const exact = await installed(postscript, signal);
  if (exact) return { requested: postscript, file: exact.file, family: exact.family, exact: true };
  for (const twin of metricTwins(postscript)) {
    const found = await installed(twin, signal);
    if (found) return { requested: postscript, file: found.file, family: found.family, exact: false };
  }
  const family = postscript.split('-')[0].replace(/(MT|PS|Std|Pro)$/, '');
  const near = await fcMatch(`${esc(family)}${styleOf(postscript)}`, signal);
  if (near) return { requested: postscript, file: near.file, family: near.family, exact: false };
  return { requested: postscript, family: 'sans-serif', exact: false };
}
