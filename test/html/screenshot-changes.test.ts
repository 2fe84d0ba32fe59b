import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { mayMove } from '../../src/render/sandbox.js';
import { ffmpeg, tempDir, videoPackets } from '../helpers/fixtures.js';
import { startService, type TestService } from '../helpers/service.js';
import {
  animationCardOn,
  CARD_SIZE,
  decodedFrames,
  pixelsOf,
  stillAt,
  STILLS,
  STILLS_CARD,
  wrongCells,
  type Rgb,
} from './cards.js';

const FPS = 10;

/** Key frames at least two frames away from every frame where the picture changes: only held units place those. */
const heldKeys = async (file: string, changes: number[]) =>
  (await videoPackets(file)).flatMap((p, f) => (p.key && changes.every((c) => Math.abs(f - c) >= 2) ? [f] : []));

const near = (got: Rgb, want: Rgb) => got.every((v, i) => Math.abs(v - want[i]) <= 16);

/**
 * With screenshots (full Chromium builds, or HTML_CAPTURE=screenshot) the browser reports no damage: the virtual clock
 * tells whether anything that draws may have changed (docs/html.md, "Frames that repeat").
 */
describe('HTML renders captured with screenshots: the virtual clock tells which frames repeat', () => {
  let s: TestService;
  let board: string;
  let fixtures: string;

  const render = async (html: string, duration: number, title: string) => {
    const res = await s.api('POST', '/api/html/render', {
      ...CARD_SIZE,
      html,
      duration,
      fps: FPS,
      format: 'mp4',
      board_id: board,
      title,
    });
    assert.equal(res.status, 200, res.text);
    return (await s.service.ctx.media.resolveUrl(res.body.url)).path;
  };
  const upload = async (file: string) => {
    const res = await s.upload(board, file);
    assert.equal(res.status, 200, res.text);
    return res.body.url as string;
  };

  before(async () => {
    s = await startService({ HTML_CAPTURE: 'screenshot', HTML_RENDER_RANGES: '1' });
    board = await s.createBoard('Screenshots');
    fixtures = await tempDir();
  });

  after(async () => {
    await s.close();
    await fsp.rm(fixtures, { recursive: true, force: true });
  });

  it('captures with screenshots when HTML_CAPTURE asks for them', async () => {
    const beginFrame = await s.service.ctx.browsers.withPage(
      { width: 16, height: 16 },
      async (p) => p.beginFrameControl,
    );
    assert.equal(beginFrame, false);
  });

  it('shows every mechanism at its time on every frame', async () => {
    const file = await render(await animationCardOn(s, board, fixtures), 2.4, 'mechanisms');
    const frames = await decodedFrames(file, CARD_SIZE.width, CARD_SIZE.height);
    assert.equal(frames.length, 24);
    frames.forEach((frame, f) =>
      assert.deepEqual(wrongCells(pixelsOf(frame, CARD_SIZE.width), f / FPS, 16), [], `frame ${f}`),
    );
  });

  it('sees declarative animations move with no script running: CSS, Web Animations, SMIL', async () => {
    // Each cell goes from red to blue over 1 s, 1 s after load; nothing runs on a timer or rAF.
    const html = `<!doctype html><html><head><style>
      body { margin: 0; display: flex; }
      div, svg { width: 53px; height: 120px; }
      #css { animation: go 1s linear 1s both; }
      @keyframes go { from { background: rgb(255,0,0); } to { background: rgb(0,0,255); } }
    </style></head><body><div id="css"></div><div id="waapi"></div>
      <svg><rect width="53" height="120" fill="rgb(255,0,0)">
        <animate attributeName="fill" from="rgb(255,0,0)" to="rgb(0,0,255)" begin="1s" dur="1s" fill="freeze"/>
      </rect></svg>
      <script>document.getElementById('waapi').animate(
        [{ background: 'rgb(255,0,0)' }, { background: 'rgb(0,0,255)' }],
        { duration: 1000, delay: 1000, fill: 'both' });</script></body></html>`;
    const frames = await decodedFrames(await render(html, 2.5, 'declarative'), CARD_SIZE.width, CARD_SIZE.height);
    assert.equal(frames.length, 25);
    frames.forEach((frame, f) => {
      const p = Math.min(1, Math.max(0, f / FPS - 1));
      const want: Rgb = [Math.round(255 * (1 - p)), 0, Math.round(255 * p)];
      for (const [cell, x] of [
        ['CSS', 26],
        ['Web Animations', 80],
        ['SMIL', 133],
      ] as const) {
        const got = pixelsOf(frame, CARD_SIZE.width)(x, 60);
        assert.ok(near(got, want), `${cell}, frame ${f}: rgb(${got.join(', ')}), want rgb(${want.join(', ')})`);
      }
    });
  });

  it('holds the stretches where nothing runs, and shows each change on its frame', async () => {
    const file = await render(STILLS_CARD, 13, 'stills');
    const frames = await decodedFrames(file, CARD_SIZE.width, CARD_SIZE.height);
    assert.equal(frames.length, 130);
    frames.forEach((frame, f) => {
      const got = pixelsOf(frame, CARD_SIZE.width)(80, 60);
      assert.ok(near(got, stillAt(f / FPS)), `frame ${f}: rgb(${got.join(', ')})`);
    });
    const changes = STILLS.map((c) => Math.round(c.from * FPS));
    assert.ok((await heldKeys(file, changes)).length >= 3, 'no stretch was held');
  });

  it('shows an image that a timer adds once it has loaded, though nothing runs after it', async () => {
    const image = path.join(fixtures, 'blue.png');
    await ffmpeg(['-f', 'lavfi', '-i', 'color=c=blue:s=64x64', '-frames:v', '1', image]);
    const url = await upload(image);
    const html = `<!doctype html><body style="margin:0;background:rgb(255,0,0)"><script>
      setTimeout(() => {
        const img = document.createElement('img');
        img.src = ${JSON.stringify(url)};
        img.style.cssText = 'position:absolute;left:0;top:0;width:100%;height:100%';
        document.body.append(img);
      }, 2000);
    </script></body>`;
    const file = await render(html, 7, 'late image');
    const frames = await decodedFrames(file, CARD_SIZE.width, CARD_SIZE.height);
    assert.equal(frames.length, 70);
    frames.forEach((frame, f) => {
      // Frame 20 runs the timer; the image may arrive a frame later.
      if (f === 20) return;
      const got = pixelsOf(frame, CARD_SIZE.width)(80, 60);
      assert.ok(near(got, f < 20 ? [255, 0, 0] : [0, 0, 255]), `frame ${f}: rgb(${got.join(', ')})`);
    });
    assert.ok((await heldKeys(file, [0, 20, 21])).length >= 2, 'the stretch after the image was not held');
  });

  it('captures every frame while an image that moves by itself is on the page', async () => {
    // Two identical frames: an animated GIF that happens to look still. The clock cannot see a GIF's frames change,
    // so nothing is held.
    const gif = path.join(fixtures, 'still.gif');
    await ffmpeg(['-f', 'lavfi', '-i', 'color=c=blue:s=64x64:r=2', '-frames:v', '2', '-loop', '0', gif]);
    const url = await upload(gif);
    const html = `<!doctype html><body style="margin:0"><img src="${url}" style="width:100%;height:100%"></body>`;
    const file = await render(html, 5, 'gif');
    assert.equal((await decodedFrames(file, CARD_SIZE.width, CARD_SIZE.height)).length, 50);
    assert.deepEqual(await heldKeys(file, [0]), []);
  });

  it('tells the images that may move by themselves from their bytes', () => {
    const png = (chunks: string[]) =>
      Buffer.concat([
        Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'),
        ...chunks.map((c) => Buffer.from(`\0\0\0\0${c}`, 'latin1')),
      ]);
    assert.equal(mayMove('image/png', png(['IHDR', 'acTL', 'IDAT'])), true);
    assert.equal(mayMove('image/png', png(['IHDR', 'IDAT', 'tEXtacTL'])), false);
    const webp = (flags: number) => {
      const b = Buffer.alloc(30);
      b.write('RIFF', 0, 'latin1');
      b.write('WEBPVP8X', 8, 'latin1');
      b[20] = flags;
      return b;
    };
    assert.equal(mayMove('image/webp', webp(0x02)), true);
    assert.equal(mayMove('image/webp', webp(0x10)), false);
    assert.equal(mayMove('image/gif', Buffer.from('GIF89a')), true);
    assert.equal(mayMove('image/svg+xml', Buffer.from('<svg><rect><animate attributeName="x"/></rect></svg>')), true);
    assert.equal(mayMove('image/svg+xml', Buffer.from('<svg><rect width="4" height="4"/></svg>')), false);
    assert.equal(mayMove('image/jpeg', Buffer.from('GIF89a acTL')), false);
  });
});
