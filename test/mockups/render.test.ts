import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { eventually, startService, type TestService } from '../helpers/service.js';
import { ffmpeg, makeImage, probeFile, tempDir, whereVideosDiffer } from '../helpers/fixtures.js';
import { drawDevice } from '../../src/mockups/devices.js';
import { distance, extent, rgbaFrame } from './frames.js';

const DEVICES = [
  'iphone',
  'iphone-pro-max',
  'ipad',
  'ipad-mini',
  'macbook-air',
  'macbook-pro',
  'imac',
  'double-iphone',
  'browser',
  'grid',
  'no-device',
] as const;
const SIZE = 1080;
const GREEN = [0, 255, 0];
const BLUE = [0, 0, 255];

interface Status {
  job_id: string;
  status: string;
  progress: number;
  output_url: string | null;
  error?: string;
  element_id?: string;
}

describe('mockup render', () => {
  let t: TestService;
  let board: string;
  let fixtures: string;
  const urls: Record<string, string> = {};

  before(async () => {
    t = await startService();
    board = await t.createBoard('Mockup renders');
    fixtures = await tempDir();
    const green = await makeImage(path.join(fixtures, 'green.png'), {
      width: 400,
      height: 300,
      source: 'color=c=0x00ff00',
    });
    // Vertical stripes 40 px wide: sharp edges everywhere, to measure blur.
    const stripes = await makeImage(path.join(fixtures, 'stripes.png'), {
      width: SIZE,
      height: SIZE,
      source: 'color=c=white',
    });
    await ffmpeg([
      '-i',
      stripes,
      '-vf',
      "geq=lum='if(lt(mod(X,80),40),255,0)':cb=128:cr=128",
      '-frames:v',
      '1',
      path.join(fixtures, 'stripes2.png'),
    ]);
    // One colour per second: red, green, blue (3 s, 10 fps).
    const colours = path.join(fixtures, 'colours.mp4');
    await ffmpeg([
      ...['red', 'lime', 'blue'].flatMap((c) => ['-f', 'lavfi', '-i', `color=c=${c}:s=160x120:r=10:d=1`]),
      '-filter_complex',
      '[0:v][1:v][2:v]concat=n=3:v=1:a=0',
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      '-g',
      '30',
      colours,
    ]);
    // 8 frames at 10 fps, frame n coloured by the bits of n (red 1, green 2, blue 4).
    const indexed = path.join(fixtures, 'indexed.mp4');
    await ffmpeg([
      '-f',
      'lavfi',
      '-i',
      "color=c=black:s=160x120:r=10:d=0.8,format=rgb24,geq=r='255*mod(N,2)':g='255*mod(floor(N/2),2)':b='255*mod(floor(N/4),2)'",
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      '-g',
      '4',
      indexed,
    ]);
    for (const [name, file] of [
      ['indexed', indexed],
      ['green', green],
      ['stripes', path.join(fixtures, 'stripes2.png')],
      ['colours', colours],
    ]) {
      const up = await t.upload(board, file);
      assert.equal(up.status, 200, up.text);
      urls[name] = up.body.url;
    }
  });
  after(async () => {
    await t.close();
    await fsp.rm(fixtures, { recursive: true, force: true });
  });

  const base = () => `/api/moodboards/${board}/mockup-projects`;
  const fileOf = (url: string) =>
    path.join(t.dataDir, 'media', 'admin', board, decodeURIComponent(url.split('/').pop()!));

  async function project(device: string, state: Record<string, unknown>): Promise<string> {
    const created = await t.api('POST', base(), { name: `${device} test`, device });
    assert.equal(created.status, 201, created.text);
    const put = await t.api('PUT', `${base()}/${created.body.id}`, {
      ...created.body,
      screen_source_url: urls.green,
      background: { mode: 'solid', params: { color: '#0000ff' } },
      ...state,
    });
    assert.equal(put.status, 200, put.text);
    return created.body.id;
  }

  async function start(pid: string, body: Record<string, unknown> = {}): Promise<string> {
    const res = await t.api('POST', '/api/mockup/render', {
      board_id: board,
      project_id: pid,
      format: 'mp4',
      size_preset: 'square',
      fps: 1,
      ...body,
    });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.status, 'queued');
    return res.body.job_id;
  }

  const poll = (job: string) =>
    eventually(
      async () => {
        const res = await t.api<Status>('GET', `/api/mockup/render/${job}`);
        assert.equal(res.status, 200, res.text);
        return ['complete', 'error', 'cancelled'].includes(res.body.status) ? res.body : undefined;
      },
      240_000,
      'mockup render',
    );

  async function render(pid: string, body: Record<string, unknown> = {}): Promise<string> {
    const done = await poll(await start(pid, body));
    assert.equal(done.status, 'complete', done.error);
    assert.equal(done.progress, 1);
    assert.ok(done.output_url && done.element_id);
    return fileOf(done.output_url);
  }

  for (const device of DEVICES) {
    it(`draws ${device} with the screen source filling its screen`, async () => {
      const file = await render(await project(device, { duration_seconds: 1 }));
      const frame = await rgbaFrame(file, 0, SIZE, SIZE);
      const drawing = drawDevice(device, SIZE, SIZE, () => '');
      const ox = (SIZE - drawing.width) / 2;
      const oy = (SIZE - drawing.height) / 2;
      assert.equal(drawing.screens.length, device === 'grid' ? 6 : device === 'double-iphone' ? 2 : 1);
      for (const s of drawing.screens) {
        const x0 = ox + s.x;
        const y0 = oy + s.y;
        // Centre and just inside each edge: the content covers the whole screen area.
        const inside: [number, number][] = [
          [x0 + s.w / 2, y0 + s.h / 2],
          [x0 + 4, y0 + s.h / 2],
          [x0 + s.w - 5, y0 + s.h / 2],
          [x0 + s.w * 0.2, y0 + 4],
          [x0 + s.w / 2, y0 + s.h - 5],
        ];
        for (const [x, y] of inside)
          assert.ok(distance(frame.at(x, y), GREEN) < 40, `${device} screen at ${x},${y}: ${frame.at(x, y)}`);
        if (device !== 'no-device') {
          const bezel = frame.at(x0 + s.w / 2, y0 - 2);
          assert.ok(
            distance(bezel, BLUE) > 100 && distance(bezel, GREEN) > 100,
            `${device} bezel above the screen: ${bezel}`,
          );
        }
      }
      assert.ok(distance(frame.at(3, 3), BLUE) < 30, `background in the corner: ${frame.at(3, 3)}`);
    });
  }

  it('moves in 3D: a y rotation narrows the silhouette, z toward the viewer enlarges it', async () => {
    const pid = await project('iphone', {
      duration_seconds: 3,
      keyframes: [
        { time: 0, easing: 'Linear', transform: { rotation: { y: 0 }, position: { z: 0 } } },
        { time: 1, easing: 'Hold', transform: { rotation: { y: 65 }, position: { z: 0 } } },
        { time: 2, easing: 'Linear', transform: { rotation: { y: 0 }, position: { z: 800 } } },
      ],
    });
    const file = await render(pid);
    const widths = [];
    for (let f = 0; f < 3; f++) {
      const [l, r] = extent(await rgbaFrame(file, f, SIZE, SIZE), SIZE / 2, BLUE);
      widths.push(r - l);
    }
    // Hold keeps the value of its key until the next: t = 1 is the rotated key itself.
    assert.ok(widths[1] < widths[0] * 0.6, `rotated ${widths[1]} vs ${widths[0]}`);
    // Perspective 2000 units: z = 800 draws 2000 / 1200 = 1.67 times as large.
    assert.ok(Math.abs(widths[2] / widths[0] - 2000 / 1200) < 0.06, `z 800: ${widths[2]} vs ${widths[0]}`);
  });

  it('depth of field blurs the far background, pre-blurred once', async () => {
    const pid = await project('iphone', {
      duration_seconds: 2,
      background: { mode: 'image', params: { url: urls.stripes } },
      dof: { enabled: false, focus_distance: 2000, aperture: 40 },
      keyframes: [
        { time: 0, easing: 'Linear', dof: { enabled: false } },
        { time: 1, easing: 'Linear', dof: { enabled: true } },
      ],
    });
    const file = await render(pid);
    const sharpness = async (f: number) => {
      const frame = await rgbaFrame(file, f, SIZE, SIZE);
      let max = 0;
      for (let x = 1; x < 200; x++) max = Math.max(max, Math.abs(frame.at(x, 60)[0] - frame.at(x - 1, 60)[0]));
      return max;
    };
    const [off, on] = [await sharpness(0), await sharpness(1)];
    assert.ok(off > 150, `in focus, stripe edges are steps: ${off}`);
    // Background at 4000 units, focus 2000, aperture 40: sigma 20 px; adjacent pixels differ by a few levels.
    assert.ok(on < 25, `out of focus, stripe edges are ramps: ${on}`);
  });

  it("shows the screen video's frame for t, looped when shorter", async () => {
    const pid = await project('no-device', { duration_seconds: 5, screen_source_url: urls.colours });
    const file = await render(pid, { fps: 2 });
    const expected = [
      [255, 0, 0],
      [0, 255, 0],
      [0, 0, 255],
    ];
    const drawing = drawDevice('no-device', SIZE, SIZE, () => '');
    for (let f = 0; f < 10; f++) {
      const px = (await rgbaFrame(file, f, SIZE, SIZE)).at(SIZE / 2, (SIZE - drawing.height) / 2 + drawing.height / 2);
      const want = expected[Math.floor(f / 2) % 3];
      assert.ok(distance(px, want) < 60, `frame ${f} (t = ${f / 2} s): ${px}, want ${want}`);
    }
  });

  it('shows the screen video frame by frame: rendered frame f is source frame f, looped', async () => {
    const pid = await project('no-device', { duration_seconds: 2, screen_source_url: urls.indexed });
    const file = await render(pid, { fps: 10 });
    const drawing = drawDevice('no-device', SIZE, SIZE, () => '');
    for (let f = 0; f < 20; f++) {
      const px = (await rgbaFrame(file, f, SIZE, SIZE)).at(SIZE / 2, (SIZE - drawing.height) / 2 + drawing.height / 2);
      const n = f % 8;
      const want = [n & 1 ? 255 : 0, n & 2 ? 255 : 0, n & 4 ? 255 : 0];
      assert.ok(distance(px, want) < 60, `frame ${f}: ${px}, want source frame ${n} ${want}`);
    }
  });

  for (const format of ['webm', 'mov'] as const) {
    it(`transparent ${format}: alpha 0 outside the device, 255 on the screen`, async () => {
      const pid = await project('iphone', { duration_seconds: 1 });
      const file = await render(pid, { format, transparent_background: true });
      const info = await probeFile(file);
      const stream = info.raw.streams?.find((s) => s.codec_type === 'video');
      if (format === 'webm') {
        assert.equal(info.video?.codec, 'vp9');
        assert.equal(stream?.tags?.alpha_mode ?? stream?.tags?.ALPHA_MODE, '1');
      } else {
        assert.equal(info.video?.codec, 'prores');
        assert.match(info.video?.pixFmt ?? '', /^yuva444p/);
      }
      const frame = await rgbaFrame(file, 0, SIZE, SIZE);
      assert.equal(frame.at(3, 3)[3], 0, `corner ${frame.at(3, 3)}`);
      assert.equal(frame.at(SIZE - 4, SIZE - 4)[3], 0);
      const centre = frame.at(SIZE / 2, SIZE / 2);
      assert.equal(centre[3], 255);
      assert.ok(distance(centre, GREEN) < 40, `screen ${centre}`);
    });
  }

  it('refuses mp4 with a transparent background, naming the formats that can', async () => {
    const pid = await project('ipad', {});
    const res = await t.api('POST', '/api/mockup/render', {
      board_id: board,
      project_id: pid,
      format: 'mp4',
      size_preset: '1080p',
      fps: 30,
      transparent_background: true,
    });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /webm, mov/);
    const bad = await t.api('POST', '/api/mockup/render', {
      board_id: board,
      project_id: pid,
      format: 'mp4',
      size_preset: '1080p',
      fps: 61,
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.details[0].field, 'body.fps');
  });

  it('refuses a project whose screen file is missing, naming the url', async () => {
    const missing = `/media/${board}/nothing-here.png`;
    const pid = await project('iphone', { screen_source_url: missing });
    const res = await t.api('POST', '/api/mockup/render', {
      board_id: board,
      project_id: pid,
      format: 'mp4',
      size_preset: 'square',
      fps: 1,
    });
    assert.equal(res.status, 400);
    assert.ok(res.body.error.message.includes(missing), res.text);
    assert.equal(res.body.error.details[0].field, 'screen_source_url');
  });

  it('renders the same project to the same bytes, with an image or a video screen', async () => {
    for (const screen of [urls.green, urls.indexed]) await sameBytes(screen);
  });

  async function sameBytes(screen: string): Promise<void> {
    const pid = await project('macbook-air', {
      screen_source_url: screen,
      duration_seconds: 2,
      dof: { enabled: true, focus_distance: 2000, aperture: 30 },
      background: { mode: 'gradient', params: { from: '#112233', to: '#ddeeff', angle: 45 } },
      keyframes: [
        // The focus follows the device toward the camera: the device stays sharp, the background is blurred.
        {
          time: 0,
          easing: 'Smooth',
          transform: { rotation: { x: 10, y: -20 }, position: { z: 0 } },
          dof: { focus_distance: 2000 },
        },
        { time: 1, easing: 'EaseOut', background: { mode: 'image', params: { url: urls.stripes } } },
        {
          time: 2,
          easing: 'Linear',
          transform: { rotation: { x: -5, y: 25 }, position: { z: 300 } },
          dof: { focus_distance: 1700 },
        },
      ],
    });
    const files = [await render(pid, { fps: 2 }), await render(pid, { fps: 2 })];
    const hashes = await Promise.all(
      files.map(async (f) =>
        createHash('sha256')
          .update(await fsp.readFile(f))
          .digest('hex'),
      ),
    );
    if (hashes[0] !== hashes[1])
      assert.fail(`two renders with the screen ${screen}: ${await whereVideosDiffer(files[0], files[1])}`);
  }

  it('cancel stops the render and leaves no partial file', async () => {
    const pid = await project('imac', { duration_seconds: 30 });
    const before = await fsp.readdir(path.join(t.dataDir, 'media', 'admin', board));
    const job = await start(pid, { size_preset: '1080p', fps: 30 });
    await eventually(
      async () => {
        const res = await t.api<Status>('GET', `/api/mockup/render/${job}`);
        return res.body.status === 'running' && res.body.progress > 0.06 ? true : undefined;
      },
      120_000,
      'frames being captured',
    );
    const cancel = await t.api('POST', `/api/jobs/${job}/cancel`);
    assert.ok(cancel.status < 300, cancel.text);
    const done = await poll(job);
    assert.equal(done.status, 'cancelled');
    assert.equal(done.output_url, null);
    assert.deepEqual(await fsp.readdir(path.join(t.dataDir, 'media', 'admin', board)), before);
    // Its prepared screen and backgrounds were in the job's scratch folder, never in the media root.
    assert.ok(!(await fsp.readdir(path.join(t.dataDir, 'media'))).includes('mockup-renders'));
    assert.ok(!(await fsp.readdir(path.join(t.dataDir, 'tmp')).catch(() => [] as string[])).includes(`job-${job}`));
  });
});
