import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
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
          `#!/bin/sh\necho "Chrome-Headless-Shell ${version}"\n`,
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
