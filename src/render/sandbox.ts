import fsp from 'node:fs/promises';
import send from '@fastify/send';
import type { HTTPRequest, Page } from 'puppeteer-core';
import type { MediaFiles } from './page.js';

/**
 * The card is loaded from this made-up origin (a `.localhost` name, so it counts as a secure context) and every
 * request it makes is answered here: the document itself, this service's `/media/...` files read from disk, and
 * nothing else. The browser itself is offline (see tools/browser.ts), so this is the only way anything loads.
 */
export const CARD_ORIGIN = 'http://card.localhost';
export const CARD_URL = `${CARD_ORIGIN}/card.html`;

/** An open-ended range (`bytes=0-`, as media elements ask) is answered in pieces of at most this size. */
const MAX_RANGE_BYTES = 8 * 1024 * 1024;
/** A whole-file answer (images, fonts) is read into memory; larger files must be asked for by range. */
const MAX_WHOLE_FILE_BYTES = 32 * 1024 * 1024;
/**
 * File bytes one page may hold in memory at once (each answer is also base64-encoded for the DevTools protocol):
 * a card with many large images waits for its turn instead of growing the service's memory without bound.
 */
const MAX_BYTES_IN_FLIGHT = 64 * 1024 * 1024;

/** A counting semaphore over bytes. */
class ByteBudget {
  private used = 0;
  private readonly waiting: { bytes: number; go: () => void }[] = [];

  constructor(private readonly limit: number) {}

  /** Runs `fn` once `bytes` fit in the budget, first come first served; a waiter's bytes are reserved when it is woken. */
  async run<T>(bytes: number, fn: () => Promise<T>): Promise<T> {
    const need = Math.min(bytes, this.limit);
    if (this.waiting.length > 0 || this.used + need > this.limit)
      await new Promise<void>((go) => this.waiting.push({ bytes: need, go }));
    else this.used += need;
    try {
      return await fn();
    } finally {
      this.used -= need;
      while (this.waiting.length > 0 && this.used + this.waiting[0].bytes <= this.limit) {
        const next = this.waiting.shift()!;
        this.used += next.bytes;
        next.go();
      }
    }
  }
}

export interface SandboxOptions {
  html: string;
  /** Reads the card's `/media/...` requests (the service's media root, with all its containment checks). */
  media: MediaFiles;
  /** Origins (scheme://host:port) of this service, whose absolute `/media/...` URLs the card may also use. */
  serviceOrigins: string[];
}

export interface Sandbox {
  /** URLs the card asked for that were refused. */
  blocked: string[];
  /**
   * Whether the card was served an image that may move by itself (a GIF, an animated PNG, WebP or AVIF, an SVG with
   * animations): such images follow the browser's own timer, not the virtual clock, so the clock cannot tell when
   * they change.
   */
  movingImages: boolean;
}

/** Whether an image file's bytes may hold an animation (see `Sandbox.movingImages`); a format it cannot tell is not. */
export function mayMove(contentType: string, bytes: Buffer): boolean {
  switch (contentType) {
    case 'image/gif':
      return true;
    case 'image/png':
    case 'image/apng': {
      // An animated PNG has an acTL chunk before its first IDAT.
      const data = bytes.indexOf('IDAT', 8, 'latin1');
      const actl = bytes.indexOf('acTL', 8, 'latin1');
      return actl >= 0 && (data < 0 || actl < data);
    }
    case 'image/webp':
      // The VP8X header's animation flag.
      return bytes.toString('latin1', 12, 16) === 'VP8X' && (bytes[20] & 0x02) !== 0;
    case 'image/avif':
      // An image sequence's brand.
      return bytes.subarray(0, 64).includes('avis', 0, 'latin1');
    case 'image/svg+xml':
      // Searched in the bytes (a file may be 32 MiB): SVG's animation elements, CSS animations.
      return ['<animate', '<set', '@keyframes', 'animation'].some((word) => bytes.includes(word, 0, 'latin1'));
    default:
      return false;
  }
}

/** Turns on request interception for a page so that it can reach only its own document, /media files and inline data. */
export async function installSandbox(page: Page, opts: SandboxOptions): Promise<Sandbox> {
  const sandbox: Sandbox = { blocked: [], movingImages: false };
  const { blocked } = sandbox;
  const budget = new ByteBudget(MAX_BYTES_IN_FLIGHT);
  let documentServed = false;
  const mediaOrigins = new Set([CARD_ORIGIN, ...opts.serviceOrigins]);

  const refuse = (req: HTTPRequest) => {
    if (blocked.length < 100) blocked.push(req.url().slice(0, 300));
    // ERR_ABORTED keeps the card on screen when it tries to navigate away; other codes would show an error page.
    return req.abort(req.isNavigationRequest() ? 'aborted' : 'blockedbyclient');
  };

  const answer = async (req: HTTPRequest): Promise<void> => {
    const raw = req.url();
    if (raw.startsWith('data:') || raw.startsWith('blob:')) return req.continue();
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return refuse(req);
    }
    if (raw === CARD_URL && req.isNavigationRequest() && req.frame() === page.mainFrame() && !documentServed) {
      documentServed = true;
      return req.respond({ status: 200, contentType: 'text/html; charset=utf-8', body: opts.html });
    }
    if (req.isNavigationRequest() && req.frame() === page.mainFrame()) return refuse(req);
    // Full (non headless-shell) Chrome asks for the page's favicon by itself; that is not the card's request.
    if (url.origin === CARD_ORIGIN && url.pathname === '/favicon.ico')
      return req.respond({ status: 404, contentType: 'text/plain', body: '' });
    if (!mediaOrigins.has(url.origin) || !url.pathname.startsWith('/media/') || !['GET', 'HEAD'].includes(req.method()))
      return refuse(req);
    let file: { path: string; size: number };
    try {
      const local = await opts.media(url.pathname);
      const st = await fsp.stat(local);
      if (!st.isFile()) throw new Error('not a file');
      file = { path: local, size: st.size };
    } catch {
      return req.respond({ status: 404, contentType: 'text/plain', body: 'not found' });
    }
    const contentType = send.mime.getType(file.path) ?? 'application/octet-stream';
    const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers().range ?? '');
    if (range && (range[1] !== '' || range[2] !== '')) {
      let start: number;
      let end: number;
      if (range[1] === '') {
        start = Math.max(0, file.size - Number(range[2]));
        end = file.size - 1;
      } else {
        start = Number(range[1]);
        end = range[2] === '' ? file.size - 1 : Math.min(Number(range[2]), file.size - 1);
      }
      end = Math.min(end, start + MAX_RANGE_BYTES - 1);
      if (start >= file.size || end < start) {
        return req.respond({ status: 416, headers: { 'content-range': `bytes */${file.size}` }, body: '' });
      }
      const length = end - start + 1;
      return budget.run(length, async () =>
        req.respond({
          status: 206,
          contentType,
          headers: { 'accept-ranges': 'bytes', 'content-range': `bytes ${start}-${end}/${file.size}` },
          body: await readSlice(file.path, start, length),
        }),
      );
    }
    if (file.size > MAX_WHOLE_FILE_BYTES) return refuse(req);
    return budget.run(file.size, async () => {
      const body = await fsp.readFile(file.path);
      if (!sandbox.movingImages && mayMove(contentType, body)) sandbox.movingImages = true;
      return req.respond({ status: 200, contentType, headers: { 'accept-ranges': 'bytes' }, body });
    });
  };

  await page.setRequestInterception(true);
  page.on('request', (req) => {
    answer(req).catch(() => req.abort('failed').catch(() => undefined));
  });
  return sandbox;
}

async function readSlice(file: string, start: number, length: number): Promise<Buffer> {
  const handle = await fsp.open(file, 'r');
  try {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buf, 0, length, start);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
