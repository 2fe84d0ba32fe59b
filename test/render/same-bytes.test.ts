import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ffmpegPath, makeImage, makeVideo, tempDir } from '../helpers/fixtures.js';
import { eventually, startService, waitForJob, type TestService } from '../helpers/service.js';
import { project } from '../motion/preview-project.js';

/**
 * The same render gives the same bytes as before the house was restructured (issue 31): a card (video in both formats
 * and a frame), a timeline, a mockup, a preview and the media operations whose encoder settings moved into the one
 * table. `same-bytes.json` holds the SHA-256 of each file as the code before the change rendered it, with the
 * toolchain that rendered it; on another toolchain (another ffmpeg or Chromium gives other bytes) the test says so and
 * skips. RECORD_SAME_BYTES=1 writes the file instead of comparing.
 */

const HERE = path.dirname(fileURLToPath(import.meta.url));
const RECORD = path.join(HERE, 'same-bytes.json');

interface Recorded {
  toolchain: string;
  files: Record<string, string>;
}

const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** ffmpeg's version line and the Chromium the service uses: what the bytes depend on besides the code. */
async function toolchain(t: TestService): Promise<string> {
  const ffmpeg = execFileSync(await ffmpegPath(), ['-version'], { encoding: 'utf8' }).split('\n')[0];
  const chromium = await t.service.ctx.tools.info('chromium');
  return `${ffmpeg} | ${chromium.path} ${chromium.version}`;
}

const CARD = `<!doctype html><html><body style="margin:0;background:#123">
<div id="b" style="position:absolute;left:0;top:8px;width:16px;height:16px;background:#f80"></div>
<script>const b = document.getElementById('b'); const f = (t) => { b.style.left = (t / 20) % 48 + 'px';
requestAnimationFrame(f); }; requestAnimationFrame(f);</script></body></html>`;

describe('renders give the same bytes as before the restructuring', () => {
  let t: TestService;
  let board: string;
  let fixtures: string;
  const got: Record<string, string> = {};
  const fileOf = (url: string) =>
    path.join(t.dataDir, 'media', 'admin', board, decodeURIComponent(url.split('/').pop()!));

  before(async () => {
    t = await startService();
    board = await t.createBoard('same bytes');
    fixtures = await tempDir();
  });
  after(async () => {
    if (process.env.RECORD_SAME_BYTES)
      await fsp.writeFile(RECORD, JSON.stringify({ toolchain: await toolchain(t), files: got }, null, 2) + '\n');
    await t.close();
    await fsp.rm(fixtures, { recursive: true, force: true });
  });

  async function check(name: string, file: string, ctx: { skip(msg: string): void }) {
    got[name] = sha(file);
    if (process.env.RECORD_SAME_BYTES) return;
    const recorded = JSON.parse(await fsp.readFile(RECORD, 'utf8')) as Recorded;
    const here = await toolchain(t);
    if (recorded.toolchain !== here) {
      ctx.skip(`recorded with ${recorded.toolchain}, this machine has ${here}`);
      return;
    }
    assert.equal(got[name], recorded.files[name], `${name}: other bytes than before`);
  }

  it('html card: video (mp4, webm) and a frame', async (ctx) => {
    for (const format of ['mp4', 'webm']) {
      const res = await t.api('POST', '/api/html/render', {
        board_id: board,
        html: CARD,
        width: 64,
        height: 48,
        fps: 10,
        duration: 1,
        format,
        title: `card ${format}`,
      });
      assert.equal(res.status, 200, res.text);
      await check(`card.${format}`, fileOf(res.body.url), ctx);
    }
    const frame = await t.api('POST', '/api/html/render-frame', {
      board_id: board,
      html: CARD,
      width: 64,
      height: 48,
      fps: 10,
      frame: 7,
      title: 'card frame',
    });
    assert.equal(frame.status, 200, frame.text);
    await check('card-frame.png', fileOf(frame.body.url), ctx);
  });

  it('timeline: mp4/h264 and webm/vp9', async (ctx) => {
    const clip = await makeVideo(path.join(fixtures, 'bars.mp4'), {
      width: 96,
      height: 64,
      fps: 10,
      duration: 1,
      source: 'smptebars',
      tone: 440,
    });
    const up = await t.upload(board, clip);
    assert.equal(up.status, 200, up.text);
    const base = `/api/moodboards/${board}/video-projects`;
    const created = await t.api('POST', base, { name: 'Timeline' });
    const data = {
      ...created.body.data,
      videoSize: { w: 96, h: 64 },
      clips: [{ id: 'bars', source: 'REMOTE', mediaType: 'video', url: up.body.url, name: 'bars', duration: 1 }],
      channels: [{ id: 'c', visible: true, items: [{ id: 'i', clipId: 'bars', trimStart: 0, trimEnd: 1 }] }],
    };
    assert.equal((await t.api('PUT', `${base}/${created.body.id}`, { name: 'Timeline', data })).status, 200);
    for (const [format, codec] of [
      ['mp4', 'h264'],
      ['webm', 'vp9'],
    ]) {
      const start = await t.api('POST', `${base}/${created.body.id}/render`, {
        format,
        codec,
        crf: 30,
        size_preset: 'source',
        fps: 10,
      });
      assert.equal(start.status, 202, start.text);
      const done = await waitForJob<{ status: string; output_url: string; error?: string }>(
        t,
        `${base}/${created.body.id}/render/${start.body.job_id}`,
        { timeoutMs: 120_000, what: 'render' },
      );
      assert.equal(done.status, 'complete', done.error);
      await check(`timeline.${format}`, fileOf(done.output_url), ctx);
    }
  });

  it('mockup: mp4 and transparent webm', async (ctx) => {
    const green = await makeImage(path.join(fixtures, 'green.png'), {
      width: 120,
      height: 90,
      source: 'color=c=0x00ff00',
    });
    const up = await t.upload(board, green);
    const base = `/api/moodboards/${board}/mockup-projects`;
    const created = await t.api('POST', base, { name: 'Mockup', device: 'iphone' });
    const put = await t.api('PUT', `${base}/${created.body.id}`, {
      ...created.body,
      screen_source_url: up.body.url,
      background: { mode: 'solid', params: { color: '#0000ff' } },
      duration_seconds: 1,
    });
    assert.equal(put.status, 200, put.text);
    for (const [format, transparent] of [
      ['mp4', false],
      ['webm', true],
    ] as const) {
      const res = await t.api('POST', '/api/mockup/render', {
        board_id: board,
        project_id: created.body.id,
        format,
        size_preset: 'square',
        fps: 2,
        ...(transparent ? { transparent_background: true } : {}),
      });
      assert.equal(res.status, 202, res.text);
      const done = await eventually(
        async () => {
          const s = await t.api('GET', `/api/mockup/render/${res.body.job_id}`);
          return ['complete', 'error', 'cancelled'].includes(s.body.status) ? s.body : undefined;
        },
        240_000,
        'mockup render',
      );
      assert.equal(done.status, 'complete', done.error);
      await check(`mockup.${format}`, fileOf(done.output_url), ctx);
    }
  });

  it('motion preview: a frame and a video', async (ctx) => {
    const up = await t.upload(board, { name: 'template.aep', data: project() }, { addToBoard: true });
    assert.equal(up.status, 200, up.text);
    const preview = (body: Record<string, unknown>) =>
      t.api('POST', '/api/motion/projects/preview', { board_id: board, element_id: up.body.element.id, ...body });
    const png = await preview({ composition: 'Main', time: 0.5 });
    assert.equal(png.status, 200, png.text);
    await check('preview.png', fileOf(png.body.url), ctx);
    const mp4 = await preview({ composition: 'Main', format: 'mp4', fps: 10, duration: 1 });
    assert.equal(mp4.status, 200, mp4.text);
    await check('preview.mp4', fileOf(mp4.body.url), ctx);
  });

  it('media operations: convert-video (vp9, h264, h265, prores) and trim (mp4, webm)', async (ctx) => {
    const clip = await makeVideo(path.join(fixtures, 'clip.mp4'), {
      width: 64,
      height: 48,
      fps: 10,
      duration: 1,
      source: 'testsrc',
      tone: 330,
    });
    const up = await t.upload(board, clip, { addToBoard: true });
    const webm = await makeVideo(path.join(fixtures, 'clip.webm'), { width: 64, height: 48, fps: 10, duration: 1 });
    const upWebm = await t.upload(board, webm, { addToBoard: true });
    assert.equal(up.status, 200, up.text);
    assert.equal(upWebm.status, 200, upWebm.text);
    for (const [format, codec] of [
      ['webm', 'vp9'],
      ['mp4', 'h264'],
      ['mp4', 'h265'],
      ['mov', 'prores'],
    ]) {
      const res = await t.api('POST', '/api/convert-video', {
        board_id: board,
        element_id: up.body.element.id,
        format,
        codec,
      });
      assert.equal(res.status, 200, res.text);
      await check(`convert.${codec}.${format}`, fileOf(res.body.url), ctx);
    }
    for (const [name, id] of [
      ['mp4', up.body.element.id],
      ['webm', upWebm.body.element.id],
    ]) {
      const res = await t.api('POST', '/api/trim-media', {
        board_id: board,
        element_id: id,
        start_seconds: 0.2,
        end_seconds: 0.8,
      });
      assert.equal(res.status, 200, res.text);
      await check(`trim.${name}`, fileOf(res.body.url), ctx);
    }
  });
});
