// Timeline render benchmark: a 1080p60 project with three channels (a static base clip, a full-frame clip zooming in
// by keyframes while it fades in, a picture-in-picture fading out) rendered by the service's render job, beside one
// hand-written ffmpeg command for the same edit (zoompan + fade, the usual idioms), with the same encoder settings.
// Usage: npx tsx bench/timeline.bench.ts [--seconds 4] [--fps 60]
// The figure is `--seconds 30`; the default renders 4 s so a run stays within a few minutes on 2 cores.
import { execFile } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { eventually, startService } from '../test/helpers/service.js';
import { ffmpegPath, makeVideo, probeFile, tempDir } from '../test/helpers/fixtures.js';

const run = promisify(execFile);
const { values: opt } = parseArgs({
  options: { seconds: { type: 'string', default: '4' }, fps: { type: 'string', default: '60' } },
});
const D = Number(opt.seconds);
const FPS = Number(opt.fps);
const W = 1920;
const H = 1080;
const PIP = { w: 576, h: 324, x: 1152, y: 108 };

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function main(): Promise<void> {
  const t = await startService({ JOB_CONCURRENCY: '1' });
  const fixtures = await tempDir('bms-bench-timeline-');
  try {
    const board = await t.createBoard('Bench');
    const dir = path.join(t.dataDir, 'media', 'admin', board);
    await fsp.mkdir(dir, { recursive: true });
    const sources = ['testsrc2', 'smptehdbars', 'rgbtestsrc'];
    console.log(`making three ${D} s ${W}x${H}@${FPS} source clips...`);
    const files = [];
    for (const [i, source] of sources.entries()) {
      files.push(
        await makeVideo(path.join(dir, `clip${i}.mp4`), { width: W, height: H, fps: FPS, duration: D, source }),
      );
    }
    const clips = files.map((f, i) => ({
      id: `c${i}`,
      source: 'REMOTE',
      mediaType: 'video',
      url: `/media/${board}/${path.basename(f)}`,
      name: `c${i}`,
      duration: D,
    }));
    const key = (position: number, value: string) => ({ position, value, easing: 'Linear' });
    const data = {
      version: 2,
      videoSize: { w: W, h: H },
      motionBlurEnabled: false,
      motionBlurShutter: 180,
      clips,
      channels: [
        {
          id: 'pip',
          visible: true,
          items: [
            {
              id: 'p',
              clipId: 'c2',
              trimStart: 0,
              trimEnd: D,
              zoom: PIP.w / W,
              panX: (PIP.x + PIP.w / 2) / W - 0.5,
              panY: (PIP.y + PIP.h / 2) / H - 0.5,
              propertyKeyframes: { opacity: [key(0, '100'), key(D, '0')] },
            },
          ],
        },
        {
          id: 'zoom',
          visible: true,
          items: [
            {
              id: 'z',
              clipId: 'c1',
              trimStart: 0,
              trimEnd: D,
              propertyKeyframes: { zoom: [key(0, '1'), key(D, '1.5')], opacity: [key(0, '0'), key(D / 2, '100')] },
            },
          ],
        },
        { id: 'base', visible: true, items: [{ id: 'b', clipId: 'c0', trimStart: 0, trimEnd: D }] },
      ],
      activeChannelId: 'base',
      currentTime: 0,
    };
    const created = (await t.api('POST', `/api/moodboards/${board}/video-projects`, { name: 'Bench' })).body;
    await t.api('PUT', `/api/moodboards/${board}/video-projects/${created.id}`, { name: 'Bench', data });

    const t0 = performance.now();
    const start = await t.api('POST', `/api/moodboards/${board}/video-projects/${created.id}/render`, {
      format: 'mp4',
      codec: 'h264',
      crf: 23,
      size_preset: '1080p',
      fps: FPS,
    });
    const done = await eventually(
      async () => {
        const s = (
          await t.api('GET', `/api/moodboards/${board}/video-projects/${created.id}/render/${start.body.job_id}`)
        ).body;
        return ['complete', 'error', 'cancelled'].includes(s.status) ? s : undefined;
      },
      3_600_000,
      'render',
    );
    const serviceMs = performance.now() - t0;
    if (done.status !== 'complete') throw new Error(`render failed: ${done.error}`);
    const job = (await t.api('GET', `/api/jobs/${start.body.job_id}`)).body;
    const serviceGraph = (job.result as { filter_complex: string }).filter_complex;

    const handOut = path.join(fixtures, 'hand.mp4');
    const frames = Math.round(D * FPS);
    const graph = [
      `[0:v]setpts=PTS-STARTPTS[b]`,
      `[1:v]zoompan=z='1+0.5*on/${frames}':x='iw/2-iw/zoom/2':y='ih/2-ih/zoom/2':d=1:s=${W}x${H}:fps=${FPS},format=yuva420p,fade=t=in:st=0:d=${D / 2}:alpha=1[z]`,
      `[2:v]scale=${PIP.w}:${PIP.h},format=yuva420p,fade=t=out:st=0:d=${D}:alpha=1[p]`,
      `[b][z]overlay=eof_action=pass[bz]`,
      `[bz][p]overlay=x=${PIP.x}:y=${PIP.y}:eof_action=pass,format=yuv420p[v]`,
    ].join(';');
    const handArgs = [
      '-hide_banner',
      '-loglevel',
      'error',
      ...files.flatMap((f) => ['-i', f]),
      '-filter_complex',
      graph,
      '-map',
      '[v]',
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-crf',
      '23',
      '-pix_fmt',
      'yuv420p',
      '-t',
      String(D),
      handOut,
    ];
    const t1 = performance.now();
    await run(await ffmpegPath(), handArgs, { maxBuffer: 16 * 1024 * 1024 });
    const handMs = performance.now() - t1;

    const serviceFile = path.join(dir, decodeURIComponent(done.output_url.split('/').pop()));
    const [a, b] = await Promise.all([probeFile(serviceFile), probeFile(handOut)]);
    console.log(`\nservice filter_complex: ${serviceGraph}`);
    console.log(
      `\nhand-written command: ffmpeg ${handArgs.map((x) => (/[\s;'[\]]/.test(x) ? JSON.stringify(x) : x)).join(' ')}\n`,
    );
    console.log(
      `project: ${D} s, ${W}x${H}@${FPS}, 3 channels, keyframed zoom (1 -> 1.5) and opacity on two of them, libx264 veryfast crf 23`,
    );
    console.log(
      `service render job (enqueue -> complete): ${seconds(serviceMs)}  realtime factor ${(D / (serviceMs / 1000)).toFixed(2)}x  output ${a.video?.width}x${a.video?.height}@${a.video?.fps} ${a.duration?.toFixed(2)} s`,
    );
    console.log(
      `hand-written ffmpeg command:              ${seconds(handMs)}  realtime factor ${(D / (handMs / 1000)).toFixed(2)}x  output ${b.video?.width}x${b.video?.height}@${b.video?.fps} ${b.duration?.toFixed(2)} s`,
    );
    console.log(`service / hand-written: ${(serviceMs / handMs).toFixed(2)}x (target <= 1.2x)`);
  } finally {
    await t.close();
    await fsp.rm(fixtures, { recursive: true, force: true });
  }
}

await main();
