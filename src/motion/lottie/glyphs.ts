import fsp from 'node:fs/promises';
import type { Font, PathCommand } from 'opentype.js';
import type { Approximation } from '../scene/display.js';
import type { BezierPath, SceneProject } from '../scene/model.js';
import { fontAscent } from '../preview/font-folders.js';
import { findFont } from '../preview/fonts.js';

/**
 * Glyph outlines for Lottie's `chars` (players then draw text without the font installed: lottie-web's canvas
 * renderer draws text only so). The font file is the one the preview draws with: the project's own (board or project
 * folder) or the machine's (fontconfig, the font folders, a metric-compatible twin). opentype.js reads it; each
 * character's outline is written at size 100 as bodymovin writes it, y down from the baseline, quadratic curves as
 * cubic ones.
 */

/** A font whose glyphs are written, by the PostScript name the text documents use. */
export interface GlyphFont {
  /** The names lottie-web matches chars by (the font list's fFamily and fStyle): the file's own. */
  family: string;
  style: string;
  /** Ascent in percent of the size (lottie-web puts box text's first baseline there). */
  ascent: number;
  /** A character's advance and outline at size 100; undefined when the file has no glyph for it. */
  char(ch: string): { w: number; paths: BezierPath[] } | undefined;
}

/** At most this many fonts are read for one export (each file is parsed whole). */
const MAX_FONTS = 32;

/** A glyph's outline as closed bezier paths (vertices with relative tangents), from opentype.js's path commands. */
export function glyphPaths(commands: PathCommand[]): BezierPath[] {
  const paths: BezierPath[] = [];
  let path: BezierPath | undefined;
  let at: [number, number] = [0, 0];
  const close = () => {
    if (!path || !path.v.length) return;
    // a contour that ends on its start point: that vertex once, with the last segment's in tangent
    const n = path.v.length - 1;
    if (n > 0 && path.v[n][0] === path.v[0][0] && path.v[n][1] === path.v[0][1]) {
      path.i[0] = path.i[n];
      path.v.pop();
      path.i.pop();
      path.o.pop();
    }
    paths.push(path);
    path = undefined;
  };
  const vertex = (x: number, y: number, inTangent: [number, number] = [0, 0]) => {
    path!.v.push([x, y]);
    path!.i.push(inTangent);
    path!.o.push([0, 0]);
    at = [x, y];
  };
  for (const c of commands) {
    if (c.type === 'M') {
      close();
      path = { closed: true, v: [], i: [], o: [] };
      vertex(c.x, c.y);
      continue;
    }
    if (c.type === 'Z') {
      close();
      continue;
    }
    path ??= { closed: true, v: [at], i: [[0, 0]], o: [[0, 0]] };
    const last = path.o.length - 1;
    if (c.type === 'L') vertex(c.x, c.y);
    else if (c.type === 'C') {
      path.o[last] = [c.x1 - at[0], c.y1 - at[1]];
      vertex(c.x, c.y, [c.x2 - c.x, c.y2 - c.y]);
    } else {
      // a quadratic segment is the cubic whose handles are 2/3 of the way to its control point
      path.o[last] = [((c.x1 - at[0]) * 2) / 3, ((c.y1 - at[1]) * 2) / 3];
      vertex(c.x, c.y, [((c.x1 - c.x) * 2) / 3, ((c.y1 - c.y) * 2) / 3]);
    }
  }
  close();
  return paths;
}

function glyphFont(font: Font, ascent: number | undefined): GlyphFont {
  const scale = 100 / font.unitsPerEm;
  return {
    family: font.getEnglishName('fontFamily') ?? '',
    style: font.getEnglishName('fontSubfamily') ?? 'Regular',
    ascent: (ascent ?? 0.75) * 100,
    char(ch) {
      const glyph = font.charToGlyph(ch);
      if (!glyph || (glyph.index === 0 && ch !== '\u0000')) return undefined;
      return { w: (glyph.advanceWidth ?? 0) * scale, paths: glyphPaths(glyph.getPath(0, 0, 100).commands) };
    },
  };
}

/** Every PostScript name a text document of the project uses (each Source Text key's too). */
function fontsUsed(scene: SceneProject): string[] {
  const names = new Set<string>();
  for (const c of scene.compositions)
    for (const l of c.layers)
      if (l.text) for (const d of [l.text.value, ...(l.text.keyframes ?? []).map((k) => k.value)]) names.add(d.font);
  return [...names].slice(0, MAX_FONTS);
}

/**
 * The glyph fonts of a project's text: the project's own font files first (`own`, PostScript name → file), else the
 * machine's. A face that is not the one asked for is listed (`font`), as the preview lists it; a font found nowhere
 * or not readable (a collection, WOFF2) is listed as `text-glyphs` and its text written without outlines.
 */
export async function loadGlyphFonts(
  scene: SceneProject,
  own: [string, string][],
  cancelled?: () => boolean,
): Promise<{ fonts: Map<string, GlyphFont>; notes: Approximation[] }> {
  // loaded here, on request: nothing else of the motion threads needs the font reader
  const { default: opentype } = await import('opentype.js');
  const ownFiles = new Map(own.map(([ps, file]) => [ps.toLowerCase(), file]));
  const fonts = new Map<string, GlyphFont>();
  const notes: Approximation[] = [];
  for (const ps of fontsUsed(scene)) {
    if (cancelled?.()) throw new Error('cancelled');
    const mine = ownFiles.get(ps.toLowerCase());
    const found = mine ? { file: mine, family: ps, exact: true } : await findFont(ps);
    if (!found.file) {
      notes.push({ feature: 'text-glyphs', detail: `${ps} is not installed: its text is written without outlines` });
      continue;
    }
    try {
      const bytes = await fsp.readFile(found.file);
      const font = opentype.parse(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
      fonts.set(ps, glyphFont(font, await fontAscent(found.file)));
      if (!found.exact)
        notes.push({ feature: 'font', detail: `${ps} is not installed; its outlines are ${found.family}'s` });
    } catch (err) {
      notes.push({
        feature: 'text-glyphs',
        detail: `${ps}: the outlines of ${found.file.split(/[\\/]/).pop()} could not be read (${err instanceof Error ? err.message : String(err)}): its text is written without them`,
      });
    }
  }
  return { fonts, notes };
}
