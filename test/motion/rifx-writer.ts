/**
 * A small writer of After Effects RIFX projects for tests: chunks, LISTs and the few records the reader uses, so
 * tests can build files with odd sizes, unknown chunks, newer record sizes and broken headers.
 */
export type Part = Buffer;

export function chunk(id: string, body: Buffer, opts: { pad?: boolean } = {}): Part {
  const head = Buffer.alloc(8);
  head.write(id.padEnd(4, ' '), 0, 'latin1');
  head.writeUInt32BE(body.length, 4);
  const pad = body.length % 2 === 1 && opts.pad !== false ? Buffer.alloc(1) : Buffer.alloc(0);
  return Buffer.concat([head, body, pad]);
}

export function list(type: string, ...children: Part[]): Part {
  return chunk('LIST', Buffer.concat([Buffer.from(type.padEnd(4, ' '), 'latin1'), ...children]));
}

export const utf8 = (s: string) => chunk('Utf8', Buffer.from(s, 'utf8'));

export function rifx(...children: Part[]): Buffer {
  const body = Buffer.concat([Buffer.from('Egg!', 'latin1'), ...children]);
  const head = Buffer.alloc(8);
  head.write('RIFX', 0, 'latin1');
  head.writeUInt32BE(body.length, 4);
  return Buffer.concat([head, body]);
}

/** svap for a version: major.minor x build (bit layout of research §3.1). */
export function svap(major: number, minor: number, build: number): Part {
  const v = ((major >> 3) << 26) | ((major & 7) << 19) | (minor << 15) | build;
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v >>> 0);
  return chunk('svap', b);
}

export function idta(type: number, id: number): Part {
  const b = Buffer.alloc(84);
  b.writeUInt16BE(type, 0);
  b.writeUInt32BE(id, 16);
  return chunk('idta', b);
}

export function cdta(o: {
  width: number;
  height: number;
  fps: number;
  duration: number;
  bg?: [number, number, number];
}): Part {
  const b = Buffer.alloc(204);
  const timeScale = 1;
  b.writeUInt32BE(timeScale * 256, 4);
  b.writeUInt32BE(Math.round(o.fps * 256 * timeScale), 8);
  b.writeUInt32BE(600, 16);
  b.writeUInt32BE(Math.round(o.duration * o.fps * 256), 44);
  b.writeUInt32BE(Math.round(o.fps * 256), 48);
  const [r, g, bl] = o.bg ?? [0, 0, 0];
  b.writeUInt8(r, 52);
  b.writeUInt8(g, 53);
  b.writeUInt8(bl, 54);
  b.writeUInt16BE(o.width, 140);
  b.writeUInt16BE(o.height, 142);
  b.writeUInt16BE(Math.floor(o.fps), 156);
  return chunk('cdta', b);
}

/** ldta; `size` 160 (AE ≤ 22) or 164 (AE 23+, matte layer id appended). */
export function ldta(o: {
  id: number;
  source?: number;
  type?: number;
  parent?: number;
  flags38?: number;
  size?: number;
  duration?: number;
  /** Byte 39: bit 0 the layer is enabled (shown). */
  flags39?: number;
  /** Start time in thousandths of a second. */
  startMs?: number;
  /** Blending mode code (byte 99) and track matte mode (byte 107: 1 alpha, 2 alpha inverted, 3 luma, 4 luma inverted). */
  blend?: number;
  matte?: number;
}): Part {
  const b = Buffer.alloc(o.size ?? 160);
  b.writeUInt32BE(o.id, 0);
  if (o.startMs !== undefined) {
    b.writeInt32BE(o.startMs, 12);
    b.writeUInt32BE(1000, 16);
  } else b.writeUInt32BE(1, 16);
  b.writeUInt32BE(1, 24);
  b.writeUInt32BE(o.duration ?? 10, 28);
  b.writeUInt32BE(1, 32);
  b.writeUInt8(o.flags38 ?? 0, 38);
  b.writeUInt8(o.flags39 ?? 0, 39);
  b.writeUInt8(o.blend ?? 0, 99);
  b.writeUInt8(o.matte ?? 0, 107);
  b.writeUInt32BE(o.source ?? 0, 40);
  b.writeUInt8(o.type ?? 0, 131);
  b.writeUInt32BE(o.parent ?? 0, 132);
  return chunk('ldta', b);
}

export function tdmn(name: string): Part {
  const b = Buffer.alloc(40);
  b.write(name, 0, 'latin1');
  return chunk('tdmn', b);
}

/** A property group (tdgp) of [match name, property] pairs. */
export function tdgp(...pairs: [string, Part][]): Part {
  return list(
    'tdgp',
    chunk('tdsb', Buffer.alloc(4)),
    ...pairs.flatMap(([n, p]) => [tdmn(n), p]),
    tdmn('ADBE Group End'),
  );
}

/** A leaf property, with an expression when given. */
export function tdbs(expression?: string): Part {
  return list(
    'tdbs',
    chunk('tdsb', Buffer.alloc(4)),
    chunk('tdb4', Buffer.alloc(124)),
    ...(expression !== undefined ? [utf8(expression)] : []),
  );
}

/** A text document: COS text with the font list and the first document's text (UTF-16BE strings). */
export function textDocument(
  text: string,
  font: string,
  expression?: string,
  /** The first run's style: font size and fill colour (RGB 0..1). */
  style?: { size: number; fill?: [number, number, number] },
): Part {
  const cosString = (s: string) => {
    const u = Buffer.from(s, 'utf16le').swap16();
    const escaped = Buffer.from(
      [...Buffer.concat([Buffer.from([0xfe, 0xff]), u])].flatMap((c) =>
        c === 0x28 || c === 0x29 || c === 0x5c ? [0x5c, c] : [c],
      ),
    );
    return Buffer.concat([Buffer.from('('), escaped, Buffer.from(')')]);
  };
  const cos = Buffer.concat([
    Buffer.from(' /0 << /1 << /0 [ << /0 << /99 /CoolTypeFont /0 << /0 '),
    cosString(font),
    Buffer.from(' /2 1 >> >> >> ] >> >> /1 << /1 [ << /0 << /0 '),
    cosString(text),
    Buffer.from(' /5 << /0 1.5 /1 true >>'),
    Buffer.from(
      style
        ? ` /6 << /0 [ << /0 << /0 << /6 << /1 ${style.size.toFixed(1)}` +
            (style.fill ? ` /53 << /0 << /1 [ 1.0 ${style.fill.map((c) => c.toFixed(4)).join(' ')} ] >> >>` : '') +
            ' >> >> >> >> ] >>'
        : '',
    ),
    Buffer.from(' >> >> ] >> '),
  ]);
  return list('btds', tdbs(expression), list('btdk', cos));
}

export function footagePin(o: {
  solidName?: string;
  path?: string;
  width: number;
  height: number;
  /** Solids: RGB 0..1 (stored ARGB float32 at 10). */
  color?: [number, number, number];
  /** Video footage: seconds (sspc 38/42) and frame rate (sspc 56, integer part). */
  duration?: number;
  fps?: number;
}): Part {
  const opti = Buffer.alloc(o.solidName !== undefined ? 282 : 16);
  if (o.solidName !== undefined) {
    opti.write('Soli', 0, 'latin1');
    opti.writeUInt16BE(9, 4);
    [1, ...(o.color ?? [0, 0, 0])].forEach((v, k) => opti.writeFloatBE(v, 10 + 4 * k));
    opti.write(o.solidName, 26, 'latin1');
  } else {
    opti.write('png!', 0, 'latin1');
    opti.writeUInt16BE(1, 4);
  }
  const sspc = Buffer.alloc(100);
  sspc.writeUInt16BE(o.width, 32);
  sspc.writeUInt16BE(o.height, 36);
  if (o.duration !== undefined) {
    sspc.writeUInt32BE(Math.round(o.duration * 1000), 38);
    sspc.writeUInt32BE(1000, 42);
  }
  if (o.fps !== undefined) sspc.writeUInt32BE(o.fps, 56);
  const alas = o.path
    ? [
        list(
          'Als2',
          chunk('alas', Buffer.from(JSON.stringify({ fullpath: o.path, platform: 2, target_is_folder: false }))),
        ),
      ]
    : [];
  return list('Pin ', chunk('sspc', sspc), chunk('opti', opti), ...alas);
}

/** tdb4 of a numeric leaf property with `dims` dimensions. */
function tdb4(dims: number): Part {
  const b = Buffer.alloc(124);
  b.writeUInt16BE(dims, 2);
  return chunk('tdb4', b);
}

/**
 * A leaf property with a static value (`cdat` doubles), in the file's units: opacity and scale as fractions
 * (1 = 100 %), positions in pixels; with an expression when given.
 */
export function valueTdbs(value: number[], expression?: string): Part {
  const cdat = Buffer.alloc(8 * value.length);
  value.forEach((v, k) => cdat.writeDoubleBE(v, 8 * k));
  return list(
    'tdbs',
    chunk('tdsb', Buffer.alloc(4)),
    tdb4(value.length),
    chunk('cdat', cdat),
    ...(expression !== undefined ? [utf8(expression)] : []),
  );
}

/**
 * A keyframed leaf property, not spatial (one value and ease per dimension: records of 8 + 40 x dims bytes). `time`
 * is in the composition's time units (seconds x fps x 256 with `cdta`'s time scale of 1); eases are linear (speed 0,
 * influence 1/6 as After Effects writes them for linear keys).
 */
export function keyedTdbs(keys: { time: number; value: number[]; interpolation?: 'linear' | 'hold' }[]): Part {
  const dims = keys[0].value.length;
  const size = 8 + 40 * dims;
  const head = Buffer.alloc(20);
  head.writeUInt16BE(keys.length, 10);
  head.writeUInt16BE(size, 18);
  const body = Buffer.alloc(size * keys.length);
  keys.forEach((k, i) => {
    const at = i * size;
    const code = k.interpolation === 'hold' ? 3 : 1;
    body.writeInt32BE(Math.round(k.time), at);
    body.writeUInt8(code, at + 4);
    body.writeUInt8(code, at + 5);
    k.value.forEach((v, j) => {
      body.writeDoubleBE(v, at + 8 + 8 * j);
      body.writeDoubleBE(1 / 6, at + 8 + 16 * dims + 8 * j);
      body.writeDoubleBE(1 / 6, at + 8 + 32 * dims + 8 * j);
    });
  });
  return list(
    'tdbs',
    chunk('tdsb', Buffer.alloc(4)),
    tdb4(dims),
    chunk('cdat', Buffer.alloc(8 * dims)),
    list('list', chunk('lhd3', head), chunk('ldat', body)),
  );
}
