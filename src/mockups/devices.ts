import type { Device } from './schemas.js';

/**
 * The devices, drawn by the service in plain HTML/CSS: generic bodies (no maker's logo or artwork) with the real
 * devices' proportions. Each is laid out in its own units; `k` (pixels per unit) fits it into the frame. The screen
 * areas have the real screens' aspect ratios and corner radii; what the screen shows fills them (object-fit: cover).
 */

export interface DeviceDrawing {
  /** Size in pixels (the device at rest, before the 3D transform). */
  width: number;
  height: number;
  html: string;
  /** Each screen area in device pixels, for callers that need the screen size (pre-scaled video) or tests. */
  screens: { x: number; y: number; w: number; h: number }[];
}

/** HTML of the content of one screen (an <img>, a <video> or nothing). */
export type ScreenContent = () => string;

interface Ctx {
  k: number;
  /** Where the box being filled sits in the device (units), so screens are recorded in device coordinates. */
  origin: [number, number];
  screens: DeviceDrawing['screens'];
  content: ScreenContent;
}

const SHADOW = (k: number) =>
  `box-shadow:0 ${r(28 * k)}px ${r(70 * k)}px rgba(0,0,0,0.42),0 ${r(6 * k)}px ${r(16 * k)}px rgba(0,0,0,0.3);`;
const r = (v: number) => Math.round(v * 1000) / 1000;

function box(c: Ctx, x: number, y: number, w: number, h: number, style: string, inner = ''): string {
  return `<div style="position:absolute;left:${r(x * c.k)}px;top:${r(y * c.k)}px;width:${r(w * c.k)}px;height:${r(h * c.k)}px;${style}">${inner}</div>`;
}

/** `box` whose content is drawn by `inner` with the origin moved to the box (for nested screens). */
function boxWith(c: Ctx, x: number, y: number, w: number, h: number, style: string, inner: () => string): string {
  const outer = c.origin;
  c.origin = [outer[0] + x, outer[1] + y];
  const html = inner();
  c.origin = outer;
  return box(c, x, y, w, h, style, html);
}

/** A screen area: clips its content to the rounded rectangle and remembers where it is. */
function screen(c: Ctx, x: number, y: number, w: number, h: number, radius: number | string): string {
  c.screens.push({ x: (c.origin[0] + x) * c.k, y: (c.origin[1] + y) * c.k, w: w * c.k, h: h * c.k });
  const rad =
    typeof radius === 'number'
      ? `${r(radius * c.k)}px`
      : radius.replace(/(\d+(?:\.\d+)?)u/g, (_, n: string) => `${r(Number(n) * c.k)}px`);
  return box(c, x, y, w, h, `overflow:hidden;border-radius:${rad};background:#0b0b0d;`, c.content());
}

interface PhoneSpec {
  w: number;
  h: number;
  bezel: number;
  radius: number;
  island: { w: number; h: number; top: number };
}

/** Real screens: iPhone 15 1179x2556, iPhone 15 Pro Max 1290x2796 (aspect 0.461); bodies 71.6x147.6 and 76.7x159.9 mm. */
const IPHONE: PhoneSpec = { w: 430, h: 895, bezel: 16, radius: 70, island: { w: 116, h: 34, top: 14 } };
const IPHONE_PRO_MAX: PhoneSpec = { w: 460, h: 960, bezel: 16, radius: 76, island: { w: 120, h: 35, top: 15 } };

function phone(c: Ctx, x: number, y: number, s: PhoneSpec): string {
  const rim = 5;
  const inner = s.radius - rim;
  const sw = s.w - 2 * s.bezel;
  const sh = s.h - 2 * s.bezel;
  const buttons =
    box(c, x - 3, y + s.h * 0.2, 4, s.h * 0.06, 'background:#4b4b52;border-radius:2px;') +
    box(c, x - 3, y + s.h * 0.29, 4, s.h * 0.1, 'background:#4b4b52;border-radius:2px;') +
    box(c, x + s.w - 1, y + s.h * 0.26, 4, s.h * 0.14, 'background:#4b4b52;border-radius:2px;');
  const body = boxWith(
    c,
    x,
    y,
    s.w,
    s.h,
    `border-radius:${r(s.radius * c.k)}px;background:linear-gradient(150deg,#8a8f98,#3a3d44 45%,#6b7079);${SHADOW(c.k)}`,
    () =>
      box(c, rim, rim, s.w - 2 * rim, s.h - 2 * rim, `border-radius:${r(inner * c.k)}px;background:#050506;`) +
      screen(c, s.bezel, s.bezel, sw, sh, s.radius - s.bezel) +
      box(
        c,
        (s.w - s.island.w) / 2,
        s.bezel + s.island.top,
        s.island.w,
        s.island.h,
        `border-radius:${r((s.island.h / 2) * c.k)}px;background:#000;`,
      ),
  );
  return buttons + body;
}

interface TabletSpec {
  w: number;
  h: number;
  bezel: number;
  radius: number;
  screenRadius: number;
}

/** iPad 10th gen: 1640x2360 screen (0.695), 179.5x248.6 mm; iPad mini: 1488x2266 (0.657), 134.8x195.4 mm. */
const IPAD: TabletSpec = { w: 700, h: 972, bezel: 40, radius: 52, screenRadius: 18 };
const IPAD_MINI: TabletSpec = { w: 572, h: 833, bezel: 36, radius: 46, screenRadius: 18 };

function tablet(c: Ctx, s: TabletSpec): string {
  const rim = 4;
  return boxWith(
    c,
    0,
    0,
    s.w,
    s.h,
    `border-radius:${r(s.radius * c.k)}px;background:linear-gradient(150deg,#9aa0a8,#4a4d55 50%,#7b8089);${SHADOW(c.k)}`,
    () =>
      box(
        c,
        rim,
        rim,
        s.w - 2 * rim,
        s.h - 2 * rim,
        `border-radius:${r((s.radius - rim) * c.k)}px;background:#0a0a0b;`,
      ) +
      screen(c, s.bezel, s.bezel, s.w - 2 * s.bezel, s.h - 2 * s.bezel, s.screenRadius) +
      box(c, s.w / 2 - 5, s.bezel / 2 - 5, 10, 10, 'border-radius:50%;background:#1f2937;'),
  );
}

interface LaptopSpec {
  screenW: number;
  screenH: number;
  side: number;
  top: number;
  bottom: number;
  deckW: number;
  deckH: number;
  lid: string;
  deck: string;
}

/** MacBook Air 13.6": 2560x1664 (1.538); MacBook Pro 16": 3456x2234 (1.547); both with a camera notch. */
const MACBOOK_AIR: LaptopSpec = {
  screenW: 1000,
  screenH: 650,
  side: 22,
  top: 26,
  bottom: 30,
  deckW: 1180,
  deckH: 24,
  lid: '#c9ccd1',
  deck: 'linear-gradient(#d9dce0,#9ea3aa)',
};
const MACBOOK_PRO: LaptopSpec = {
  screenW: 1080,
  screenH: 698,
  side: 20,
  top: 24,
  bottom: 28,
  deckW: 1260,
  deckH: 28,
  lid: '#5b5e64',
  deck: 'linear-gradient(#7c7f86,#3f4247)',
};

function laptop(c: Ctx, s: LaptopSpec): string {
  const lidW = s.screenW + 2 * s.side;
  const lidH = s.screenH + s.top + s.bottom;
  const lx = (s.deckW - lidW) / 2;
  const notchW = s.screenW * 0.13;
  const lid = boxWith(
    c,
    lx,
    0,
    lidW,
    lidH,
    `border-radius:${r(26 * c.k)}px ${r(26 * c.k)}px ${r(6 * c.k)}px ${r(6 * c.k)}px;background:${s.lid};${SHADOW(c.k)}`,
    () =>
      box(
        c,
        3,
        3,
        lidW - 6,
        lidH - 6,
        `border-radius:${r(23 * c.k)}px ${r(23 * c.k)}px ${r(4 * c.k)}px ${r(4 * c.k)}px;background:#060607;`,
      ) +
      screen(c, s.side, s.top, s.screenW, s.screenH, '12u 12u 0 0') +
      box(
        c,
        s.side + (s.screenW - notchW) / 2,
        s.top,
        notchW,
        20,
        `border-radius:0 0 ${r(8 * c.k)}px ${r(8 * c.k)}px;background:#060607;`,
      ),
  );
  const deck = box(
    c,
    0,
    lidH,
    s.deckW,
    s.deckH,
    `border-radius:${r(3 * c.k)}px ${r(3 * c.k)}px ${r(40 * c.k)}px ${r(40 * c.k)}px / ${r(3 * c.k)}px ${r(3 * c.k)}px ${r(s.deckH * c.k)}px ${r(s.deckH * c.k)}px;background:${s.deck};${SHADOW(c.k)}`,
    box(
      c,
      s.deckW / 2 - 90,
      0,
      180,
      s.deckH * 0.35,
      `border-radius:0 0 ${r(10 * c.k)}px ${r(10 * c.k)}px;background:rgba(0,0,0,0.22);`,
    ),
  );
  return lid + deck;
}

/** iMac 24": a 16:9 4.5K screen over a coloured chin, on a stand. */
function imac(c: Ctx): string {
  const sw = 1000;
  const sh = 562.5;
  const bz = 28;
  const chin = 120;
  const bw = sw + 2 * bz;
  const bh = sh + 2 * bz + chin;
  const neck = box(
    c,
    bw / 2 - 130,
    bh - 10,
    260,
    190,
    'background:linear-gradient(90deg,#a9adb3,#d7dade 50%,#a9adb3);clip-path:polygon(8% 0,92% 0,100% 100%,0 100%);',
  );
  const foot = box(
    c,
    bw / 2 - 170,
    bh + 176,
    340,
    16,
    `border-radius:${r(6 * c.k)}px;background:#c3c6cb;${SHADOW(c.k)}`,
  );
  const body = box(
    c,
    0,
    0,
    bw,
    bh,
    `border-radius:${r(24 * c.k)}px;background:#b8c3d6;overflow:hidden;${SHADOW(c.k)}`,
    box(c, 0, 0, bw, sh + 2 * bz, 'background:#f4f5f7;') +
      box(c, 3, 3, bw - 6, sh + 2 * bz - 3, `border-radius:${r(21 * c.k)}px ${r(21 * c.k)}px 0 0;background:#0b0b0c;`) +
      screen(c, bz, bz, sw, sh, 4),
  );
  return neck + foot + body;
}

function browser(c: Ctx): string {
  const w = 1280;
  const h = 800;
  const bar = 48;
  const dots = ['#ef6a5e', '#f4bf4f', '#61c554']
    .map((col, i) => box(c, 22 + i * 22, bar / 2 - 7, 14, 14, `border-radius:50%;background:${col};`))
    .join('');
  const address = box(c, 130, bar / 2 - 15, w - 260, 30, `border-radius:${r(15 * c.k)}px;background:#ffffff;`);
  return box(
    c,
    0,
    0,
    w,
    h,
    `border-radius:${r(14 * c.k)}px;overflow:hidden;background:#e6e7ea;${SHADOW(c.k)}`,
    dots + address + screen(c, 0, bar, w, h - bar, 0),
  );
}

function grid(c: Ctx): string {
  const cw = 480;
  const ch = 300;
  const gap = 28;
  let html = '';
  for (let row = 0; row < 2; row++) {
    for (let col = 0; col < 3; col++) {
      const x = col * (cw + gap);
      const y = row * (ch + gap);
      html += boxWith(c, x, y, cw, ch, `border-radius:${r(18 * c.k)}px;background:#1c1d21;${SHADOW(c.k)}`, () =>
        screen(c, 6, 6, cw - 12, ch - 12, 13),
      );
    }
  }
  return html;
}

/** Natural size of each device in its own units. */
const SIZES: Record<Device, { w: number; h: number }> = {
  iphone: { w: IPHONE.w, h: IPHONE.h },
  'iphone-pro-max': { w: IPHONE_PRO_MAX.w, h: IPHONE_PRO_MAX.h },
  ipad: { w: IPAD.w, h: IPAD.h },
  'ipad-mini': { w: IPAD_MINI.w, h: IPAD_MINI.h },
  'macbook-air': {
    w: MACBOOK_AIR.deckW,
    h: MACBOOK_AIR.screenH + MACBOOK_AIR.top + MACBOOK_AIR.bottom + MACBOOK_AIR.deckH,
  },
  'macbook-pro': {
    w: MACBOOK_PRO.deckW,
    h: MACBOOK_PRO.screenH + MACBOOK_PRO.top + MACBOOK_PRO.bottom + MACBOOK_PRO.deckH,
  },
  imac: { w: 1056, h: 930.5 },
  'double-iphone': { w: 2 * IPHONE.w + 70, h: IPHONE.h },
  browser: { w: 1280, h: 800 },
  grid: { w: 3 * 480 + 2 * 28, h: 2 * 300 + 28 },
  'no-device': { w: 1280, h: 720 },
};

/** Part of the frame's width and height the device at rest may take. */
const FIT = 0.78;

/** Draws `device` fitted into a frame of `frameW` x `frameH` pixels. */
export function drawDevice(device: Device, frameW: number, frameH: number, content: ScreenContent): DeviceDrawing {
  const size = SIZES[device];
  const k = Math.min((FIT * frameW) / size.w, (FIT * frameH) / size.h);
  const c: Ctx = { k, origin: [0, 0], screens: [], content };
  let html: string;
  switch (device) {
    case 'iphone':
      html = phone(c, 0, 0, IPHONE);
      break;
    case 'iphone-pro-max':
      html = phone(c, 0, 0, IPHONE_PRO_MAX);
      break;
    case 'ipad':
      html = tablet(c, IPAD);
      break;
    case 'ipad-mini':
      html = tablet(c, IPAD_MINI);
      break;
    case 'macbook-air':
      html = laptop(c, MACBOOK_AIR);
      break;
    case 'macbook-pro':
      html = laptop(c, MACBOOK_PRO);
      break;
    case 'imac':
      html = imac(c);
      break;
    case 'double-iphone':
      html = phone(c, 0, 0, IPHONE) + phone(c, IPHONE.w + 70, 0, IPHONE);
      break;
    case 'browser':
      html = browser(c);
      break;
    case 'grid':
      html = grid(c);
      break;
    case 'no-device':
      html = box(
        c,
        0,
        0,
        SIZES['no-device'].w,
        SIZES['no-device'].h,
        `border-radius:${r(28 * k)}px;${SHADOW(k)}`,
        screen(c, 0, 0, SIZES['no-device'].w, SIZES['no-device'].h, 28),
      );
      break;
  }
  return { width: size.w * k, height: size.h * k, html, screens: c.screens };
}
