import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { probeFile, tempDir, videoPackets, whereVideosDiffer } from '../helpers/fixtures.js';
import { startService, type TestService } from '../helpers/service.js';
import { animationCardOn, CARD_SIZE, decodedFrames, pixelsOf, stillAt, STILLS_CARD, wrongCells } from './cards.js';
const FPS = 10;

/** Mean absolute difference of two frames, per channel value (0..255). */
const meanDiff = (a: Buffer, b: Buffer) => {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i] - b[i]);
  return sum / a.length;
};

/**
 * A clock that changes only every other second: a timer checks the time every 250 ms and, when the 2-second period
 * changed, shows it (background red in even periods, blue in odd ones, and the period's number).
 */
const CLOCK_CARD = `<!doctype html><html><head><style>
  html, body { margin: 0; width: 100vw; height: 100vh; overflow: hidden; font: 40px sans-serif; color: #fff; }
</style></head><body><div id="n"></div><script>
  let shown = -1;
  const tick = () => {
    const period = Math.floor((Date.now() - Date.UTC(2025, 0, 1)) / 2000);
    if (period === shown) return;
    shown = period;
    document.body.style.background = period % 2 ? 'rgb(0,0,255)' : 'rgb(255,0,0)';
    document.getElementById('n').textContent = String(period);
  };
  tick();
  setInterval(tick, 250);
</script></body></html>`;

describe('HTML renders in frame ranges, and frames that repeat', () => {
  let one: TestService;
  let split: TestService;
  const boards = new Map<TestService, string>();
  const cards = new Map<TestService, string>();
  let fixtures: string;

  const render = async (s: TestService, body: Record<string, unknown>) => {
    const res = await s.api('POST', '/api/html/render', { ...CARD_SIZE, fps: FPS, board_id: boards.get(s), ...body });
    assert.equal(res.status, 200, res.text);
    return { body: res.body, file: (await s.service.ctx.media.resolveUrl(res.body.url)).path };
  };

  before(async () => {
    // The same card on a service that renders a video in one range and on one that splits it into three.
    one = await startService({ HTML_RENDER_RANGES: '1' });
    split = await startService({ HTML_RENDER_RANGES: '3' });
    fixtures = await tempDir();
    for (const s of [one, split]) {
      const board = await s.createBoard('Ranges');
      boards.set(s, board);
      cards.set(s, await animationCardOn(s, board, fixtures));
    }
  });

  after(async () => {
    await Promise.all([one.close(), split.close()]);
    await fsp.rm(fixtures, { recursive: true, force: true });
  });

  it('joins three ranges without a seam: every frame as in one range, every animation at its time', async () => {
    // 2.4 s at 10 fps: ranges of frames 0-7, 8-15 and 16-23; the first seam falls in the middle of every animation.
    const duration = 2.4;
    for (const format of ['mp4', 'webm'] as const) {
      const whole = await render(one, { html: cards.get(one), duration, format, title: `whole ${format}` });
      const parts = await render(split, { html: cards.get(split), duration, format, title: `split ${format}` });
      assert.equal(parts.body.frames, 24);
      const a = await decodedFrames(whole.file, CARD_SIZE.width, CARD_SIZE.height);
      const b = await decodedFrames(parts.file, CARD_SIZE.width, CARD_SIZE.height);
      assert.equal(a.length, 24, `${format}: frames of the one-range render`);
      assert.equal(b.length, 24, `${format}: frames of the split render`);
      const probe = await probeFile(parts.file);
      assert.ok(Math.abs((probe.duration ?? 0) - duration) < 0.05, `${format}: duration ${probe.duration}`);
      assert.equal(probe.video?.fps, FPS);
      for (let f = 0; f < 24; f++) {
        // The same pictures, encoded apart: at most the encoder's own difference (the ranges start on key frames).
        const diff = meanDiff(a[f], b[f]);
        assert.ok(diff < 3, `${format} frame ${f}: split and whole differ by ${diff.toFixed(2)} on average`);
        assert.deepEqual(wrongCells(pixelsOf(b[f], CARD_SIZE.width), f / FPS, 16), [], `${format} frame ${f}`);
      }
    }
  });

  it('gives the same bytes run after run for a given number of ranges, proxy included', async () => {
    // Taller than 480 px, so a proxy is made (and joined) too.
    const body = { html: cards.get(split), duration: 2.4, format: 'mp4', width: 96, height: 496 };
    const first = await render(split, { ...body, title: 'same 1' });
    const second = await render(split, { ...body, title: 'same 2' });
    assert.ok(first.body.proxy_url);
    if (!(await fsp.readFile(first.file)).equals(await fsp.readFile(second.file)))
      assert.fail(`the videos differ: ${await whereVideosDiffer(first.file, second.file)}`);
    const proxyOf = async (url: string) => fsp.readFile((await split.service.ctx.media.resolveUrl(url)).path);
    assert.ok((await proxyOf(first.body.proxy_url)).equals(await proxyOf(second.body.proxy_url)), 'the proxies differ');
    const probe = await probeFile((await split.service.ctx.media.resolveUrl(first.body.proxy_url)).path);
    assert.equal(probe.video?.height, 480);
    assert.ok(Math.abs((probe.duration ?? 0) - 2.4) < 0.05, `proxy duration ${probe.duration}`);
  });

  it('holds long still stretches as repeated units: every frame a sample at its time, each change on its frame', async () => {
    // 13 s at 10 fps: changes at frames 37, 41 and 80; stills of 36, 38 and 49 frames (held: 3 units of 1 s or more).
    const frames = 130;
    for (const s of [one, split]) {
      for (const format of ['mp4', 'webm'] as const) {
        const label = `${s === one ? 'one range' : 'three ranges'} ${format}`;
        const { body, file } = await render(s, { html: STILLS_CARD, duration: 13, format, title: `stills ${format}` });
        assert.equal(body.frames, frames);
        const decoded = await decodedFrames(file, CARD_SIZE.width, CARD_SIZE.height);
        assert.equal(decoded.length, frames, label);
        decoded.forEach((frame, f) => {
          const got = pixelsOf(frame, CARD_SIZE.width)(80, 60);
          const want = stillAt(f / FPS);
          assert.ok(
            got.every((v, i) => Math.abs(v - want[i]) <= 16),
            `${label} frame ${f}: rgb(${got.join(', ')}), want rgb(${want.join(', ')})`,
          );
        });
        // Constant frame rate: one packet per frame, each 1/fps long, at its frame's time.
        const packets = await videoPackets(file);
        assert.equal(packets.length, frames, `${label}: packets`);
        packets.forEach((p, f) => assert.ok(Math.abs(p.pts - f / FPS) < 0.002, `${label}: packet ${f} at ${p.pts}`));
        if (s === one && format === 'mp4') {
          // Each held unit starts with a key frame where nothing changed, which no encoder would place by itself:
          // 3 units of 11 frames from frame 4 (the live piece keeps 3 frames after frame 0, its least, and a
          // remainder of 1), 3 of 12 from 44 (a remainder of 2), 4 of 11 from 86 (3 after frame 80, and 2).
          const keys = packets.flatMap((p, f) => (p.key ? [f] : []));
          for (const f of [4, 15, 26, 44, 56, 68, 86, 97, 108, 119])
            assert.ok(keys.includes(f), `key frames ${keys.join(', ')}: ${f} is missing`);
        }
      }
    }
    // Held or not, the same card gives the same bytes; a proxy is held with its video.
    const tall = { html: STILLS_CARD, duration: 13, format: 'mp4', width: 96, height: 496 };
    const first = await render(split, { ...tall, title: 'stills tall 1' });
    const second = await render(split, { ...tall, title: 'stills tall 2' });
    assert.ok((await fsp.readFile(first.file)).equals(await fsp.readFile(second.file)), 'the videos differ');
    const proxy = (await split.service.ctx.media.resolveUrl(first.body.proxy_url)).path;
    assert.equal((await videoPackets(proxy)).length, frames, 'proxy packets');
    const width = (await probeFile(proxy)).video!.width;
    const proxyFrames = await decodedFrames(proxy, width, 480);
    assert.equal(proxyFrames.length, frames);
    proxyFrames.forEach((frame, f) => {
      const got = pixelsOf(frame, width)(width / 2, 240);
      const want = stillAt(f / FPS);
      assert.ok(
        got.every((v, i) => Math.abs(v - want[i]) <= 16),
        `proxy frame ${f}: rgb(${got.join(', ')})`,
      );
    });
  });

  it('shows a clock that changes every other second on exactly the frames where it changes', async () => {
    // 5 s at 10 fps over three ranges: the picture changes at frames 20 and 40 only; every other frame repeats.
    for (const s of [one, split]) {
      const { file } = await render(s, { html: CLOCK_CARD, duration: 5, format: 'mp4', title: 'clock' });
      const frames = await decodedFrames(file, CARD_SIZE.width, CARD_SIZE.height);
      assert.equal(frames.length, 50);
      frames.forEach((frame, f) => {
        const [r, , b] = pixelsOf(frame, CARD_SIZE.width)(150, 110);
        const blue = Math.floor(f / 20) % 2 === 1;
        assert.ok(
          blue ? b > 200 && r < 55 : r > 200 && b < 55,
          `frame ${f}: rgb(${r}, ?, ${b}), want ${blue ? 'blue' : 'red'}`,
        );
      });
    }
  });
});
