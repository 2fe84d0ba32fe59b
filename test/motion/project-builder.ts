import {
  cdta,
  chunk,
  footagePin,
  idta,
  ldta,
  list,
  rifx,
  svap,
  tdbs,
  tdgp,
  textDocument,
  utf8,
} from './rifx-writer.js';

/**
 * A small project made by our RIFX writer: composition "Main" (320x180, 25 fps, 2 s) with a text layer "Title", a
 * footage layer on "logo.png" (unnamed: takes the file's name), a solid layer parented to the text layer and a shape
 * layer with an expression on its position; a second composition "Outro" with the first as a precomp and an unnamed
 * text layer. `ldtaSize` 164 mimics AE 23+; `logoPath` is where the project says "logo.png" is.
 */
export function sampleProject(
  o: { ldtaSize?: number; extra?: Buffer[]; major?: number; logoPath?: string } = {},
): Buffer {
  const size = o.ldtaSize ?? 160;
  const transform = (expr?: string) =>
    tdgp(['ADBE Transform Group', tdgp(['ADBE Position', tdbs(expr)], ['ADBE Opacity', tdbs()])]);
  const main = list(
    'Item',
    idta(4, 10),
    utf8('Main'),
    cdta({ width: 320, height: 180, fps: 25, duration: 2, bg: [10, 20, 30] }),
    ...(o.extra ?? []),
    list(
      'Layr',
      ldta({ id: 101, type: 3, size }),
      utf8('Title'),
      tdgp(['ADBE Text Properties', tdgp(['ADBE Text Document', textDocument('Hello (world)\r', 'Arial-BoldMT')])]),
    ),
    list('Layr', ldta({ id: 102, source: 20, size }), utf8(''), transform()),
    list('Layr', ldta({ id: 103, source: 21, parent: 101, size }), utf8('Backdrop'), transform()),
    list('Layr', ldta({ id: 104, type: 4, size }), utf8('Bar'), transform('wiggle(2, 10)')),
    list('SLay', ldta({ id: 105, type: 2, size }), utf8('Front')),
  );
  const outro = list(
    'Item',
    idta(4, 11),
    utf8('Outro'),
    cdta({ width: 640, height: 360, fps: 30, duration: 1 }),
    list('Layr', ldta({ id: 201, source: 10, size }), utf8('')),
    list(
      'Layr',
      ldta({ id: 202, type: 3, size }),
      utf8(''),
      tdgp(['ADBE Text Properties', tdgp(['ADBE Text Document', textDocument('Bye\rfor now\r', 'Arial-BoldMT')])]),
    ),
  );
  const logo = list(
    'Item',
    idta(7, 20),
    utf8(''),
    footagePin({ path: o.logoPath ?? '/Users/someone/Projects/logo.png', width: 64, height: 32 }),
  );
  const solid = list('Item', idta(7, 21), utf8(''), footagePin({ solidName: 'Dark Solid', width: 320, height: 180 }));
  const folder = list('Item', idta(1, 30), utf8('Solids'), list('Sfdr', solid));
  return rifx(
    svap(o.major ?? 23, 1, 5),
    chunk('head', Buffer.alloc(20)),
    list('ExEn', utf8('javascript-1.0')),
    list('Fold', chunk('fdta', Buffer.alloc(14)), main, outro, logo, folder),
  );
}
