import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { fontAscent, fontFaces, scanFontFolders } from '../../src/motion/preview/font-folders.js';
import { projectFontUrls } from '../../src/motion/preview/font-files.js';
import { metricTwins } from '../../src/motion/preview/fonts.js';
import { MediaRoot } from '../../src/files/media-root.js';
import type { AppContext } from '../../src/context.js';
import { tempDir } from '../helpers/fixtures.js';

/**
 * Fonts found without fontconfig (macOS, Windows): the PostScript and family names read from font files' name tables,
 * in a folder tree. Uses the DejaVu files this machine has; skipped saying so where they are absent.
 */
const DEJAVU = '/usr/share/fonts/truetype/dejavu';
const have = fs.existsSync(path.join(DEJAVU, 'DejaVuSans-Bold.ttf'));
if (!have) console.log(`# preview fonts: ${DEJAVU} is absent, the name-table tests are skipped`);

describe('fonts in font folders', { skip: !have }, () => {
  let dir: string;
  before(async () => {
    dir = await tempDir();
    // A nested folder, a collection (two faces in one .ttc), a broken file and a file that is not a font.
    await fsp.mkdir(path.join(dir, 'a', 'b'), { recursive: true });
    await fsp.copyFile(path.join(DEJAVU, 'DejaVuSans-Bold.ttf'), path.join(dir, 'a', 'b', 'bold.ttf'));
    await fsp.writeFile(path.join(dir, 'broken.otf'), Buffer.from('OTTO\u0000\u0005 not really'));
    await fsp.writeFile(path.join(dir, 'notes.txt'), 'fonts');
    await fsp.writeFile(
      path.join(dir, 'pair.ttc'),
      await collection([path.join(DEJAVU, 'DejaVuSerif.ttf'), path.join(DEJAVU, 'DejaVuSansMono.ttf')]),
    );
  });
  after(() => fsp.rm(dir, { recursive: true, force: true }));

  it('reads the PostScript and family names of a font file', async () => {
    assert.deepEqual(await fontFaces(path.join(DEJAVU, 'DejaVuSans-Bold.ttf')), [
      { postscript: 'DejaVuSans-Bold', family: 'DejaVu Sans' },
    ]);
    assert.deepEqual(await fontFaces(path.join(dir, 'broken.otf')), []);
    assert.deepEqual(await fontFaces(path.join(dir, 'missing.ttf')), []);
  });

  it('indexes every face of a folder tree by lower-case PostScript name, collections included', async () => {
    const index = await scanFontFolders([dir, path.join(dir, 'no-such-folder')]);
    assert.deepEqual([...index.keys()].sort(), ['dejavusans-bold', 'dejavusansmono', 'dejavuserif']);
    assert.equal(index.get('dejavusans-bold')?.file, path.join(dir, 'a', 'b', 'bold.ttf'));
    assert.equal(index.get('dejavuserif')?.family, 'DejaVu Serif');
  });
});

describe('metric-compatible fallbacks', () => {
  it('names the face with the same widths and style for Helvetica, Arial, Times and Courier, none for others', () => {
    assert.deepEqual(metricTwins('Helvetica-Bold'), ['LiberationSans-Bold', 'Arial-BoldMT']);
    assert.deepEqual(metricTwins('Arial-BoldItalicMT'), ['LiberationSans-BoldItalic', 'Helvetica-BoldOblique']);
    assert.deepEqual(metricTwins('TimesNewRomanPSMT'), ['LiberationSerif', 'Times-Roman']);
    assert.deepEqual(metricTwins('Courier-Oblique'), ['LiberationMono-Italic', 'CourierNewPS-ItalicMT']);
    assert.deepEqual(metricTwins('HelveticaNeue-Bold'), []);
    assert.deepEqual(metricTwins('ArialNarrow'), []);
    assert.deepEqual(metricTwins('Futura-Medium'), []);
  });
});

describe('fonts on the board and beside the project', { skip: !have }, () => {
  let data: string;
  before(async () => {
    data = await tempDir();
  });
  after(() => fsp.rm(data, { recursive: true, force: true }));

  it("reads a face's typographic ascent in ems (box text's first baseline)", async () => {
    // DejaVu Sans: OS/2 sTypoAscender 1556 of 2048 units per em
    assert.equal(await fontAscent(path.join(DEJAVU, 'DejaVuSans.ttf')), 1556 / 2048);
    assert.equal(await fontAscent(path.join(data, 'missing.ttf')), undefined);
  });

  it('finds the requested faces by PostScript name as /media URLs, never through a link', async () => {
    const media = new MediaRoot(data, (id) => (id === 'b1' ? null : undefined));
    const board = await media.boardDir('b1');
    await fsp.mkdir(path.join(board, 'job', 'Fonts'), { recursive: true });
    await fsp.writeFile(path.join(board, 'job', 'title.aep'), 'RIFX');
    await fsp.copyFile(path.join(DEJAVU, 'DejaVuSerif.ttf'), path.join(board, 'job', 'Fonts', 'a b.ttf'));
    await fsp.copyFile(path.join(DEJAVU, 'DejaVuSans-Bold.ttf'), path.join(board, 'heading.ttf'));
    // A link to a face outside: not followed.
    await fsp.symlink(path.join(DEJAVU, 'DejaVuSansMono.ttf'), path.join(board, 'job', 'mono.ttf'));
    const found = await projectFontUrls(
      { media } as AppContext,
      'b1',
      { path: path.join(board, 'job', 'title.aep'), url: '/media/b1/job/title.aep' },
      ['DejaVuSerif', 'dejavusans-bold', 'DejaVuSansMono', 'NoSuch-Font'],
    );
    assert.deepEqual(
      found.sort((a, b) => a.url.localeCompare(b.url)),
      [
        { postscript: 'dejavusans-bold', url: '/media/b1/heading.ttf' },
        { postscript: 'DejaVuSerif', url: '/media/b1/job/Fonts/a%20b.ttf' },
      ],
    );
  });
});

/**
 * A TrueType collection of whole font files: the `ttcf` header with one offset per face, each face's table directory
 * rewritten to point at its tables' new places.
 */
async function collection(files: string[]): Promise<Buffer> {
  const fonts = await Promise.all(files.map((f) => fsp.readFile(f)));
  const header = Buffer.alloc(12 + 4 * fonts.length);
  header.write('ttcf', 0, 'latin1');
  header.writeUInt32BE(0x00010000, 4);
  header.writeUInt32BE(fonts.length, 8);
  let at = header.length;
  const parts: Buffer[] = [header];
  fonts.forEach((font, k) => {
    header.writeUInt32BE(at, 12 + 4 * k);
    const copy = Buffer.from(font);
    for (let t = 0; t < copy.readUInt16BE(4); t++)
      copy.writeUInt32BE(copy.readUInt32BE(12 + 16 * t + 8) + at, 12 + 16 * t + 8);
    parts.push(copy);
    at += copy.length;
  });
  return Buffer.concat(parts);
}
