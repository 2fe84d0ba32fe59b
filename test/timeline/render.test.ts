import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { startService, waitForJob, type TestService } from '../helpers/service.js';
import { frameAt, makeImage, makeVideo, probeFile, tempDir } from '../helpers/fixtures.js';

const W = 160;
const H = 90;
const FPS = 10;

interface RenderStatus {
  job_id: string;
  status: string;
  progress: number;
  eta_seconds: number | null;
  output_url: string | null;
  error?: string;
  element_id?: string;
}

describe('video project render', () => {
  let t: TestService;
  let board: string;
  let fixtures: string;
  const clips: Record<
    string,
    { id: string; source: string; mediaType: string; url: string; name: string; duration: number }
  > = {};

  before(async () => {
    t = await startService();
    board = await t.createBoard('Render');
    fixtures = await tempDir();
    const sources: [string, string, number?][] = [
      ['red', 'color=c=red', 440],
      ['green', 'color=c=green'],
      ['white', 'color=c=white'],
      ['bars', 'smptebars'],
    ];
    await Promise.all(
      sources.map(async ([name, source, tone]) => {
        const file = await makeVideo(path.join(fixtures, `${name}.mp4`), {
          width: W,
          height: H,
          fps: FPS,
          duration: 2,
          source,
          tone,
        });
        const up = await t.upload(board, file);
        assert.equal(up.status, 200, up.text);
        clips[name] = { id: name, source: 'REMOTE', mediaType: 'video', url: up.body.url, name, duration: 2 };
      }),
    );
  });
  after(async () => {
    await t.close();
    await fsp.rm(fixtures, { recursive: true, force: true });
  });

  const base = () => `/api/moodboards/${board}/video-projects`;

  async function project(name: string, data: Record<string, unknown>): Promise<string> {
    const created = await t.api('POST', base(), { name });
    assert.equal(created.status, 201);
    const full = { ...created.body.data, videoSize: { w: W, h: H }, clips: Object.values(clips), ...data };
    const put = await t.api('PUT', `${base()}/${created.body.id}`, { name, data: full });
    assert.equal(put.status, 200, put.text);
    return created.body.id;
  }

  async function render(pid: string, body: Record<string, unknown> = {}): Promise<RenderStatus> {
    const start = await t.api('POST', `${base()}/${pid}/render`, {
      format: 'mp4',
      codec: 'h264',
      crf: 0,
      size_preset: 'source',
      fps: FPS,
      ...body,
    });
    assert.equal(start.status, 202, start.text);
    assert.equal(start.body.status, 'queued');
    return waitForJob<RenderStatus>(t, `${base()}/${pid}/render/${start.body.job_id}`, {
      timeoutMs: 120_000,
      what: 'render',
    });
  }

  const fileOf = (url: string) =>
    path.join(t.dataDir, 'media', 'admin', board, decodeURIComponent(url.split('/').pop()!));
  const item = (id: string, clipId: string, extra: Record<string, unknown> = {}) => ({
    id,
    clipId,
    trimStart: 0,
    trimEnd: 2,
    ...extra,
  });
  const key = (position: number, value: string, easing = 'Linear') => ({ position, value, easing });
  /** Average of the three channels, for white-on-black checks. */
  const gray = (rgb: [number, number, number]) => (rgb[0] + rgb[1] + rgb[2]) / 3;

  it('layers channels first-on-top, skips invisible channels, leaves gaps black, mixes audio, adds the video to the board', async () => {
    const pid = await project('Layers', {
      channels: [
        { id: 'hidden', name: 'Hidden', visible: false, items: [item('h', 'white')] },
        { id: 'top', name: 'Top', visible: true, items: [item('g', 'green', { start: 0.2, trimEnd: 0.6 })] },
        {
          id: 'bottom',
          name: 'Bottom',
          visible: true,
          items: [item('r1', 'red', { trimEnd: 1 }), item('r2', 'red', { start: 1.5, trimStart: 1, trimEnd: 1.5 })],
        },
      ],
    });
    const done = await render(pid);
    assert.equal(done.status, 'complete', done.error);
    assert.equal(done.progress, 1);
    assert.match(done.output_url!, new RegExp(`^/media/${board}/Layers\\.mp4$`));
    const file = fileOf(done.output_url!);
    const info = await probeFile(file);
    assert.ok(Math.abs(info.duration! - 2) < 0.15, `duration ${info.duration}`);
    assert.equal(info.video?.codec, 'h264');
    assert.equal(info.video?.width, W);
    assert.equal(info.video?.height, H);
    assert.equal(info.video?.fps, FPS);
    assert.equal(info.audio?.codec, 'aac', 'the audio of the red clip is in the mix');

    const [f01, f05, f12, f18] = await Promise.all([0.1, 0.5, 1.2, 1.8].map((s) => frameAt(file, s, W, H)));
    const isRed = (c: number[]) => c[0] > 200 && c[1] < 40 && c[2] < 40;
    const isGreen = (c: number[]) => c[1] > 100 && c[0] < 40 && c[2] < 40;
    assert.ok(isRed(f01.at(80, 45)), `red at 0.1 s: ${f01.at(80, 45)}`);
    assert.ok(isGreen(f05.at(80, 45)), `the top channel covers the bottom one at 0.5 s: ${f05.at(80, 45)}`);
    assert.ok(gray(f12.at(80, 45)) < 20, `the gap is black at 1.2 s: ${f12.at(80, 45)}`);
    assert.ok(isRed(f18.at(80, 45)), `the second red item at 1.8 s: ${f18.at(80, 45)}`);

    const elements = (await t.api('GET', `/api/moodboards/${board}`)).body.elements as {
      id: string;
      type: string;
      url: string;
    }[];
    const el = elements.find((e) => e.id === done.element_id);
    assert.equal(el?.type, 'video');
    assert.equal(el?.url, done.output_url);
  });

  it('animates opacity with Linear and Smooth easing and pans by keyframes', async () => {
    const fade = (easing: string) => ({ opacity: [key(0, '0', easing), key(2, '100', easing)] });
    const pid = await project('Curves', {
      channels: [
        // A half-size box in the top half moving from panX -0.25 to 0.25 over 2 s.
        {
          id: 'pan',
          visible: true,
          items: [
            item('p', 'white', {
              zoom: 0.5,
              panY: -0.25,
              propertyKeyframes: { panX: [key(0, '-0.25'), key(2, '0.25')] },
            }),
          ],
        },
        {
          id: 'lin',
          visible: true,
          items: [item('l', 'white', { zoom: 0.5, panX: -0.25, panY: 0.25, propertyKeyframes: fade('Linear') })],
        },
        {
          id: 'smo',
          visible: true,
          items: [item('s', 'white', { zoom: 0.5, panX: 0.25, panY: 0.25, propertyKeyframes: fade('Smooth') })],
        },
      ],
    });
    const done = await render(pid);
    assert.equal(done.status, 'complete', done.error);
    const file = fileOf(done.output_url!);
    const [q, half] = await Promise.all([frameAt(file, 0.5, W, H), frameAt(file, 1.0, W, H)]);
    // A quarter of the way: Linear 25 %, Smooth (ease in and out) 3u^2-2u^3 = 15.6 %.
    const linear = gray(q.at(40, 67));
    const smooth = gray(q.at(120, 67));
    assert.ok(Math.abs(linear - 0.25 * 255) < 14, `linear opacity at 0.5 s: ${linear}`);
    assert.ok(Math.abs(smooth - 0.156 * 255) < 14, `smooth opacity at 0.5 s: ${smooth}`);
    // Half-way both curves are at 50 %.
    assert.ok(Math.abs(gray(half.at(40, 67)) - 128) < 14, `linear at 1 s: ${half.at(40, 67)}`);
    assert.ok(Math.abs(gray(half.at(120, 67)) - 128) < 14, `smooth at 1 s: ${half.at(120, 67)}`);
    // At 0.5 s panX is -0.125: the 80 px box is centred at x = 60, spanning 20..100.
    assert.ok(gray(q.at(24, 22)) > 220 && gray(q.at(96, 22)) > 220, 'inside the panned box');
    assert.ok(gray(q.at(15, 22)) < 30 && gray(q.at(105, 22)) < 30, 'outside the panned box');
  });

  it('zooms by keyframes around the transform origin and rotates', async () => {
    const pid = await project('Zoom', {
      channels: [
        {
          id: 'z',
          visible: true,
          items: [
            item('z1', 'white', {
              trimEnd: 1,
              keyframeTransformOrigin: 'top-left',
              propertyKeyframes: { zoom: [key(0, '0.5'), key(1, '1')] },
            }),
            item('z2', 'white', {
              trimEnd: 1,
              zoom: 0.5,
              propertyKeyframes: { rotation: [key(0, '0'), key(1, '90')] },
            }),
          ],
        },
      ],
    });
    const done = await render(pid);
    assert.equal(done.status, 'complete', done.error);
    const file = fileOf(done.output_url!);
    // At 0.5 s the zoom is 0.75 about the top-left corner: the box covers 0..120 x 0..67.
    const z = await frameAt(file, 0.5, W, H);
    assert.ok(gray(z.at(112, 60)) > 200, `inside the zoomed box: ${z.at(112, 60)}`);
    assert.ok(gray(z.at(128, 30)) < 40 && gray(z.at(60, 75)) < 40, 'outside the zoomed box');
    // At 1.5 s the 80x45 box has turned 45 degrees about its centre: its corners are gone, its centre and the
    // point 30 px above the centre (inside the rotated box, outside the upright one) are white.
    const r = await frameAt(file, 1.5, W, H);
    assert.ok(gray(r.at(80, 45)) > 200, 'centre of the rotated box');
    assert.ok(gray(r.at(80, 19)) > 200, `above the centre, reached only when rotated: ${r.at(80, 19)}`);
    assert.ok(gray(r.at(116, 26)) < 40, `the upright box corner is empty: ${r.at(116, 26)}`);
  });

  it('zooms a frame-filling clip in (Ken Burns) about its origin', async () => {
    const pid = await project('KenBurns', {
      channels: [
        {
          id: 'k',
          visible: true,
          items: [
            item('kb', 'bars', {
              trimEnd: 1,
              keyframeTransformOrigin: 'top-left',
              propertyKeyframes: { zoom: [key(0, '1'), key(0.5, '2')] },
            }),
          ],
        },
      ],
    });
    const done = await render(pid);
    assert.equal(done.status, 'complete', done.error);
    const file = fileOf(done.output_url!);
    // SMPTE bars: seven bars of about 23 px across the top. Unzoomed, x = 100 is in the magenta bar; zoomed 2x
    // about the top-left corner it shows source x = 50, the cyan bar.
    const [before, after] = await Promise.all([frameAt(file, 0, W, H), frameAt(file, 0.8, W, H)]);
    const [r0, g0, b0] = before.at(100, 20);
    assert.ok(r0 > 150 && g0 < 60 && b0 > 150, `magenta before the zoom: ${before.at(100, 20)}`);
    const [r1, g1, b1] = after.at(100, 20);
    assert.ok(r1 < 60 && g1 > 150 && b1 > 150, `cyan after zooming 2x: ${after.at(100, 20)}`);
  });

  it('motion blur smears a moving edge over the shutter', async () => {
    const moving = {
      channels: [
        {
          id: 'm',
          visible: true,
          items: [
            item('box', 'white', {
              trimEnd: 1,
              zoom: 0.25,
              propertyKeyframes: { panX: [key(0, '-0.5'), key(1, '0.5')] },
            }),
          ],
        },
      ],
    };
    const soft = (frame: Awaited<ReturnType<typeof frameAt>>) => {
      let n = 0;
      for (let x = 0; x < W; x++) {
        const v = gray(frame.at(x, 45));
        if (v > 40 && v < 215) n++;
      }
      return n;
    };
    const sharp = await render(await project('Sharp', { ...moving, motionBlurEnabled: false }));
    const blurred = await render(
      await project('Blurred', { ...moving, motionBlurEnabled: true, motionBlurShutter: 180 }),
    );
    assert.equal(sharp.status, 'complete', sharp.error);
    assert.equal(blurred.status, 'complete', blurred.error);
    const sharpFile = fileOf(sharp.output_url!);
    const blurFile = fileOf(blurred.output_url!);
    assert.equal((await probeFile(blurFile)).video?.fps, FPS, 'sub-frames are folded back to the output rate');
    const a = soft(await frameAt(sharpFile, 0.5, W, H));
    const b = soft(await frameAt(blurFile, 0.5, W, H));
    // 160 px/s at 10 fps with a 180 degree shutter: each edge is smeared over about 8 px.
    assert.ok(a <= 3, `sharp edges without motion blur: ${a} soft pixels`);
    assert.ok(b >= 8, `smeared edges with motion blur: ${b} soft pixels`);
  });

  it('writes webm/vp9, mov/prores and mp4/h265', async () => {
    const pid = await project('Codecs', {
      channels: [{ id: 'c', visible: true, items: [item('c', 'red', { trimEnd: 1 })] }],
    });
    for (const [format, codec, probeName] of [
      ['webm', 'vp9', 'vp9'],
      ['mov', 'prores', 'prores'],
      ['mp4', 'h265', 'hevc'],
    ]) {
      const done = await render(pid, { format, codec, crf: 30 });
      assert.equal(done.status, 'complete', `${format}/${codec}: ${done.error}`);
      assert.ok(done.output_url!.endsWith(`.${format}`));
      const info = await probeFile(fileOf(done.output_url!));
      assert.equal(info.video?.codec, probeName);
      assert.ok(Math.abs(info.duration! - 1) < 0.15, `${format} duration ${info.duration}`);
    }
  });

  it('fails the job with a message naming the item for missing media, unknown clips and bad values', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        {
          clips: [...Object.values(clips), { ...clips.red, id: 'gone', url: `/media/${board}/missing.mp4` }],
          channels: [{ id: 'c', name: 'Main', items: [item('it-missing', 'gone')] }],
        },
        /item "it-missing" of channel "Main".*missing/,
      ],
      [{ channels: [{ id: 'c', items: [item('it-unknown', 'nope')] }] }, /item "it-unknown".*unknown clip "nope"/],
      [
        { channels: [{ id: 'c', items: [item('it-bad', 'red', { propertyKeyframes: { zoom: [key(0, '1.5x')] } })] }] },
        /item "it-bad".*zoom keyframe 0.*not a number/,
      ],
      [
        {
          channels: [
            { id: 'c', items: [item('it-ease', 'red', { propertyKeyframes: { opacity: [key(0, '5', 'Bounce')] } })] },
          ],
        },
        /item "it-ease".*unknown easing "Bounce"/,
      ],
    ];
    for (const [data, message] of cases) {
      const done = await render(await project('Broken', data));
      assert.equal(done.status, 'error');
      assert.match(done.error!, message);
      assert.equal(done.output_url, null);
    }
  });

  it('cancelling kills ffmpeg and leaves no partial file', async () => {
    const still = await makeImage(path.join(fixtures, 'still.png'), { width: W, height: H });
    const up = await t.upload(board, still);
    const image = { id: 'still', source: 'REMOTE', mediaType: 'image', url: up.body.url, name: 'still', duration: 600 };
    const pid = await project('Long', {
      clips: [image],
      channels: [{ id: 'c', items: [{ id: 'i', clipId: 'still', trimStart: 0, trimEnd: 600 }] }],
    });
    const start = await t.api('POST', `${base()}/${pid}/render`, { size_preset: '720p', fps: 30 });
    const jobId = start.body.job_id as string;
    const running = await waitForJob<RenderStatus>(t, `${base()}/${pid}/render/${jobId}`, {
      until: (s) => s.status === 'running' && typeof s.eta_seconds === 'number',
      what: 'progress with an eta measured from the rate',
    });
    assert.ok(running.progress > 0 && running.progress < 1);
    assert.ok((running.eta_seconds as number) > 0);
    const boardDir = path.join(t.dataDir, 'media', 'admin', board);
    assert.ok(
      (await fsp.readdir(boardDir)).some((f) => f.startsWith('.tmp-') && f.endsWith('Long.mp4')),
      'ffmpeg writes a temp file while running',
    );
    assert.equal((await t.api('POST', `/api/jobs/${jobId}/cancel`)).status, 200);
    const final = await waitForJob<RenderStatus>(t, `${base()}/${pid}/render/${jobId}`, {
      until: (s) => s.status !== 'running',
      timeoutMs: 20_000,
      what: 'cancel',
    });
    assert.equal(final.status, 'cancelled');
    const left = await fsp.readdir(boardDir);
    assert.ok(!left.some((f) => f.includes('Long')), `no partial output left: ${left.join(', ')}`);
  });
});
