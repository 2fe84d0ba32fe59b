import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { startService, type TestService } from '../helpers/service.js';

const TOKEN = 'events-browser-token-0123456789';

/** A page that follows the service's events through EventSource (`?token=`, since it cannot send headers). */
const pageHtml = (service: string) => `<!doctype html><meta charset="utf-8"><title>events</title><script>
  window.received = [];
  window.errors = 0;
  window.opened = 0;
  const es = new EventSource(${JSON.stringify(`${service}/api/events?token=${TOKEN}&types=board.created`)});
  window.es = es;
  es.onopen = () => window.opened++;
  es.onerror = () => window.errors++;
  es.addEventListener('board.created', (e) => window.received.push({ lastEventId: e.lastEventId, envelope: JSON.parse(e.data) }));
</script>`;

/** A web server on a port of its own: an origin of its own (http://127.0.0.1:<port>). */
async function pageServer(html: () => string): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('EventSource in headless Chromium', () => {
  let svc: TestService;
  let allowed: Awaited<ReturnType<typeof pageServer>>;
  let foreign: Awaited<ReturnType<typeof pageServer>>;
  let browser: Browser;
  let serviceUrl = '';

  before(async () => {
    allowed = await pageServer(() => pageHtml(serviceUrl));
    foreign = await pageServer(() => pageHtml(serviceUrl));
    svc = await startService({ API_TOKEN: TOKEN, ALLOWED_ORIGINS: allowed.origin });
    serviceUrl = svc.baseUrl;
    const chromium = await svc.service.ctx.tools.require('chromium');
    browser = await puppeteer.launch({
      executablePath: chromium.path,
      headless: true,
      userDataDir: await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-events-browser-')),
      args: ['--no-sandbox', '--disable-gpu'],
    });
  });
  after(async () => {
    await browser?.close();
    await svc?.close();
    await allowed?.close();
    await foreign?.close();
  });

  const open = async (origin: string): Promise<Page> => {
    const page = await browser.newPage();
    await page.goto(origin, { waitUntil: 'load' });
    return page;
  };

  it('a page on an allowed origin receives events, and after a lost connection the ones it missed', async () => {
    const page = await open(allowed.origin);
    try {
      await page.waitForFunction('window.opened === 1', { timeout: 10_000 });
      const board = await svc.createBoard('Seen in the browser');
      await page.waitForFunction('window.received.length === 1', { timeout: 10_000 });
      const [first] = (await page.evaluate('window.received')) as any[];
      assert.equal(first.envelope.type, 'board.created');
      assert.equal(first.envelope.board_id, board);
      assert.equal(first.envelope.data.board.name, 'Seen in the browser');
      assert.equal(first.lastEventId, String(first.envelope.id));

      // The service ends every stream (as it does when it stops); a board made before the page reconnects reaches it
      // through Last-Event-ID, which the browser sends on its own (a cross-origin preflight the guard answers).
      svc.service.features.events.hub.closeAll();
      const missed = await svc.createBoard('Made while away');
      await page.waitForFunction('window.received.length === 2', { timeout: 15_000 });
      const second = ((await page.evaluate('window.received')) as any[])[1];
      assert.equal(second.envelope.board_id, missed);
      assert.equal(second.envelope.id, first.envelope.id + 1);
      assert.equal(await page.evaluate('window.opened'), 2, 'it reconnected once');
    } finally {
      await page.close();
    }
  });

  it('a page on a foreign origin cannot connect, even with the token', async () => {
    const page = await open(foreign.origin);
    try {
      // A refused EventSource fails for good (readyState CLOSED) instead of retrying.
      await page.waitForFunction('window.errors > 0 && window.es.readyState === 2', { timeout: 10_000 });
      await svc.createBoard('Not for that page');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(await page.evaluate('window.opened'), 0);
      assert.deepEqual(await page.evaluate('window.received'), []);
    } finally {
      await page.close();
    }
  });
});
