import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, CDPSession, Page } from 'puppeteer-core';
import type { FastifyBaseLogger } from 'fastify';
import { Cancelled, DomainError, ShuttingDown, ToolUnavailable } from '../errors.js';
import { removeRetrying } from '../files/retry.js';
import type { ToolInfo, Tools } from './locate.js';
import { adoptProcess, endProcessTree } from './process.js';

/**
 * The shared headless-Chromium adapter: at most `maxPages` pages at once, each in its own warm browser process (one per
 * page slot) and in a fresh isolated BrowserContext (own cookies, storage, cache) that is disposed after use.
 *
 * The browser is offline by construction: every request is sent to a proxy address where nothing listens, so only
 * what a feature serves itself through request interception (and data:/blob: URLs) can load, including WebSockets,
 * which interception does not see. Downloads are denied per context, popups are closed as soon as they appear.
 *
 * With a build that supports it (headless-shell builds: npm's @sparticuz/chromium, Debian's chromium-headless-shell,
 * Chrome for Testing's chrome-headless-shell) pages are created under begin-frame control: the page draws only when
 * `capture()` asks it to (HeadlessExperimental.beginFrame), which is about twice as fast as screenshots. Support is
 * found by trying it at the binary's first launch; other builds capture with Page.captureScreenshot.
 */

export interface PageOptions {
  width: number;
  height: number;
}

export interface CaptureOptions {
  format: 'png' | 'jpeg';
  /** JPEG quality 0..100. */
  quality?: number;
}

/** A page lent to a caller for the duration of `withPage`. */
export interface BrowserPage {
  page: Page;
  /** A DevTools session attached to the page, for protocol calls puppeteer does not wrap. */
  cdp: CDPSession;
  /** True when frames are produced by begin-frame control rather than screenshots. */
  beginFrameControl: boolean;
  /** The current viewport as an image. */
  capture(opts: CaptureOptions): Promise<Buffer>;
  /**
   * The current viewport as an image, or undefined when the compositor drew nothing new since this page's previous
   * `captureChanged` (begin-frame capture only: the begin-frame reports whether the frame has damage). The first call,
   * and every call where damage cannot be known (screenshots), answers an image.
   */
  captureChanged(opts: CaptureOptions): Promise<Buffer | undefined>;
}

export interface BrowserPoolOptions {
  /** Pages open at once; further callers wait. */
  maxPages?: number;
  /** Pages one render may use at once (`pagesPerRender`); at most `maxPages`. */
  pagesPerRender?: number;
  /** A browser is restarted after this many pages, which bounds slow leaks in a long-running service. */
  recycleAfter?: number;
  /** V8 heap limit of each renderer in MiB. */
  rendererHeapMiB?: number;
  /** Capture with screenshots even where the binary draws under begin-frame control. */
  screenshots?: boolean;
}

/** @sparticuz/chromium's defaults target AWS Lambda; these of them would weaken isolation or stability here. */
const UNSAFE_NPM_ARGS = new Set([
  '--disable-web-security',
  '--allow-running-insecure-content',
  '--disable-site-isolation-trials',
  '--single-process',
  '--no-zygote',
]);

/** Chrome's own sandbox stays on for a normal user (it cannot run as root, where --no-sandbox is added below). */
const SYSTEM_ARGS = [
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  // Every frame drawn waits for all of its raster work and image decodes, so a screenshot never catches a layer drawn
  // from stale tiles or an image not decoded yet (mockup renders differed between runs without them).
  '--run-all-compositor-stages-before-draw',
  '--disable-checker-imaging',
];

const BEGIN_FRAME_ARGS = [
  // Software compositing reads frames back about a third faster than SwiftShader GL; WebGL still uses SwiftShader.
  '--disable-gpu-compositing',
  '--enable-begin-frame-control',
  '--run-all-compositor-stages-before-draw',
  '--disable-new-content-rendering-timeout',
  '--disable-threaded-animation',
  '--disable-threaded-scrolling',
  '--disable-checker-imaging',
];

/** Nothing listens on the discard port; with no proxy bypass (not even loopback) every real request fails there. */
const OFFLINE_ARGS = [
  '--proxy-server=http://127.0.0.1:9',
  '--proxy-bypass-list=<-loopback>',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
];

const COMMON_ARGS = [
  '--mute-audio',
  '--autoplay-policy=no-user-gesture-required',
  '--hide-scrollbars',
  '--font-render-hinting=none',
  '--disable-background-timer-throttling',
  '--disable-renderer-backgrounding',
  '--disable-backgrounding-occluded-windows',
  '--disable-extensions',
  '--disable-notifications',
  '--deny-permission-prompts',
];

/**
 * Chromium keeps compositor frames and readbacks in shared-memory files. puppeteer passes --disable-dev-shm-usage by
 * default (Docker's /dev/shm is 64 MiB), which puts those files in /tmp: on a disk filesystem that made page faults
 * and writeback about a third of the browser's CPU at 1920x1080. The flag stays only when /dev/shm is small.
 */
const DEV_SHM = '/dev/shm';
const DEV_SHM_MIN_FREE = 1024 * 1024 * 1024;

async function devShmRoomy(): Promise<boolean> {
  try {
    const fs = await fsp.statfs(DEV_SHM);
    return fs.bavail * fs.bsize >= DEV_SHM_MIN_FREE;
  } catch {
    return false;
  }
}

/**
 * glibc serves allocations above its (adaptive) mmap threshold with fresh mappings and unmaps them on free, so each
 * captured frame mapped, faulted in and unmapped frame-sized buffers (8 MiB at 1920x1080). Keeping them in the heap
 * took a tenth to a sixth off the browser's CPU per frame. Other C libraries ignore the variable.
 */
const MALLOC_TUNABLES = 'glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456';

interface Running {
  browser: Browser;
  /** The browser-level DevTools session (creating targets), kept for the browser's life. */
  cdp: CDPSession;
  beginFrameControl: boolean;
  /** The pool's slot this browser serves (see `BrowserPool.lanes`). */
  lane: number;
  userDataDir: string;
  pagesOpened: number;
  pagesOpen: number;
  retiring: boolean;
  /** The begin-frame capture in progress, if any (see `inTurn`). */
  drawing: Promise<unknown>;
}

const BEGIN_FRAME_ATTEMPTS = 8;

/** Frames with damage in a row after which a page counts as animated, and the frames then captured unasked. */
const BUSY_AFTER = 2;
const BUSY_FRAMES = 8;

/** What `captureChanged` knows of a page: whether it captured yet, damaged frames in a row, unasked frames left. */
interface Changes {
  drawn: boolean;
  damaged: number;
  busyLeft: number;
}

/** Why a wait for a page slot ended: the signal's own domain error (a time limit, a job cancel), else Cancelled. */
const stopReason = (signal: AbortSignal): DomainError =>
  signal.reason instanceof DomainError ? signal.reason : new Cancelled('The request was cancelled', 'aborted');
/** How long the first begin-frame of a newly found binary may take before it counts as unsupported. */
const BEGIN_FRAME_PROBE_MS = 15_000;

export class BrowserPool {
  /**
   * One browser per page slot, each opened when a page needs it. Begin-frames of pages in one browser must take turns
   * (see `inTurn`), those of separate browsers need not: with a browser per page the pages of a video draw
   * at the same time, and a heavy card rendered about 35-45% faster than with two pages in one browser.
   */
  private readonly lanes: (Promise<Running> | undefined)[];
  /** Pages open or being opened per lane; a new page goes to the lane with the fewest. */
  private readonly laneLoad: number[];
  private active = 0;
  private readonly waiting: { n: number; grant: () => void }[] = [];
  private closed = false;
  private readonly maxPages: number;
  /** Pages one render may use at once (a video's frame ranges, docs/html.md). */
  readonly pagesPerRender: number;
  private readonly recycleAfter: number;
  private readonly heapMiB: number;
  private readonly screenshots: boolean;
  /** Per Chromium binary: whether it draws under begin-frame control (learnt at its first launch). */
  private readonly beginFrameSupport = new Map<string, boolean>();

  constructor(
    private readonly tools: Tools,
    private readonly log: FastifyBaseLogger,
    opts: BrowserPoolOptions = {},
  ) {
    this.maxPages = opts.maxPages ?? 2;
    this.pagesPerRender = Math.min(this.maxPages, opts.pagesPerRender ?? this.maxPages);
    this.recycleAfter = opts.recycleAfter ?? 100;
    this.heapMiB = opts.rendererHeapMiB ?? 512;
    this.screenshots = opts.screenshots ?? false;
    this.lanes = Array.from({ length: this.maxPages }, () => undefined);
    this.laneLoad = this.lanes.map(() => 0);
  }

  /** Starts the browser ahead of the first request (optional; `withPage` starts it on demand). */
  async warm(): Promise<void> {
    await this.browser(0);
  }

  /**
   * Lends a page of the given size in a fresh BrowserContext, runs `fn`, then disposes the context whatever happens.
   * Waits for a free slot first; `signal` abandons the wait and is the caller's to honour inside `fn`.
   */
  async withPage<T>(opts: PageOptions, fn: (page: BrowserPage) => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.withPages(1, opts, ([page]) => fn(page), signal);
  }

  /**
   * Like `withPage` with `count` pages at once (each in its own context), for work that can be split across
   * renderer processes. The slots are taken together, so two callers never wait on each other's half.
   */
  async withPages<T>(
    count: number,
    opts: PageOptions,
    fn: (pages: BrowserPage[]) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    const n = Math.max(1, Math.min(count, this.maxPages));
    await this.slots(n, signal);
    const lanes = this.pickLanes(n);
    const used: { running: Running; context?: BrowserContext }[] = [];
    try {
      // allSettled, so that every browser and context reached is known (and released) even when another one failed.
      const opened = await Promise.allSettled(
        lanes.map(async (lane) => {
          const running = await this.browser(lane);
          running.pagesOpened++;
          running.pagesOpen++;
          const entry: { running: Running; context?: BrowserContext } = { running };
          used.push(entry);
          entry.context = await running.browser.createBrowserContext({ downloadBehavior: { policy: 'deny' } });
          return this.openPage(running, entry.context, opts);
        }),
      );
      const failed = opened.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      if (failed) throw failed.reason;
      return await fn(opened.map((o) => (o as PromiseFulfilledResult<BrowserPage>).value));
    } finally {
      await Promise.all(used.map((u) => u.context?.close().catch(() => undefined)));
      for (const { running } of used) {
        running.pagesOpen--;
        if (running.pagesOpened >= this.recycleAfter) this.retire(running);
      }
      for (const lane of lanes) this.laneLoad[lane]--;
      this.release(n);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const lanes = this.lanes.splice(0, this.lanes.length, ...this.lanes.map(() => undefined));
    await Promise.all(lanes.map(async (l) => l && this.shutdown(await l.catch(() => undefined))));
  }

  /** Lanes for `n` new pages: each goes to the lane with the fewest pages (the lowest such lane, likely warm). */
  private pickLanes(n: number): number[] {
    return Array.from({ length: n }, () => {
      const lane = this.laneLoad.indexOf(Math.min(...this.laneLoad));
      this.laneLoad[lane]++;
      return lane;
    });
  }

  private async openPage(running: Running, context: BrowserContext, opts: PageOptions): Promise<BrowserPage> {
    let page: Page;
    if (running.beginFrameControl) {
      // puppeteer's newPage cannot ask for begin-frame control; the fresh context holds no other page to confuse.
      const [target] = await Promise.all([
        context.waitForTarget((t) => t.type() === 'page', { timeout: 30_000 }),
        running.cdp.send('Target.createTarget', {
          url: 'about:blank',
          browserContextId: context.id,
          enableBeginFrameControl: true,
        }),
      ]);
      const p = await target.page();
      if (!p) throw new Error('the new target has no page');
      page = p;
    } else {
      page = await context.newPage();
    }
    // alert(), confirm(), prompt() and beforeunload stop the page's scripts until answered, so a card calling one
    // froze its render until the timeout: each is dismissed.
    page.on('dialog', (dialog) => void dialog.dismiss().catch(() => undefined));
    // A popup (window.open, target=_blank) becomes a new target in this context: close it at once.
    context.on('targetcreated', (t) => {
      if (t.type() === 'page')
        void t
          .page()
          .then((p) => (p && p !== page ? p.close() : undefined))
          .catch(() => undefined);
    });
    await page.setViewport({ width: opts.width, height: opts.height, deviceScaleFactor: 1 });
    await page.setBypassServiceWorker(true);
    const cdp = await page.createCDPSession();
    if (!running.beginFrameControl) {
      const capture = (o: CaptureOptions) => this.screenshot(cdp, o);
      return { page, cdp, beginFrameControl: false, capture, captureChanged: capture };
    }
    const changes: Changes = { drawn: false, damaged: 0, busyLeft: 0 };
    return {
      page,
      cdp,
      beginFrameControl: true,
      capture: (o) => this.inTurn(running, () => this.beginFrame(cdp, o)),
      captureChanged: (o) => this.inTurn(running, () => this.beginFrameIfDamaged(cdp, o, changes)),
    };
  }

  /**
   * Begin-frames of a browser's pages are issued one page at a time. Chromium 156's display compositor (Debian's
   * headless shell) treats a begin-frame that arrives while another page's is still being drawn as a protocol
   * violation and kills its GPU process; 147 tolerated it. The pages still run their scripts and advance their clocks
   * in parallel.
   */
  private inTurn<T>(running: Running, draw: () => Promise<T>): Promise<T> {
    const frame = running.drawing.then(draw);
    running.drawing = frame.catch(() => undefined);
    return frame;
  }

  /**
   * A begin-frame that draws without an image first: when it reports no damage the picture is the one drawn before
   * (answered as undefined, unless nothing was captured yet). A frame with a screenshot damages the next one in full
   * (a copy request redraws everything), so after the image one more begin-frame absorbs that damage; the next check's
   * damage is then the page's own. The frame is drawn without the image first, so its raster happens once; the image
   * frame and the absorbing one only composite the tiles already drawn.
   *
   * A page that changed on BUSY_AFTER frames in a row is taken as animated: its next BUSY_FRAMES frames are captured
   * without asking (two begin-frames instead of four), then it is asked again. Every frame of an animated stretch is
   * captured, so this moves no frame; a page that stops changing is seen at most BUSY_FRAMES frames later.
   */
  private async beginFrameIfDamaged(cdp: CDPSession, o: CaptureOptions, c: Changes): Promise<Buffer | undefined> {
    // The page's side of the frame first, for the same reason as in `beginFrame`.
    await cdp.send('HeadlessExperimental.beginFrame', { noDisplayUpdates: true });
    if (c.busyLeft > 0) {
      const image = await this.screenshotFrame(cdp, o);
      // The last frame of a busy stretch absorbs its screenshot's damage, so the next call can ask again.
      if (--c.busyLeft === 0) await cdp.send('HeadlessExperimental.beginFrame', {});
      return image;
    }
    const { hasDamage } = await cdp.send('HeadlessExperimental.beginFrame', {});
    if (!hasDamage && c.drawn) {
      c.damaged = 0;
      return undefined;
    }
    c.drawn = true;
    const image = await this.screenshotFrame(cdp, o);
    if (++c.damaged >= BUSY_AFTER) c.busyLeft = BUSY_FRAMES;
    else await cdp.send('HeadlessExperimental.beginFrame', {});
    return image;
  }

  /**
   * One drawn frame. A begin-frame without damage, or now and then one whose image was not ready, comes back
   * without data; asking again draws the same state, so retrying is safe.
   */
  private async beginFrame(cdp: CDPSession, o: CaptureOptions): Promise<Buffer> {
    // A begin-frame that reaches the compositor before the page's own request for a main frame draws the previous
    // page state, and from then on every frame lags one behind. A first frame without a screenshot absorbs that. It
    // runs the page's side of a frame only (noDisplayUpdates: no compositing or drawing), which took a quarter off
    // Chromium's CPU per frame of a busy 720p card.
    await cdp.send('HeadlessExperimental.beginFrame', { noDisplayUpdates: true });
    return this.screenshotFrame(cdp, o);
  }

  private async screenshotFrame(cdp: CDPSession, o: CaptureOptions): Promise<Buffer> {
    for (let attempt = 0; attempt < BEGIN_FRAME_ATTEMPTS; attempt++) {
      const res = await cdp.send('HeadlessExperimental.beginFrame', {
        screenshot: { format: o.format, quality: o.quality, optimizeForSpeed: true },
      });
      if (res.screenshotData) return Buffer.from(res.screenshotData, 'base64');
    }
    throw new DomainError(
      'internal',
      'capture_failed',
      `Chromium returned no image after ${BEGIN_FRAME_ATTEMPTS} begin-frame attempts`,
    );
  }

  private async screenshot(cdp: CDPSession, o: CaptureOptions): Promise<Buffer> {
    const res = await cdp.send('Page.captureScreenshot', {
      format: o.format,
      quality: o.quality,
      optimizeForSpeed: true,
      captureBeyondViewport: false,
    });
    return Buffer.from(res.data, 'base64');
  }

  private browser(lane: number): Promise<Running> {
    if (this.closed) return Promise.reject(new ShuttingDown());
    let current = this.lanes[lane];
    if (!current) {
      const launching = this.launch(lane);
      current = launching;
      this.lanes[lane] = launching;
      launching.catch(() => {
        if (this.lanes[lane] === launching) this.lanes[lane] = undefined;
      });
    }
    return current;
  }

  /** Stops handing out `running` for new pages: its lane launches a new browser next time. */
  private forget(running: Running): void {
    const current = this.lanes[running.lane];
    if (current)
      void current.then(
        (r) => r === running && this.lanes[running.lane] === current && (this.lanes[running.lane] = undefined),
        () => undefined,
      );
  }

  private async launch(lane: number): Promise<Running> {
    const chromium = await this.tools.require('chromium');
    // Whether this binary draws under begin-frame control is learnt by trying, once per binary: headless-shell builds
    // (npm's, Debian's chromium-headless-shell, Chrome for Testing's) do; full Chrome and Chromium, whose --headless is
    // the new headless mode, do not.
    const known = this.screenshots ? false : this.beginFrameSupport.get(chromium.path);
    if (known !== false) {
      const running = await this.start(chromium, true, lane);
      if (known || (await this.drawsOnBeginFrame(running))) {
        this.beginFrameSupport.set(chromium.path, true);
        return running;
      }
      this.log.info(
        { chromium: chromium.path },
        'Chromium does not draw under begin-frame control; capturing with screenshots',
      );
      this.beginFrameSupport.set(chromium.path, false);
      await this.shutdown(running);
    }
    return this.start(chromium, false, lane);
  }

  /** One page under begin-frame control that must give an image within a few seconds. */
  private async drawsOnBeginFrame(running: Running): Promise<boolean> {
    const context = await running.browser.createBrowserContext();
    try {
      const probe = (async () => {
        const page = await this.openPage(running, context, { width: 16, height: 16 });
        await page.capture({ format: 'png' });
        return true;
      })();
      const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), BEGIN_FRAME_PROBE_MS).unref());
      return await Promise.race([probe.catch(() => false), timeout]);
    } finally {
      await context.close().catch(() => undefined);
    }
  }

  private async start(
    chromium: ToolInfo & { path: string },
    beginFrameControl: boolean,
    lane: number,
  ): Promise<Running> {
    const userDataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-chromium-'));
    const system =
      chromium.source === 'npm'
        ? (await import('@sparticuz/chromium')).default.args.filter(
            (a) => !UNSAFE_NPM_ARGS.has(a) && !a.startsWith('--headless'),
          )
        : SYSTEM_ARGS;
    const base = beginFrameControl ? [...system, ...BEGIN_FRAME_ARGS] : system;
    const useDevShm = await devShmRoomy();
    const args = [
      ...base,
      ...(useDevShm ? [] : ['--disable-dev-shm-usage']),
      ...COMMON_ARGS,
      ...OFFLINE_ARGS,
      `--js-flags=--max-old-space-size=${this.heapMiB}`,
      `--user-data-dir=${userDataDir}`,
    ];
    if (process.getuid?.() === 0 && !args.includes('--no-sandbox')) args.push('--no-sandbox');
    let browser: Browser;
    try {
      // Loaded at the first launch: most runs of the service (and its tests) never start a browser.
      const { default: puppeteer } = await import('puppeteer-core');
      browser = await puppeteer.launch({
        executablePath: chromium.path,
        // 'shell' is the plain --headless that headless-shell builds expect; full builds take it as the new headless.
        headless: beginFrameControl ? 'shell' : true,
        args,
        // puppeteer's own --disable-dev-shm-usage; it is in `args` when it is needed.
        ignoreDefaultArgs: ['--disable-dev-shm-usage'],
        pipe: true,
        env: {
          ...process.env,
          GLIBC_TUNABLES: process.env.GLIBC_TUNABLES
            ? `${process.env.GLIBC_TUNABLES}:${MALLOC_TUNABLES}`
            : MALLOC_TUNABLES,
        },
        protocolTimeout: 120_000,
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
    } catch (err) {
      await fsp.rm(userDataDir, { recursive: true, force: true });
      throw new ToolUnavailable(`Chromium could not be started: ${(err as Error).message.split('\n')[0]}`, {
        tool: 'chromium',
      });
    }
    let cdp: CDPSession;
    try {
      cdp = await browser.target().createCDPSession();
    } catch (err) {
      await browser.close().catch(() => endProcessTree(browser.process()));
      await removeRetrying(userDataDir);
      throw new ToolUnavailable(`Chromium started but could not be driven: ${(err as Error).message.split('\n')[0]}`, {
        tool: 'chromium',
      });
    }
    // Shutdown (and the parent-exit option) ends it and removes its profile even when close() never runs.
    adoptProcess(browser.process(), { tempDirs: [userDataDir] });
    const running: Running = {
      browser,
      cdp,
      beginFrameControl,
      lane,
      userDataDir,
      pagesOpened: 0,
      pagesOpen: 0,
      retiring: false,
      drawing: Promise.resolve(),
    };
    browser.on('disconnected', () => {
      if (!running.retiring) this.log.warn('Chromium exited; the next page starts a new one');
      this.forget(running);
    });
    return running;
  }

  /** Stops handing out this browser; it closes once its last page is done. */
  private retire(running: Running): void {
    if (!running.retiring) {
      running.retiring = true;
      this.forget(running);
    }
    if (running.pagesOpen === 0) void this.shutdown(running);
  }

  private async shutdown(running: Running | undefined): Promise<void> {
    if (!running) return;
    running.retiring = true;
    await running.browser.close().catch(() => endProcessTree(running.browser.process()));
    await removeRetrying(running.userDataDir).catch(() => undefined);
  }

  /** Takes `n` page slots, waiting in FIFO order (the head waits until it fits, so large requests are not starved). */
  private slots(n: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(stopReason(signal));
    if (this.waiting.length === 0 && this.active + n <= this.maxPages) {
      this.active += n;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        n,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(stopReason(signal!));
        this.grantWaiting();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private release(n: number): void {
    this.active -= n;
    this.grantWaiting();
  }

  private grantWaiting(): void {
    for (let head = this.waiting[0]; head && this.active + head.n <= this.maxPages; head = this.waiting[0]) {
      this.waiting.shift();
      this.active += head.n;
      head.grant();
    }
  }
}
