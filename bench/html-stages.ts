/**
 * Where a frame of a card goes (Linux): one page of the located Chromium steps a card on the virtual clock and
 * captures it in several ways, and the CPU each Chromium process type spent per frame is read from /proc; then the
 * captured frames go through ffmpeg with the render's own arguments, as PNG and as raw RGBA, to split ffmpeg's part.
 *
 *   npx tsx bench/html-stages.ts [--card=heavy|light|accent|static] [--frames=60] [--width=1280 --height=720]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import sharp from 'sharp';
import pino from 'pino';
import { BrowserPool } from '../src/tools/browser.js';
import { Tools } from '../src/tools/locate.js';
import { VIRTUAL_CLOCK_SCRIPT } from '../src/render/virtual-clock.js';
import { CARD_URL } from '../src/render/sandbox.js';
import { accentCard, benchCard, heavyCard, staticCard } from './html-cards.js';
import { descendsFrom, processTable } from './proc.js';

const arg = (name: string, def: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? def;

/** CPU seconds of this process's descendants, by Chromium process type (browser, renderer, gpu-process, ...). */
function chromiumCpu(): Map<string, number> {
  const stat = processTable();
  const out = new Map<string, number>();
  for (const [pid, f] of stat) {
    if (!descendsFrom(stat, pid, String(process.pid))) continue;
    let type = 'browser';
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const m = /--type=([a-z-]+)/.exec(cmd);
      if (m) type = m[1];
      if (!/chrom/i.test(cmd)) type = 'other';
      // Processes forked by a zygote keep its command line: the unsandboxed zygote's child is the GPU process
      // (the display compositor), the sandboxed zygote's children are the renderers.
      if (type === 'zygote' && f[1] !== String(process.pid)) {
        const parent = fs.readFileSync(`/proc/${f[1]}/cmdline`, 'utf8');
        if (parent.includes('--type=zygote')) type = parent.includes('--no-zygote-sandbox') ? 'gpu' : 'renderer';
      }
    } catch {
      continue;
    }
    out.set(type, (out.get(type) ?? 0) + (Number(f[11]) + Number(f[12])) / 100);
  }
  return out;
}

const diff = (a: Map<string, number>, b: Map<string, number>) =>
  [...b].map(([k, v]) => [k, v - (a.get(k) ?? 0)] as const).filter(([, v]) => v > 0.005);

async function ffmpegCpu(
  ffmpeg: string,
  input: string[],
  frames: Buffer[],
  outArgs: string[],
): Promise<{ seconds: number; cpu: number }> {
  const started = Date.now();
  const child = spawn(ffmpeg, ['-hide_banner', '-loglevel', 'error', ...input, '-i', 'pipe:0', ...outArgs], {
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  for (const f of frames) if (!child.stdin.write(f)) await new Promise((r) => child.stdin.once('drain', r));
  child.stdin.end();
  const cpu = await new Promise<number>((resolve) => {
    // Read the child's CPU just before it is reaped.
    let last = 0;
    const t = setInterval(() => {
      try {
        const s = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8');
        const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
        last = (Number(f[11]) + Number(f[12])) / 100;
      } catch {
        // gone
      }
    }, 20);
    child.on('exit', () => {
      clearInterval(t);
      resolve(last);
    });
  });
  return { seconds: (Date.now() - started) / 1000, cpu };
}

async function main(): Promise<void> {
  const card = arg('card', 'heavy');
  const frames = Number(arg('frames', '60'));
  const width = Number(arg('width', '1280'));
  const height = Number(arg('height', '720'));
  const fps = 60;
  const html =
    card === 'heavy'
      ? heavyCard(width, 5)
      : card === 'accent'
        ? accentCard(width, 5)
        : card === 'static'
          ? staticCard()
          : benchCard(width, 5);
  const tools = new Tools(process.env);
  const chromium = await tools.require('chromium');
  const ffmpeg = (await tools.require('ffmpeg')).path;
  const pool = new BrowserPool(tools, pino({ level: 'silent' }));
  console.log(`${card} card ${width}x${height}, ${frames} frames per stage, ${chromium.version}`);
  const captured: Buffer[] = [];
  const jpegs: Buffer[] = [];
  try {
    await pool.withPage({ width, height }, async (lent) => {
      console.log(`begin-frame control: ${lent.beginFrameControl}`);
      const { page, cdp } = lent;
      await page.evaluateOnNewDocument(VIRTUAL_CLOCK_SCRIPT);
      // Navigated to, as a render does: setContent writes into the open about:blank document, which never runs the
      // new-document script (no virtual clock).
      await page.setRequestInterception(true);
      page.on('request', (r) =>
        r.url() === CARD_URL ? void r.respond({ status: 200, contentType: 'text/html', body: html }) : void r.abort(),
      );
      await page.goto(CARD_URL, { waitUntil: 'load' });
      if ((await page.evaluate('typeof window.__bmsClock')) !== 'object') throw new Error('no virtual clock');
      let frame = 0;
      const advance = async () => {
        frame++;
        await cdp.send('Runtime.evaluate', {
          expression: `window.__bmsClock.advanceTo(${(frame * 1000) / fps}, ${!lent.beginFrameControl})`,
          awaitPromise: true,
          returnByValue: true,
        });
      };
      const bf = (params: object) =>
        cdp.send('HeadlessExperimental.beginFrame', params as never) as Promise<{ screenshotData?: string }>;
      const stages: [string, () => Promise<number>][] = [
        ['clock only (advanceTo)', async () => (await advance(), 0)],
        [
          'clock + begin-frame noDisplayUpdates',
          async () => (await advance(), await bf({ noDisplayUpdates: true }), 0),
        ],
        [
          'clock + begin-frame that draws, no image',
          async () => (await advance(), await bf({ noDisplayUpdates: true }), await bf({}), 0),
        ],
      ];
      if (lent.beginFrameControl)
        stages.push([
          'clock + jpeg q95 as rendered now (drawn, image, absorbing frame)',
          async () => {
            await advance();
            await bf({ noDisplayUpdates: true });
            const { hasDamage } = (await bf({})) as { hasDamage: boolean };
            if (!hasDamage) return 0;
            for (;;) {
              const r = await bf({ screenshot: { format: 'jpeg', quality: 95, optimizeForSpeed: true } });
              if (r.screenshotData) {
                await bf({});
                const b = Buffer.from(r.screenshotData, 'base64');
                jpegs.push(b);
                return b.length;
              }
            }
          },
        ]);
      if (lent.beginFrameControl)
        for (const [name, shot] of [
          ['png (as rendered today)', { format: 'png', optimizeForSpeed: true }],
          ['png, no optimizeForSpeed', { format: 'png' }],
          ['jpeg q100', { format: 'jpeg', quality: 100, optimizeForSpeed: true }],
          ['jpeg q90', { format: 'jpeg', quality: 90, optimizeForSpeed: true }],
          ['webp q100', { format: 'webp', quality: 100, optimizeForSpeed: true }],
        ] as const)
          stages.push([
            `clock + capture ${name}`,
            async () => {
              await advance();
              await bf({ noDisplayUpdates: true });
              for (;;) {
                const r = await bf({ screenshot: shot });
                if (r.screenshotData) {
                  const b = Buffer.from(r.screenshotData, 'base64');
                  if (name.startsWith('png (')) captured.push(b);
                  return b.length;
                }
              }
            },
          ]);
      else
        stages.push([
          'clock + screenshot png',
          async () => {
            await advance();
            const b = await lent.capture({ format: 'png' });
            captured.push(b);
            return b.length;
          },
        ]);
      for (const [name, step] of stages) {
        for (let i = 0; i < 5; i++) await step(); // warm
        const before = chromiumCpu();
        const started = process.cpuUsage();
        const t0 = Date.now();
        let bytes = 0;
        for (let i = 0; i < frames; i++) bytes += await step();
        const wall = (Date.now() - t0) / frames;
        const node = process.cpuUsage(started);
        const per = diff(before, chromiumCpu())
          .map(([k, v]) => `${k} ${((v * 1000) / frames).toFixed(1)}`)
          .join(', ');
        console.log(
          `  ${name.padEnd(44)} wall ${wall.toFixed(1)} ms/frame; Chromium CPU ms/frame: ${per}; node ${((node.user + node.system) / 1000 / frames).toFixed(1)}${bytes ? `; ${Math.round(bytes / frames / 1024)} KiB/frame` : ''}`,
        );
      }
    });
  } finally {
    await pool.close();
  }
  // ffmpeg on the frames captured as PNG: the render's arguments (main + 480p proxy), then the same from raw RGBA.
  const frames60 = captured.slice(0, frames);
  const render = [
    '-filter_complex',
    '[0:v]format=yuv420p,split=2[main][small];[small]scale=-2:480:flags=bilinear[proxy]',
    '-map',
    '[main]',
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '18', '-pix_fmt', 'yuv420p', '-threads', '2'],
    '-f',
    'null',
    '-',
    '-map',
    '[proxy]',
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '26', '-pix_fmt', 'yuv420p', '-threads', '1'],
    '-f',
    'null',
    '-',
  ];
  const png = ['-f', 'image2pipe', '-framerate', String(fps), '-c:v', 'png'];
  const raw = await Promise.all(frames60.map((f) => sharp(f).ensureAlpha().raw().toBuffer()));
  const rgba = ['-f', 'rawvideo', '-pix_fmt', 'rgba', '-s', `${width}x${height}`, '-framerate', String(fps)];
  const decodeOnly = ['-f', 'null', '-'];
  const jpeg = ['-f', 'image2pipe', '-framerate', String(fps), '-c:v', 'mjpeg'];
  for (const [name, input, data, out] of [
    ['ffmpeg JPEG q95 in, render encode', jpeg, jpegs.slice(0, frames), render],
    ['ffmpeg PNG decode only', png, frames60, decodeOnly],
    ['ffmpeg raw RGBA in, nothing out', rgba, raw, decodeOnly],
    ['ffmpeg PNG in, render encode', png, frames60, render],
    ['ffmpeg raw RGBA in, render encode', rgba, raw, render],
  ] as const) {
    const r = await ffmpegCpu(ffmpeg, [...input], [...data], [...out]);
    console.log(
      `  ${name.padEnd(44)} CPU ${((r.cpu * 1000) / frames60.length).toFixed(1)} ms/frame (wall ${((r.seconds * 1000) / frames60.length).toFixed(1)})`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
