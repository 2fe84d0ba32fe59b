import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import sharp from 'sharp';
import { startLocalWorker, type LocalWorker } from '../../worker/local.js';
import { tempDir } from '../helpers/fixtures.js';
import { startService, type TestService } from '../helpers/service.js';
import { sampleBoard, TOKEN, type SampleBoard } from './board.js';

const run = promisify(execFile);
const VIEWPORT = { width: 1000, height: 800 };

type Rgb = [number, number, number];
const near = (a: Rgb, b: Rgb, tol = 40) => a.every((v, i) => Math.abs(v - b[i]) <= tol);

/** Loads the page and checks what a visitor sees: layout at board positions, decoded images, a playing video, the lightbox. */
async function checkPage(page: Page, url: string, sample: SampleBoard): Promise<void> {
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(() => document.querySelectorAll('#board .item').length === 6, { timeout: 15_000 });

  // Images: every <img> loads and decodes (width/height set from the media, so nothing jumps while they do).
  const images = await page.$$eval('#board img', async (imgs) =>
    Promise.all(
      (imgs as HTMLImageElement[]).map(async (img) => {
        await img.decode();
        return { w: img.naturalWidth, lazy: img.loading, attrW: img.getAttribute('width'), srcset: img.srcset };
      }),
    ),
  );
  assert.equal(images.length, 2);
  for (const img of images) {
    assert.ok(img.w > 0, 'decoded');
    assert.equal(img.lazy, 'lazy');
    assert.ok(img.attrW);
  }
  assert.match(images[0].srcset, /-w320\.jpg 320w, .*-w640\.jpg 640w, .* 800w/);

  // Layout: each element sits at its board position, scaled to the board's width; checked on a screenshot.
  const boxes = await page.$$eval('#board .item', (items) =>
    items.map((i) => {
      const r = i.getBoundingClientRect();
      return { id: (i as HTMLElement).dataset.id!, x: r.x, y: r.y, w: r.width, h: r.height };
    }),
  );
  const box = (id: string) => boxes.find((b) => b.id === id)!;
  const red = box(sample.ids.red);
  const scale = red.w / 200;
  for (const [id, col, row] of [
    [sample.ids.blue, 1, 0],
    [sample.ids.video, 2, 0],
    [sample.ids.card, 0, 1],
  ] as const) {
    const b = box(id);
    assert.ok(
      Math.abs(b.x - (red.x + col * 220 * scale)) < 2 && Math.abs(b.y - (red.y + row * 170 * scale)) < 2,
      `element ${id} at its board position`,
    );
  }
  const shot = await sharp(Buffer.from(await page.screenshot({ type: 'png' })))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const pixel = (x: number, y: number): Rgb => {
    const i = (Math.round(y) * shot.info.width + Math.round(x)) * 3;
    return [shot.data[i], shot.data[i + 1], shot.data[i + 2]];
  };
  const centre = (b: { x: number; y: number; w: number; h: number }) => pixel(b.x + b.w / 2, b.y + b.h / 2);
  assert.ok(near(centre(red), [255, 0, 0]), `red image shown where it belongs: ${centre(red)}`);
  assert.ok(near(centre(box(sample.ids.blue)), [0, 0, 255]), `blue image: ${centre(box(sample.ids.blue))}`);
  await page.waitForFunction(
    () => (document.querySelector('[data-type="html"] video') as HTMLVideoElement).readyState >= 2,
    { timeout: 15_000 },
  );
  assert.ok(
    near(centre(box(sample.ids.card)), [0, 200, 0], 60),
    `the card's rendered video: ${centre(box(sample.ids.card))}`,
  );

  // A video plays inline.
  const played = await page.$eval('[data-type="video"] video', async (el) => {
    const v = el as HTMLVideoElement;
    v.muted = true;
    await v.play();
    await new Promise((r) => setTimeout(r, 500));
    return { t: v.currentTime, preload: v.preload, inline: v.hasAttribute('playsinline'), poster: v.poster };
  });
  assert.ok(played.t > 0, `currentTime ${played.t}`);
  assert.equal(played.preload, 'metadata');
  assert.ok(played.inline);
  assert.match(played.poster, /-poster\.jpg$/);

  // The lightbox opens from the keyboard, steps with the arrows, shows the card in a sandboxed frame, closes on Escape.
  await page.focus('#board .item .open');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#lb:not([hidden]) .stage img');
  assert.match(await page.$eval('#lb .caption', (c) => c.textContent ?? ''), /1 \/ 6/);
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
  const frame = await page.waitForSelector('#lb .stage iframe');
  assert.equal(await frame!.evaluate((f) => f.getAttribute('sandbox')), 'allow-scripts');
  const cardFrame = await (await frame!.contentFrame())!;
  await cardFrame.waitForFunction(
    () => document.body && getComputedStyle(document.body).backgroundColor === 'rgb(0, 200, 0)',
    { timeout: 10_000 },
  );
  await page.keyboard.press('ArrowLeft');
  assert.match(await page.$eval('#lb .caption', (c) => c.textContent ?? ''), /3 \/ 6/);
  await page.keyboard.press('Escape');
  assert.equal(await page.$eval('#lb', (lb) => (lb as HTMLElement).hidden), true);
}

describe('the shared page in a real browser', () => {
  let worker: LocalWorker;
  let s: TestService;
  let sample: SampleBoard;
  let browser: Browser;
  let page: Page;
  let dir: string;

  before(async () => {
    worker = await startLocalWorker({ port: 0, token: TOKEN });
    s = await startService({ SHARE_WORKER_URL: worker.url, SHARE_WORKER_TOKEN: TOKEN });
    sample = await sampleBoard(s);
    dir = await tempDir();
    const chromium = await s.service.ctx.tools.require('chromium');
    browser = await puppeteer.launch({
      executablePath: chromium.path,
      headless: true,
      userDataDir: await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-share-browser-')),
      args: [
        '--no-sandbox',
        '--autoplay-policy=no-user-gesture-required',
        '--mute-audio',
        '--disable-gpu',
        '--allow-file-access-from-files',
      ],
    });
    page = await browser.newPage();
    await page.setViewport(VIEWPORT);
  });
  after(async () => {
    await browser?.close();
    await s?.close();
    await worker?.close();
    if (dir) await fsp.rm(dir, { recursive: true, force: true });
  });

  it('works from the worker', async () => {
    const res = await s.api('POST', `/api/moodboards/${sample.board}/share`, { kind: 'live' });
    assert.equal(res.status, 200, res.text);
    await checkPage(page, res.body.url, sample);
  });

  it('works from an unzipped archive opened as file://', async () => {
    const res = await s.api('POST', `/api/moodboards/${sample.board}/share`, {
      kind: 'archive',
      include_history: true,
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.download_url, `/media/share-archive-${res.body.share_id}.zip`);
    assert.equal(res.body.url, null);
    const zip = await fetch(s.baseUrl + res.body.download_url);
    assert.equal(zip.status, 200);
    const file = path.join(dir, 'share.zip');
    await fsp.writeFile(file, Buffer.from(await zip.arrayBuffer()));
    await run('unzip', ['-q', file, '-d', path.join(dir, 'page')]);
    const board = JSON.parse(await fsp.readFile(path.join(dir, 'page', 'board.json'), 'utf8'));
    const card = board.elements.find((e: { type: string }) => e.type === 'html');
    assert.deepEqual(
      card.history.map((h: { version: number }) => h.version),
      [1, 2],
      'include_history keeps every card version',
    );
    const leftovers = (await fsp.readdir(path.join(s.dataDir, 'media'))).filter((n) => n.startsWith('.tmp-'));
    assert.deepEqual(leftovers, []);
    await checkPage(page, pathToFileURL(path.join(dir, 'page', 'index.html')).href, sample);
  });
});
