import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { build } from 'esbuild';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { startService, type TestService } from '../helpers/service.js';

/**
 * The client as a desktop app's web view runs it: bundled for the browser, on a page of an allowed origin in
 * headless Chromium, where uploads go through XMLHttpRequest and the event stream through the browser's fetch.
 */
describe('client: in a browser', () => {
  let s: TestService;
  let pages: http.Server;
  let origin: string;
  let browser: Browser;
  let page: Page;
  let board: string;

  before(async () => {
    const bundle = await build({
      entryPoints: ['client/src/index.ts'],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      write: false,
    });
    const script = bundle.outputFiles[0].text;
    pages = http.createServer((req, res) => {
      if (req.url === '/client.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
      else
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end('<!doctype html><script type="module">import * as c from "/client.js"; window.client = c;</script>');
    });
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    s = await startService({ ALLOWED_ORIGINS: origin });
    board = await s.createBoard('Browser');
    const chromium = await s.service.ctx.tools.require('chromium');
    browser = await puppeteer.launch({
      executablePath: chromium.path,
      headless: true,
      userDataDir: await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-client-browser-')),
      args: ['--no-sandbox'],
    });
    page = await browser.newPage();
    await page.goto(origin, { waitUntil: 'load' });
    await page.waitForFunction(() => 'client' in window);
  });
  after(async () => {
    await browser?.close();
    await s.close();
    await new Promise((resolve) => pages.close(resolve));
  });

  it('uploads through XMLHttpRequest with progress, and follows the event stream', async () => {
    // Source text, not a function: tsx would wrap the function's callbacks in a helper the page does not have.
    const result = (await page.evaluate(`(async (baseUrl, boardId) => {
      const client = window.client.createBoardMediaClient({ baseUrl });
      const events = [];
      const stream = client.events({ boardId, onEvent: (e) => events.push(e.type) });
      await stream.ready;
      const bytes = new Uint8Array(4 * 1024 * 1024).map((_, i) => i % 251);
      const progress = [];
      const answer = await client.upload({
        boardId,
        file: new File([bytes], 'from the page.bin'),
        addToBoard: true,
        onProgress: (p) => progress.push(p),
      });
      const deadline = Date.now() + 10000;
      while (!events.includes('element.added') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      stream.close();
      await stream.closed;
      return { answer, progress, events, size: bytes.length };
    })(${JSON.stringify(s.baseUrl)}, ${JSON.stringify(board)})`)) as any;
    assert.equal(result.answer.filename, 'from the page.bin');
    assert.equal(result.answer.element.type, 'file');
    assert.ok(result.progress.length >= 1, 'XMLHttpRequest reported progress');
    const last = result.progress.at(-1)!;
    assert.equal(last.loaded, last.total);
    assert.ok(last.total > result.size, `${last.total} bytes: the file and its form`);
    const stored = await fsp.stat(path.join(await s.service.ctx.media.boardDir(board), 'from the page.bin'));
    assert.equal(stored.size, result.size);
    assert.ok(result.events.includes('element.added'), `events: ${result.events.join(', ')}`);
  });
});
