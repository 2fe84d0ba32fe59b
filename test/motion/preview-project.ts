import sharp from 'sharp';
import {
  cdta,
  chunk,
  footagePin,
  idta,
  keyedTdbs,
  ldta,
  list,
  rifx,
  svap,
  tdgp,
  textDocument,
  utf8,
  valueTdbs,
} from './rifx-writer.js';

/** The synthetic project of the preview tests (preview-render, preview-workers), written by our RIFX writer. */

const FPS = 25;
/** Keyframe time units of a composition written by `cdta` (time scale 1): seconds x fps x 256. */
const units = (seconds: number) => seconds * FPS * 256;
const ON = 1;

const transform = (o: { position?: number[]; opacity?: number; positionKeys?: [number, number[]][] } = {}) =>
  tdgp([
    'ADBE Transform Group',
    tdgp(
      ...([
        ...(o.positionKeys
          ? [['ADBE Position', keyedTdbs(o.positionKeys.map(([t, v]) => ({ time: units(t), value: v })))]]
          : o.position
            ? [['ADBE Position', valueTdbs(o.position)]]
            : []),
        ...(o.opacity !== undefined ? [['ADBE Opacity', valueTdbs([o.opacity])]] : []),
      ] as [string, Buffer][]),
    ),
  ]);

const solidItem = (id: number, name: string, w: number, h: number, color: [number, number, number]) =>
  list('Item', idta(7, id), utf8(name), footagePin({ solidName: name, width: w, height: h, color }));

/**
 * "Main" (200x100, 25 fps, 2 s, black): a red 20x20 solid moving linearly from (20,20) at 0 s to (180,20) at 1 s; a
 * green 10x10 child of it 20 px below its centre; the precomp "Inner" (a 40x40 blue solid whose opacity is held at
 * 0 until 0.2 s of its own time) starting at 0.4 s, centred at (170,70); a 60x50 red solid at (30,75) kept by the
 * alpha matte of a 30x50 white solid above it (x 0..30); the text "HI" (DejaVu Sans Bold, 30 px, white) at (70,95).
 * "Logo" (64x32): the footage logo.png, which the project says is in a folder of the author's machine.
 * "Long" (200x100, 60 s): a solid crossing the frame, for jobs long enough to cancel.
 * "Expr" (100x32): a 10x10 red solid at (20,16) whose position expression adds 50 px to x.
 * "Clip" (64x32, 2 s): the video clip.mp4 (a Windows path of the author's machine), its layer starting at 0.5 s.
 */
export function project(o: { logoPath?: string } = {}): Buffer {
  const main = list(
    'Item',
    idta(4, 10),
    utf8('Main'),
    cdta({ width: 200, height: 100, fps: FPS, duration: 2 }),
    list(
      'Layr',
      ldta({ id: 101, type: 3, flags39: ON }),
      utf8('Title'),
      tdgp(
        [
          'ADBE Text Properties',
          tdgp([
            'ADBE Text Document',
            textDocument('HI', 'DejaVuSans-Bold', 'value + ""', { size: 30, fill: [1, 1, 1] }),
          ]),
        ],
        ['ADBE Transform Group', transformInner({ position: [70, 95, 0] })],
      ),
    ),
    list(
      'Layr',
      ldta({ id: 102, source: 21, flags39: ON }),
      utf8('Mover'),
      transform({
        positionKeys: [
          [0, [20, 20, 0]],
          [1, [180, 20, 0]],
        ],
      }),
    ),
    list(
      'Layr',
      ldta({ id: 103, source: 22, parent: 102, flags39: ON }),
      utf8('Child'),
      transform({ position: [10, 30, 0] }),
    ),
    list(
      'Layr',
      ldta({ id: 104, source: 11, flags39: ON, startMs: 400 }),
      utf8('Inner'),
      transform({ position: [170, 70, 0] }),
    ),
    // After Effects switches a track matte's own video off: it shows only through the layer it mattes.
    list('Layr', ldta({ id: 105, source: 23 }), utf8('Matte'), transform({ position: [15, 75, 0] })),
    list(
      'Layr',
      ldta({ id: 106, source: 24, flags39: ON, matte: 1 }),
      utf8('Matted'),
      transform({ position: [30, 75, 0] }),
    ),
  );
  const inner = list(
    'Item',
    idta(4, 11),
    utf8('Inner'),
    cdta({ width: 40, height: 40, fps: FPS, duration: 2 }),
    list(
      'Layr',
      ldta({ id: 201, source: 25, flags39: ON }),
      utf8('Blue'),
      tdgp([
        'ADBE Transform Group',
        tdgp([
          'ADBE Opacity',
          keyedTdbs([
            { time: 0, value: [0], interpolation: 'hold' },
            { time: units(0.2), value: [1], interpolation: 'hold' },
          ]),
        ]),
      ]),
    ),
  );
  const logoComp = list(
    'Item',
    idta(4, 12),
    utf8('Logo'),
    cdta({ width: 64, height: 32, fps: FPS, duration: 1 }),
    list('Layr', ldta({ id: 301, source: 20, flags39: ON }), utf8('')),
  );
  const long = list(
    'Item',
    idta(4, 13),
    utf8('Long'),
    cdta({ width: 200, height: 100, fps: FPS, duration: 60 }),
    list(
      'Layr',
      ldta({ id: 401, source: 21, flags39: ON, duration: 60 }),
      utf8('Crossing'),
      transform({
        positionKeys: [
          [0, [0, 50, 0]],
          [60, [200, 50, 0]],
        ],
      }),
    ),
  );
  const clipComp = list(
    'Item',
    idta(4, 14),
    utf8('Clip'),
    cdta({ width: 64, height: 32, fps: FPS, duration: 2 }),
    list('Layr', ldta({ id: 501, source: 26, flags39: ON, startMs: 500 }), utf8('')),
  );
  const fonts = list(
    'Item',
    idta(4, 15),
    utf8('Fonts'),
    cdta({ width: 64, height: 32, fps: FPS, duration: 1 }),
    list(
      'Layr',
      ldta({ id: 601, type: 3, flags39: ON }),
      utf8('Label'),
      tdgp([
        'ADBE Text Properties',
        tdgp(['ADBE Text Document', textDocument('Ag', 'NoSuchFont-Bold', undefined, { size: 20, fill: [1, 1, 1] })]),
      ]),
    ),
  );
  const expr = list(
    'Item',
    idta(4, 16),
    utf8('Expr'),
    cdta({ width: 100, height: 32, fps: FPS, duration: 1 }),
    list(
      'Layr',
      ldta({ id: 701, source: 27, flags39: ON }),
      utf8('Shifted'),
      tdgp(['ADBE Transform Group', tdgp(['ADBE Position', valueTdbs([20, 16, 0], '[value[0] + 50, value[1]]')])]),
    ),
  );
  const clip = list(
    'Item',
    idta(7, 26),
    utf8(''),
    footagePin({ path: 'C:\\Footage\\clip.mp4', width: 64, height: 32, duration: 2, fps: FPS }),
  );
  const logo = list(
    'Item',
    idta(7, 20),
    utf8(''),
    footagePin({ path: o.logoPath ?? '/Users/someone/Projects/logo.png', width: 64, height: 32 }),
  );
  return rifx(
    svap(23, 1, 5),
    chunk('head', Buffer.alloc(20)),
    list('ExEn', utf8('javascript-1.0')),
    list(
      'Fold',
      chunk('fdta', Buffer.alloc(14)),
      main,
      inner,
      logoComp,
      long,
      clipComp,
      clip,
      fonts,
      expr,
      logo,
      solidItem(21, 'Red', 20, 20, [1, 0, 0]),
      solidItem(22, 'Green', 10, 10, [0, 1, 0]),
      solidItem(23, 'White', 30, 50, [1, 1, 1]),
      solidItem(24, 'Red wide', 60, 50, [1, 0, 0]),
      solidItem(25, 'Blue', 40, 40, [0, 0, 1]),
      solidItem(27, 'Red small', 10, 10, [1, 0, 0]),
    ),
  );
}

/** The inside of a transform group (for a layer that has other property groups too). */
function transformInner(o: { position: number[] }) {
  return tdgp(['ADBE Position', valueTdbs(o.position)]);
}

export const png = (width: number, height: number, color: { r: number; g: number; b: number }) =>
  sharp({ create: { width, height, channels: 3, background: color } })
    .png()
    .toBuffer();
