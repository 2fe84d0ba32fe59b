import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { ffmpeg, ffmpegPath, makeAudio } from '../helpers/fixtures.js';
import type { TestService } from '../helpers/service.js';

const run = promisify(execFile);

export type Rgb = [number, number, number];

/** Cells of the test card: 4 columns x 4 rows of 40x30 px on a 160x120 card. */
export const CELL = { w: 40, h: 30, cols: 4 };
export const CARD_SIZE = { width: 160, height: 120 };

/** The colour every cell shows at progress p (0..1): red to blue. */
export const colourAt = (p: number): Rgb => {
  const q = Math.min(1, Math.max(0, p));
  return [Math.round(255 * (1 - q)), 0, Math.round(255 * q)];
};

export interface Mechanism {
  name: string;
  /** Progress shown at time t (seconds). */
  progress(t: number): number;
  /** Extra tolerance for this cell (decoded video fixtures are not exact). */
  slack?: number;
  /** The colour at progress p, when the mechanism blends colours differently. */
  colour?: (p: number) => Rgb;
}

/** anime.js 4 blends colours in squared (linear-light) space. */
const squaredBlend = (p: number): Rgb => [Math.round(255 * Math.sqrt(1 - p)), 0, Math.round(255 * Math.sqrt(p))];

/** Every kind of animation the renderer must drive, one per cell, in cell order. */
export const MECHANISMS: Mechanism[] = [
  { name: 'Date', progress: (t) => t },
  { name: 'performance.now', progress: (t) => t },
  { name: 'requestAnimationFrame', progress: (t) => t },
  { name: 'setTimeout (step at 0.5 s)', progress: (t) => (t >= 0.5 ? 1 : 0) },
  { name: 'setInterval (every 100 ms)', progress: (t) => Math.floor(t * 10 + 1e-9) / 10 },
  { name: 'CSS animation', progress: (t) => t },
  { name: 'CSS transition', progress: (t) => t },
  { name: 'Web Animations API', progress: (t) => t },
  { name: 'SVG SMIL', progress: (t) => t },
  { name: '<video>', progress: (t) => (t >= 0.5 ? 1 : 0), slack: 24 },
  { name: '<audio> currentTime', progress: (t) => t },
  { name: 'canvas from rAF', progress: (t) => t },
  { name: 'GSAP', progress: (t) => t },
  { name: 'anime.js', progress: (t) => t, colour: squaredBlend },
  { name: 'CSS animation started by a timer at 0.5 s', progress: (t) => Math.max(0, t - 0.5) },
  { name: 'CSS animation in an iframe', progress: (t) => t },
];

export const cellCentre = (i: number): { x: number; y: number } => ({
  x: (i % CELL.cols) * CELL.w + CELL.w / 2,
  y: Math.floor(i / CELL.cols) * CELL.h + CELL.h / 2,
});

/** A card with one cell per entry of MECHANISMS, each going from red to blue over one second. */
export function animationCard(urls: { video: string; audio: string; gsap: string; anime: string }): string {
  const red = 'rgb(255,0,0)';
  const blue = 'rgb(0,0,255)';
  return `<!doctype html>
<html><head><meta charset="utf-8">
<style>
  html, body { margin: 0; background: #000; overflow: hidden; }
  #grid { display: grid; grid-template-columns: repeat(4, 40px); grid-auto-rows: 30px; }
  #grid > * { width: 40px; height: 30px; background: ${red}; display: block; }
  @keyframes redblue { from { background: ${red}; } to { background: ${blue}; } }
  #css { animation: redblue 1s linear forwards; }
  #transition { transition: background-color 1s linear; }
  #late.go { animation: redblue 1s linear forwards; }
  video { object-fit: fill; }
  iframe { border: 0; }
</style>
<script src="${urls.gsap}"></script>
<script src="${urls.anime}"></script>
</head><body>
<div id="grid">
  <div id="date"></div><div id="perf"></div><div id="raf"></div><div id="timeout"></div>
  <div id="interval"></div><div id="css"></div><div id="transition"></div><div id="waapi"></div>
  <svg id="smil" width="40" height="30"><rect width="40" height="30" fill="${red}"><animate attributeName="fill" from="${red}" to="${blue}" dur="1s" fill="freeze"/></rect></svg>
  <video id="video" src="${urls.video}" autoplay muted playsinline></video>
  <div id="audio"></div>
  <canvas id="canvas" width="40" height="30"></canvas>
  <div id="gsap"></div><div id="anime"></div><div id="late"></div>
  <iframe id="frame" frameborder="0" scrolling="no" srcdoc="<style>html,body{margin:0;height:100%;background:${red};animation:redblue 1s linear forwards}@keyframes redblue{from{background:${red}}to{background:${blue}}}</style>"></iframe>
</div>
<audio id="sound" src="${urls.audio}" autoplay></audio>
<script>
  const colour = (p) => { p = Math.min(1, Math.max(0, p)); return 'rgb(' + Math.round(255 * (1 - p)) + ',0,' + Math.round(255 * p) + ')'; };
  const $ = (id) => document.getElementById(id);
  const startDate = Date.now();
  const startPerf = performance.now();
  const ctx2d = $('canvas').getContext('2d');
  function tick(ts) {
    $('date').style.background = colour((Date.now() - startDate) / 1000);
    $('perf').style.background = colour((performance.now() - startPerf) / 1000);
    $('raf').style.background = colour(ts / 1000);
    $('audio').style.background = colour($('sound').currentTime);
    ctx2d.fillStyle = colour(ts / 1000);
    ctx2d.fillRect(0, 0, 40, 30);
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);
  setTimeout(() => { $('timeout').style.background = '${blue}'; }, 500);
  let count = 0;
  setInterval(() => { count++; $('interval').style.background = colour(count / 10); }, 100);
  getComputedStyle($('transition')).backgroundColor;
  setTimeout(() => { $('transition').style.backgroundColor = '${blue}'; }, 0);
  $('waapi').animate([{ backgroundColor: '${red}' }, { backgroundColor: '${blue}' }], { duration: 1000, fill: 'forwards' });
  gsap.fromTo($('gsap'), { backgroundColor: '${red}' }, { backgroundColor: '${blue}', duration: 1, ease: 'none' });
  anime.animate($('anime'), { backgroundColor: ['${red}', '${blue}'], duration: 1000, ease: 'linear' });
  setTimeout(() => $('late').classList.add('go'), 500);
</script>
</body></html>`;
}

/** RGB pixels of a PNG. */
export async function pngPixels(png: Buffer): Promise<(x: number, y: number) => Rgb> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return (x, y) => {
    const o = (y * info.width + x) * info.channels;
    return [data[o], data[o + 1], data[o + 2]];
  };
}

/** RGB pixels of frame `index` of a video, decoded by ffmpeg. */
export async function videoFramePixels(
  file: string,
  index: number,
  width: number,
  height: number,
): Promise<(x: number, y: number) => Rgb> {
  const { stdout } = await run(
    await ffmpegPath(),
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-i',
      file,
      '-vf',
      `select=eq(n\\,${index})`,
      '-vframes',
      '1',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      'pipe:1',
    ],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  const data = stdout as unknown as Buffer;
  if (data.length < width * height * 3) throw new Error(`frame ${index} of ${file} could not be decoded`);
  return (x, y) => {
    const o = (y * width + x) * 3;
    return [data[o], data[o + 1], data[o + 2]];
  };
}

/** Cells whose colour is off by more than `tolerance` (+ the cell's slack) from the expected colour at time t. */
export function wrongCells(pixel: (x: number, y: number) => Rgb, t: number, tolerance: number): string[] {
  const wrong: string[] = [];
  MECHANISMS.forEach((m, i) => {
    const { x, y } = cellCentre(i);
    const got = pixel(x, y);
    const want = (m.colour ?? colourAt)(Math.min(1, Math.max(0, m.progress(t))));
    const off = Math.max(...got.map((v, k) => Math.abs(v - want[k])));
    if (off > tolerance + (m.slack ?? 0))
      wrong.push(`${m.name} at ${t}s: got rgb(${got.join(',')}), want rgb(${want.join(',')})`);
  });
  return wrong;
}

/**
 * The animation card of a board: its fixtures (a video red for its first half second and blue for the second, in VP9,
 * which Chromium builds decode; a tone; GSAP and anime.js from node_modules) made in `fixtures` and uploaded to it.
 */
export async function animationCardOn(s: TestService, board: string, fixtures: string): Promise<string> {
  const video = path.join(fixtures, 'redblue.webm');
  await ffmpeg([
    ...['-y', '-f', 'lavfi', '-i', 'color=c=red:s=40x30:r=10:d=0.5', '-f', 'lavfi', '-i'],
    ...['color=c=blue:s=40x30:r=10:d=0.5', '-filter_complex', '[0:v][1:v]concat=n=2:v=1:a=0'],
    ...['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', video],
  ]);
  const audio = await makeAudio(path.join(fixtures, 'tone.wav'), { duration: 2 });
  const upload = async (file: string) => {
    const res = await s.upload(board, file);
    assert.equal(res.status, 200, res.text);
    return res.body.url as string;
  };
  return animationCard({
    video: await upload(video),
    audio: await upload(audio),
    gsap: await upload(path.resolve('node_modules/gsap/dist/gsap.min.js')),
    anime: await upload(path.resolve('node_modules/animejs/dist/bundles/anime.umd.min.js')),
  });
}

/** Every frame of a video as rgb24, decoded by ffmpeg. */
export async function decodedFrames(file: string, width: number, height: number): Promise<Buffer[]> {
  const { stdout } = await run(
    await ffmpegPath(),
    ['-hide_banner', '-loglevel', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024 },
  );
  const data = stdout as unknown as Buffer;
  const size = width * height * 3;
  return Array.from({ length: data.length / size }, (_, i) => data.subarray(i * size, (i + 1) * size));
}

export const pixelsOf =
  (frame: Buffer, width: number) =>
  (x: number, y: number): Rgb => {
    const o = (y * width + x) * 3;
    return [frame[o], frame[o + 1], frame[o + 2]];
  };

/** Colours a card shows from a time on, changed by timers: long still stretches between short busy ones. */
export const STILLS: { from: number; rgb: Rgb }[] = [
  { from: 0, rgb: [255, 0, 0] },
  { from: 3.7, rgb: [0, 0, 255] },
  { from: 4.1, rgb: [0, 160, 0] },
  { from: 8, rgb: [255, 255, 255] },
];
export const STILLS_CARD = `<!doctype html><html><head><style>
  html, body { margin: 0; width: 100vw; height: 100vh; overflow: hidden; background: rgb(255,0,0); }
</style></head><body><script>
  for (const [at, rgb] of ${JSON.stringify(STILLS.slice(1).map((s) => [s.from * 1000, s.rgb]))})
    setTimeout(() => (document.body.style.background = 'rgb(' + rgb.join(',') + ')'), at);
</script></body></html>`;
export const stillAt = (t: number): Rgb => STILLS.filter((s) => s.from <= t + 1e-9).at(-1)!.rgb;
