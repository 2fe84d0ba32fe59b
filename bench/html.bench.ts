/**
 * HTML render benchmark: frames per second of POST /api/html/render for the cards of issue 27, beside timecut
 * (installed from npm into a temp folder, without its browser download, and pointed at the same Chromium and ffmpeg)
 * on the same card:
 *
 * - static: 10 s of 1920x1080 at 60 fps of a card where nothing moves (a note: gradient, heading, quote, swatches);
 * - accent: the same card with one small moving element (an 8 px bar crossing the width), 10 s of 1920x1080 at 60 fps;
 * - heavy: 5 s of 1280x720 at 60 fps of a heavy card (36 boxes moving, rotating and changing colour by CSS keyframes, a
 *   spinner, a canvas drawn from rAF, static text);
 * - light: 5 s of 1280x720 at 60 fps of a light card with a CSS and a requestAnimationFrame animation (`--case=light`).
 *
 * Timing accuracy: the cards move one bar by CSS and (light, heavy) one by rAF across the width; the bar's position in
 * sampled frames, decoded from the video, gives the time the frame really shows. On Linux it also prints where the CPU
 * went during our render (ffmpeg, the service's own process, Chromium and the rest), which is what bounds the frame
 * rate.
 *
 *   npx tsx bench/html.bench.ts                    static, accent, heavy: ours and timecut
 *   npx tsx bench/html.bench.ts --quick            1 s per case
 *   npx tsx bench/html.bench.ts --no-timecut
 *   npx tsx bench/html.bench.ts --case=heavy,light only these cards (--card= is the same)
 *   npx tsx bench/html.bench.ts --ranges=1,2,4     ours once per HTML_RENDER_RANGES setting (default: the service's)
 *   npx tsx bench/html.bench.ts --chromium=/usr/bin/chromium-headless-shell,/tmp/chromium
 *                                                  each case with each of these Chromium binaries (default: located)
 *
 * The machine's load average (1 minute, as `uptime` prints it) is printed beside each run: on a shared machine the
 * frames per second follow the share of the cores a render gets, the CPU per frame does not.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Tools } from '../src/tools/locate.js';
import { startService } from '../test/helpers/service.js';
import { accentCard, BAR, benchCard, heavyCard, staticCard } from './html-cards.js';
import { descendsFrom, processTable } from './proc.js';

const run = promisify(execFile);
const args = new Set(process.argv.slice(2));
const QUICK = args.has('--quick');
const ALL_CASES = [
  { card: 'static', width: 1920, height: 1080, fps: 60, seconds: 10, bands: [] },
  { card: 'accent', width: 1920, height: 1080, fps: 60, seconds: 10, bands: ['css'] },
  { card: 'heavy', width: 1280, height: 720, fps: 60, seconds: 5, bands: ['css', 'raf'] },
  { card: 'light', width: 1280, height: 720, fps: 60, seconds: 5, bands: ['css', 'raf'] },
] as const;
const option = (name: string) => [...args].find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const chosenCards = (option('case') ?? option('card'))?.split(',') ?? ['static', 'accent', 'heavy'];
const CASES = ALL_CASES.filter((c) => chosenCards.includes(c.card)).map((c) => ({
  ...c,
  seconds: QUICK ? 1 : c.seconds,
}));
type Case = (typeof CASES)[number];
/** HTML_RENDER_RANGES settings to run ours with (undefined: the service's own choice). */
const RANGES = option('ranges')?.split(',') ?? [undefined];

function cardHtml(c: Case): string {
  if (c.card === 'heavy') return heavyCard(c.width, c.seconds);
  if (c.card === 'light') return benchCard(c.width, c.seconds);
  if (c.card === 'accent') return accentCard(c.width, c.seconds);
  return staticCard();
}
const TIMECUT_VERSION = '0.3.3';

/** Column of the bar's centre in one row band of frame `index`, or undefined when no bar is visible. */
async function barCentre(
  ffmpeg: string,
  file: string,
  index: number,
  width: number,
  height: number,
  bandTop: number,
): Promise<number | undefined> {
  const y = Math.round(height * bandTop) & ~1;
  const { stdout } = await run(
    ffmpeg,
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-i',
      file,
      '-vf',
      `select=eq(n\\,${index}),crop=${width}:2:0:${y}`,
      '-vframes',
      '1',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'gray',
      'pipe:1',
    ],
    { encoding: 'buffer', maxBuffer: 16 * 1024 * 1024 },
  );
  const row = (stdout as unknown as Buffer).subarray(0, width);
  let sum = 0;
  let weight = 0;
  for (let x = 0; x < row.length; x++) {
    const w = Math.max(0, row[x] - 128);
    sum += w * x;
    weight += w;
  }
  return weight > 0 ? sum / weight : undefined;
}

/** Largest difference, in ms, between the time a sampled frame shows (from the bar) and the time it should show. */
async function timingError(
  ffmpeg: string,
  file: string,
  c: Case,
  frames: number,
): Promise<{ css: number; raf: number }> {
  const travel = c.width - BAR;
  const samples = [1, 2, 3, 4].map((k) => Math.floor((k * frames) / 5));
  const worst = { css: NaN, raf: NaN };
  for (const f of samples) {
    const want = f / c.fps;
    for (const [key, band] of [
      ['css', 0.2],
      ['raf', 0.7],
    ] as const) {
      if (!(c.bands as readonly string[]).includes(key)) continue;
      const centre = await barCentre(ffmpeg, file, f, c.width, c.height, band);
      const shown = centre === undefined ? Infinity : ((centre - BAR / 2 + 0.5) / travel) * c.seconds;
      if (Number.isNaN(worst[key])) worst[key] = 0;
      worst[key] = Math.max(worst[key], Math.abs(shown - want) * 1000);
    }
  }
  return worst;
}

async function installTimecut(): Promise<string> {
  const dir = path.join(os.tmpdir(), `bms-bench-timecut-${TIMECUT_VERSION}`);
  const entry = path.join(dir, 'node_modules', 'timecut', 'index.js');
  if (fs.existsSync(entry)) return dir;
  await fsp.mkdir(dir, { recursive: true });
  await fsp.writeFile(path.join(dir, 'package.json'), '{"private":true}');
  // timecut depends on puppeteer 2, whose install step would download its own Chromium: skip it, we bring ours.
  await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `timecut@${TIMECUT_VERSION}`], {
    cwd: dir,
    env: { ...process.env, PUPPETEER_SKIP_DOWNLOAD: '1', PUPPETEER_SKIP_CHROMIUM_DOWNLOAD: '1' },
    timeout: 300_000,
  });
  return dir;
}

/**
 * Runs timecut in its own process (CommonJS, its own puppeteer) and returns the wall time in seconds and the CPU
 * seconds of the process and everything it started (sampled from /proc while it runs, since its Chromium's helper
 * processes are not all reaped by it; undefined off Linux).
 */
async function runTimecut(
  dir: string,
  opts: {
    url: string;
    output: string;
    width: number;
    height: number;
    fps: number;
    seconds: number;
    chromium: string;
    ffmpeg: string;
  },
): Promise<{ seconds: number; cpu?: number }> {
  const script = `
    const timecut = require(${JSON.stringify(path.join(dir, 'node_modules', 'timecut'))});
    const started = Date.now();
    timecut({
      url: ${JSON.stringify(opts.url)}, output: ${JSON.stringify(opts.output)},
      viewport: { width: ${opts.width}, height: ${opts.height} }, fps: ${opts.fps}, duration: ${opts.seconds},
      executablePath: ${JSON.stringify(opts.chromium)}, ffmpegPath: ${JSON.stringify(opts.ffmpeg)},
      launchArguments: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--hide-scrollbars', '--font-render-hinting=none'],
      pipeMode: true, screenshotType: 'png', quiet: true,
    }).then(() => { console.log(JSON.stringify({ seconds: (Date.now() - started) / 1000 })); process.exit(0); },
            (err) => { console.error(String(err && err.stack || err)); process.exit(1); });`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 600_000);
    // Last CPU time seen of every process of the tree; a process's own time only, so none is counted twice.
    const seen = new Map<string, number>();
    const sample = () => {
      const procs = processTable();
      for (const [pid, p] of procs)
        if (descendsFrom(procs, pid, String(child.pid))) seen.set(pid, (Number(p[11]) + Number(p[12])) / 100);
    };
    const sampler = process.platform === 'linux' ? setInterval(sample, 200) : undefined;
    child.on('close', (code) => {
      clearTimeout(timer);
      clearInterval(sampler);
      const line = out.trim().split('\n').pop() ?? '';
      const cpu = sampler ? [...seen.values()].reduce((a, b) => a + b, 0) : undefined;
      if (code === 0 && line.startsWith('{'))
        resolve({ seconds: (JSON.parse(line) as { seconds: number }).seconds, cpu });
      else reject(new Error(`timecut exited with ${code}: ${err.trim().split('\n').slice(-3).join(' | ')}`));
    });
  });
}

/**
 * CPU seconds from Linux's /proc (undefined elsewhere): the whole machine's busy time, this process's own (the service
 * runs in it), that of its finished children (ffmpeg, ffprobe), and
 * that of its live descendants with their finished children (the warm Chromium and its renderers). Unlike the busy
 * time, the last three do not grow with other work on the machine.
 */
function cpuSeconds(): { busy: number; self: number; children: number; tree: number } | undefined {
  try {
    const ticks = 100; // USER_HZ, fixed on Linux
    const [user, nice, system, , , irq, softirq] = fs
      .readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const procs = processTable();
    const f = procs.get(String(process.pid))!.map(Number);
    let tree = 0;
    for (const [pid, p] of procs)
      if (descendsFrom(procs, pid, String(process.pid)))
        tree += (Number(p[11]) + Number(p[12]) + Number(p[13]) + Number(p[14])) / ticks;
    return {
      busy: (user + nice + system + irq + softirq) / ticks,
      self: (f[11] + f[12]) / ticks,
      children: (f[13] + f[14]) / ticks,
      tree,
    };
  } catch {
    return undefined;
  }
}

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
/** The 1-minute load average, as `uptime` shows it. */
const load = () => fmt(os.loadavg()[0], 1);

async function main(): Promise<void> {
  const chosen = [...args].find((a) => a.startsWith('--chromium='))?.slice('--chromium='.length);
  const rows: string[] = [];
  for (const chromiumPath of chosen ? chosen.split(',') : [undefined]) await benchChromium(chromiumPath, rows);
  console.log('\n| Case | Renderer | Chromium | frames/s (load) | CPU ms/frame | worst error CSS / rAF (ms) |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
}

async function benchChromium(chromiumPath: string | undefined, rows: string[]): Promise<void> {
  const env = chromiumPath ? { CHROMIUM_PATH: chromiumPath } : {};
  const tools = new Tools({ ...process.env, ...env });
  const chromium = await tools.require('chromium');
  const ffmpeg = (await tools.require('ffmpeg')).path;
  const browserName = `${chromium.version} (${chromium.path})`;
  console.log(`\nHTML render benchmark: ${os.cpus().length} cores, ${browserName}`);

  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-bench-html-'));
  let timecutDir: string | undefined;
  let timecutSkipped: string | undefined;
  if (args.has('--no-timecut')) timecutSkipped = 'skipped (--no-timecut)';
  else {
    try {
      timecutDir = await installTimecut();
    } catch (err) {
      timecutSkipped = `could not be installed: ${(err as Error).message.split('\n')[0]}`;
    }
  }
  try {
    for (const c of CASES) {
      const frames = Math.round(c.fps * c.seconds);
      const html = cardHtml(c);
      const label = `${c.card} card, ${c.width}x${c.height} @ ${c.fps} fps, ${frames} frames`;
      console.log(`\n${label}`);
      let ours = NaN;
      let ourCpu = NaN;
      let ourLoad = 'n/a';
      let ourErr = { css: NaN, raf: NaN };
      for (const ranges of RANGES) {
        const s = await startService({ ...env, ...(ranges ? { HTML_RENDER_RANGES: ranges } : {}) });
        try {
          const board = await s.createBoard('bench');
          // Warm the browser pool, as a running service has it.
          await s.api('POST', '/api/html/render-frame', {
            html: '<p>warm</p>',
            width: 64,
            height: 64,
            fps: 1,
            board_id: board,
          });
          ourLoad = load();
          const cpuBefore = cpuSeconds();
          const started = Date.now();
          const res = await s.api('POST', '/api/html/render', {
            html,
            width: c.width,
            height: c.height,
            fps: c.fps,
            duration: c.seconds,
            format: 'mp4',
            title: `bench ${c.card} ${c.width}x${c.height}`,
            board_id: board,
          });
          const seconds = (Date.now() - started) / 1000;
          const cpuAfter = cpuSeconds();
          if (res.status !== 200) throw new Error(`render failed: ${res.status} ${res.text}`);
          ours = frames / seconds;
          const ourFile = (await s.service.ctx.media.resolveUrl(res.body.url)).path;
          ourErr = await timingError(ffmpeg, ourFile, c, frames);
          console.log(
            `  ours${ranges ? ` (HTML_RENDER_RANGES=${ranges})` : ''}: ${fmt(seconds, 2)} s, ${fmt(ours)} frames/s (load ${ourLoad}); worst timing error CSS ${fmt(ourErr.css, 0)} ms, rAF ${fmt(ourErr.raf, 0)} ms`,
          );
          if (cpuBefore && cpuAfter) {
            const busy = cpuAfter.busy - cpuBefore.busy;
            const ff = cpuAfter.children - cpuBefore.children;
            const node = cpuAfter.self - cpuBefore.self;
            const browser = cpuAfter.tree - cpuBefore.tree;
            ourCpu = ff + node + browser;
            const perFrame = (v: number) => `${fmt(v, 2)} s (${fmt((v * 1000) / frames, 0)} ms/frame)`;
            console.log(
              `  CPU:     ffmpeg ${perFrame(ff)}, service ${perFrame(node)}, Chromium ${perFrame(browser)}, other work on the machine ${perFrame(busy - ourCpu)}; ${fmt(busy / seconds, 2)} of ${os.cpus().length} cores busy`,
            );
          }
          rows.push(
            `| ${label} | ours${ranges ? `, ${ranges} ranges` : ''} | ${chromium.version} | ${fmt(ours)} (${ourLoad}) | ${fmt((ourCpu * 1000) / frames, 0)} | ${fmt(ourErr.css, 0)} / ${fmt(ourErr.raf, 0)} |`,
          );
        } finally {
          await s.close();
        }
      }

      if (!timecutDir) {
        console.log(`  timecut: ${timecutSkipped}`);
        continue;
      }
      const cardFile = path.join(work, `card-${c.card}-${c.width}.html`);
      await fsp.writeFile(cardFile, html);
      const output = path.join(work, `timecut-${c.card}-${c.width}.mp4`);
      try {
        const theirLoad = load();
        const timecut = await runTimecut(timecutDir, {
          url: `file://${cardFile}`,
          output,
          ...c,
          chromium: chromium.path,
          ffmpeg,
        });
        const tSeconds = timecut.seconds;
        const theirCpu = timecut.cpu ?? NaN;
        const theirs = frames / tSeconds;
        const theirErr = await timingError(ffmpeg, output, c, frames);
        console.log(
          `  timecut: ${fmt(tSeconds, 2)} s, ${fmt(theirs)} frames/s (load ${theirLoad}); worst timing error CSS ${fmt(theirErr.css, 0)} ms, rAF ${fmt(theirErr.raf, 0)} ms`,
        );
        console.log(`  ratio:   ${fmt(ours / theirs, 2)}x timecut's frames per second (the last of ours)`);
        // CPU per frame does not depend on what else runs on the machine, frames per second do.
        const ms = (v: number) => fmt((v * 1000) / frames, 0);
        console.log(`  CPU per frame: timecut ${ms(theirCpu)} ms (${fmt(theirCpu / tSeconds, 2)} cores)`);
        rows.push(
          `| ${label} | timecut ${TIMECUT_VERSION} | ${chromium.version} | ${fmt(theirs)} (${theirLoad}) | ${ms(theirCpu)} | ${fmt(theirErr.css, 0)} / ${fmt(theirErr.raf, 0)} |`,
        );
      } catch (err) {
        console.log(`  timecut: could not run here: ${(err as Error).message}`);
      }
    }
  } finally {
    await fsp.rm(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
