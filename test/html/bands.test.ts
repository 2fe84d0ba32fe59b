import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { mediaRootFiles } from '../../src/render/page.js';
import { bandLayout, captureVideo } from '../../src/render/capture.js';
import { tempDir, videoPackets, whereVideosDiffer } from '../helpers/fixtures.js';
import { startService, type TestService } from '../helpers/service.js';
import { decodedFrames, pixelsOf, type Rgb } from './cards.js';

const FPS = 10;
const W = 320;
const H = 240;

/**
 * A card whose only motion is a white bar crossing the width in the upper rows (top 20 px, 40 px high) over `seconds`,
 * above a still gradient; an `animationiteration` listener shows how many 1-second iterations of a second animation
 * have passed in a box in the lower rows (red, then green, then blue), so a seek of the page's own animations would
 * show at once.
 */
const barCard = (width: number, height: number, seconds: number) =>
  `<!doctype html><html><head><style>
  body { margin: 0; width: 100vw; height: 100vh; background: linear-gradient(#335, #a86); }
  #bar { position: absolute; left: 0; top: 20px; width: 8px; height: 40px; background: #fff;
    animation: slide ${seconds}s linear forwards, tick 1s linear infinite; }
  #count { position: absolute; left: 10px; bottom: 10px; width: 40px; height: 40px; background: rgb(255,0,0); }
  @keyframes slide { from { transform: translateX(0); } to { transform: translateX(${width - 8}px); } }
  @keyframes tick { from { opacity: 1; } to { opacity: 1; } }
</style></head><body><div id="bar"></div><div id="count"></div><script>
  let n = 0;
  document.getElementById('bar').addEventListener('animationiteration', () => {
    n++;
    document.getElementById('count').style.background = ['rgb(255,0,0)', 'rgb(0,255,0)', 'rgb(0,0,255)'][Math.min(n, 2)];
  });
</script></body></html>`.replace('height: 100vh', `height: ${height}px`);

const barAt = (frame: Buffer, width: number): number => {
  const pixel = pixelsOf(frame, width);
  for (let x = 0; x < width; x++) if (pixel(x, 40).every((v) => v > 200)) return x;
  return -1;
};
const countColour = (f: number): Rgb =>
  [
    [255, 0, 0],
    [0, 255, 0],
    [0, 0, 255],
  ][Math.min(2, Math.floor(f / FPS))] as Rgb;
const near = (got: Rgb, want: Rgb, slack = 24) => got.every((v, i) => Math.abs(v - want[i]) <= slack);

describe('bands: a card whose motion is in some rows is captured by one page per band', () => {
  it('cuts the frame around the rows that move, on whole JPEG blocks, when they are few enough', () => {
    // A bar in rows 108..324 of 1080: the band that moves ends at 352 (324 + 16 rounded up to 16).
    assert.deepEqual(bandLayout(1080, { top: 108, bottom: 324 }, 2), [352, 728]);
    // Near the bottom: the band that moves starts at 880 (900 - 16 rounded down to 16).
    assert.deepEqual(bandLayout(1080, { top: 900, bottom: 1000 }, 2), [880, 200]);
    assert.equal(bandLayout(1080, { top: 100, bottom: 900 }, 2), undefined, 'most rows move');
    assert.equal(bandLayout(1080, null, 2), undefined, 'unknown motion');
    assert.equal(bandLayout(1080, { top: 0, bottom: 0 }, 2), undefined, 'nothing moves');
    assert.equal(bandLayout(1080, { top: 108, bottom: 324 }, 1), undefined, 'one page');
  });

  let s: TestService;
  let board: string;
  let fixtures: string;

  before(async () => {
    s = await startService({ HTML_RENDER_RANGES: '2' });
    board = await s.createBoard('Bands');
    fixtures = await tempDir();
  });

  after(async () => {
    await s.close();
    await fsp.rm(fixtures, { recursive: true, force: true });
  });

  const capture = async (ranges: number, name: string) => {
    const output = path.join(fixtures, name);
    const { bands } = await captureVideo(
      s.service.ctx.tools,
      { pool: s.service.ctx.browsers, media: mediaRootFiles(s.service.ctx.media), serviceOrigins: [] },
      { html: barCard(W, H, 3), width: W, height: H, fps: FPS },
      {
        fps: FPS,
        format: 'mp4',
        output,
        frameCount: 3 * FPS,
        signal: new AbortController().signal,
        timeoutMs: 120_000,
        frames: 'jpeg',
        ranges,
      },
    );
    return { bands, frames: await decodedFrames(output, W, H), output };
  };

  it('renders the bands as the whole page would: every frame, the bar at its time, the still band changing on its frames', async () => {
    const banded = await capture(2, 'banded.mp4');
    const whole = await capture(1, 'whole.mp4');
    // Rows 20..60 move: one band down to 80, the other below. Bands need begin-frame capture: a full Chromium build
    // (CHROMIUM_PATH), which takes screenshots, renders in one piece.
    const beginFrame = await s.service.ctx.browsers.withPage(
      { width: 16, height: 16 },
      async (p) => p.beginFrameControl,
    );
    assert.deepEqual(banded.bands, beginFrame ? [80, 160] : [H]);
    assert.deepEqual(whole.bands, [H]);
    assert.equal(banded.frames.length, 30);
    assert.equal((await videoPackets(banded.output)).length, 30);
    banded.frames.forEach((frame, f) => {
      const want = Math.round(((W - 8) * f) / (3 * FPS));
      assert.ok(Math.abs(barAt(frame, W) - want) <= 1, `frame ${f}: bar at ${barAt(frame, W)}, want ${want}`);
      // The count box (lower band) changes only on the page's own iterations: at 1 s and 2 s.
      const got = pixelsOf(frame, W)(30, H - 30);
      assert.ok(near(got, countColour(f)), `frame ${f}: count rgb(${got.join(', ')})`);
      let diff = 0;
      for (let i = 0; i < frame.length; i++) diff += Math.abs(frame[i] - whole.frames[f][i]);
      diff /= frame.length;
      assert.ok(diff < 3, `frame ${f}: banded and whole differ by ${diff.toFixed(2)} on average`);
    });
  });

  it('cuts the same bands for a card that replaces what the clock measures with', async () => {
    const html = barCard(W, H, 3).replace(
      '<script>',
      `<script>
        Element.prototype.getBoundingClientRect = () => ({ top: NaN, bottom: NaN });
        window.Animation = function () { throw new Error('no animations'); };
        window.KeyframeEffect = window.Animation;`,
    );
    const output = path.join(fixtures, 'sabotage.mp4');
    const { bands } = await captureVideo(
      s.service.ctx.tools,
      { pool: s.service.ctx.browsers, media: mediaRootFiles(s.service.ctx.media), serviceOrigins: [] },
      { html, width: W, height: H, fps: FPS },
      {
        fps: FPS,
        format: 'mp4',
        output,
        frameCount: 30,
        signal: new AbortController().signal,
        timeoutMs: 120_000,
        frames: 'jpeg',
      },
    );
    const beginFrame = await s.service.ctx.browsers.withPage(
      { width: 16, height: 16 },
      async (p) => p.beginFrameControl,
    );
    assert.deepEqual(bands, beginFrame ? [80, 160] : [H]);
    assert.equal((await decodedFrames(output, W, H)).length, 30);
    // Whatever a page hands back, a layout is made of finite rows or none.
    assert.equal(bandLayout(H, { top: NaN, bottom: 60 }, 2), undefined);
  });

  it('files a proxy and a whole thumbnail for a banded render over HTTP, the same bytes twice', async () => {
    const render = async (title: string) => {
      const res = await s.api('POST', '/api/html/render', {
        html: barCard(96, 496, 3),
        board_id: board,
        width: 96,
        height: 496,
        fps: FPS,
        duration: 3,
        format: 'mp4',
        title,
      });
      assert.equal(res.status, 200, res.text);
      return res;
    };
    const res = await render('banded tall');
    const again = await render('banded tall again');
    const file = async (url: string) => (await s.service.ctx.media.resolveUrl(url)).path;
    for (const key of ['url', 'proxy_url'] as const) {
      const [a, b] = [await file(res.body[key]), await file(again.body[key])];
      if (!(await fsp.readFile(a)).equals(await fsp.readFile(b)))
        assert.fail(`the ${key} files differ: ${await whereVideosDiffer(a, b)}`);
    }
    assert.equal((await videoPackets(await file(res.body.proxy_url))).length, 30);
    const thumbnail = sharp(await fsp.readFile(await file(res.body.thumbnail_url)));
    const { width, height } = await thumbnail.metadata();
    // The whole frame (96 x 496, at most 480 px high): both bands.
    assert.equal(height, 480);
    assert.equal(width, Math.round((96 * 480) / 496));
    const { data, info } = await thumbnail.raw().toBuffer({ resolveWithObject: true });
    const px = (x: number, y: number): Rgb => {
      const o = (y * info.width + x) * info.channels;
      return [data[o], data[o + 1], data[o + 2]];
    };
    // The middle frame (15, 1.5 s): the count box is green, in the lower band.
    assert.ok(near(px(20, 480 - 25), [0, 255, 0], 40), `thumbnail count box rgb(${px(20, 455).join(', ')})`);
  });
});
