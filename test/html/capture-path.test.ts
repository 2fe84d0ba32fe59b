import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import sharp from 'sharp';
import type { FastifyBaseLogger } from 'fastify';
import { BrowserPool } from '../../src/tools/browser.js';
import { Tools } from '../../src/tools/locate.js';

// Begin-frame capture is chosen by trying it once per binary, not by where the binary came from.
const quiet = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
} as unknown as FastifyBaseLogger;

async function capturePath(chromium: string | undefined): Promise<{ beginFrame: boolean; png: Buffer }> {
  const pool = new BrowserPool(new Tools({ ...process.env, CHROMIUM_PATH: chromium }), quiet, { maxPages: 2 });
  try {
    // Two pages at once, as a video render uses: their begin-frames must not overlap (Chromium 156 kills its GPU
    // process when they do).
    const shots = await pool.withPages(2, { width: 64, height: 48 }, (pages) =>
      Promise.all(
        pages.map(async (p) => {
          await p.page.setContent('<body style="margin:0;background:rgb(0,128,255)"></body>');
          const pngs = [];
          for (let i = 0; i < 5; i++) pngs.push(await p.capture({ format: 'png' }));
          return { beginFrame: p.beginFrameControl, png: pngs[4] };
        }),
      ),
    );
    assert.equal(shots[0].beginFrame, shots[1].beginFrame);
    return shots[0];
  } finally {
    await pool.close();
  }
}

const isPng = (b: Buffer) => b.subarray(1, 4).toString('latin1') === 'PNG';

test('the located Chromium: a headless shell captures by begin-frame', async () => {
  const info = await new Tools(process.env).require('chromium');
  const { beginFrame, png } = await capturePath(undefined);
  assert.ok(isPng(png));
  if (/headless[-_]shell/.test(info.path) || info.source === 'npm') assert.equal(beginFrame, true, info.path);
});

const fullChromium = ['/usr/lib/chromium/chromium', '/opt/google/chrome/chrome'].find((p) => fs.existsSync(p));

test(
  'a full Chromium, which has no begin-frame control, captures with screenshots',
  { skip: !fullChromium && 'no full Chromium installed' },
  async () => {
    const { beginFrame, png } = await capturePath(fullChromium);
    assert.equal(beginFrame, false);
    assert.ok(isPng(png));
  },
);

test(
  "Chrome for Testing's headless shell in puppeteer's cache is preferred, newest version first",
  { skip: process.platform === 'win32' },
  async () => {
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'bms-cft-'));
    try {
      const shell = (version: string) => {
        const dir = path.join(cache, 'chrome-headless-shell', `linux-${version}`, 'chrome-headless-shell-linux64');
        fs.mkdirSync(dir, { recursive: true });
        fs.writeFileSync(
          path.join(dir, 'chrome-headless-shell'),
          // JavaScript run by this Node through its #! line: found by its bare name, so POSIX only.
          `#!${process.execPath}\nconsole.log('Chrome-Headless-Shell ${version}');\n`,
          { mode: 0o755 },
        );
        return path.join(dir, 'chrome-headless-shell');
      };
      shell('131.0.6778.85');
      const newest = shell('139.0.7258.5');
      shell('99.0.1.1');
      const info = await new Tools({ ...process.env, CHROMIUM_PATH: '', PUPPETEER_CACHE_DIR: cache }).require(
        'chromium',
      );
      assert.equal(info.path, newest);
      assert.equal(info.version, 'Chrome-Headless-Shell 139.0.7258.5');
    } finally {
      fs.rmSync(cache, { recursive: true, force: true });
    }
  },
);

test('begin-frame capture answers no image for a frame that did not change, and every changed frame exactly', async (t) => {
  const pool = new BrowserPool(new Tools(process.env), quiet, { maxPages: 1 });
  try {
    await pool.withPage({ width: 32, height: 32 }, async (p) => {
      if (!p.beginFrameControl) return t.skip('this Chromium captures with screenshots: every frame is an image');
      await p.page.setContent('<body style="margin:0;background:rgb(0,0,0)"></body>');
      const paint = (v: number) => p.page.evaluate(`document.body.style.background = 'rgb(${v},0,0)'`);
      const red = async (shot: Buffer | undefined) => {
        assert.ok(shot, 'an image');
        const { data } = await sharp(shot).raw().toBuffer({ resolveWithObject: true });
        return data[0];
      };
      const capture = () => p.captureChanged({ format: 'png' });
      assert.equal(await red(await capture()), 0, 'the first capture is an image');
      assert.equal(await capture(), undefined, 'nothing changed');
      await paint(100);
      assert.equal(await red(await capture()), 100);
      assert.equal(await capture(), undefined, 'nothing changed since');
      // A page that changes on every frame: every frame comes back, each with its own picture.
      for (let v = 110; v < 250; v += 10) {
        await paint(v);
        assert.equal(await red(await capture()), v, `frame painted ${v}`);
      }
      // Once it stops, the repeats are seen again (at most 8 frames later), and stay unseen.
      const after = [];
      for (let i = 0; i < 12; i++) after.push(await capture());
      const firstRepeat = after.indexOf(undefined);
      assert.ok(firstRepeat >= 0 && firstRepeat <= 9, `first repeat at ${firstRepeat}`);
      for (const shot of after.slice(0, firstRepeat)) assert.equal(await red(shot), 240);
      assert.deepEqual(after.slice(firstRepeat), Array(12 - firstRepeat).fill(undefined));
    });
  } finally {
    await pool.close();
  }
});
