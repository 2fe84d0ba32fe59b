import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { ffmpeg, probeFile, tempDir } from '../helpers/fixtures.js';
import { eventually, startService, waitForJob, type TestService } from '../helpers/service.js';
import { png, project } from './preview-project.js';
/**
 * POST /api/motion/projects/preview end to end over HTTP, on a project our RIFX writer builds: frames checked by the
 * colour of pixels where the layers must be (keyframed position, parenting, precomp timing, a track matte, text),
 * footage found on the board, replaced by a media edit or drawn as a placeholder, videos probed, the job with
 * progress and cancel, add_to_board and determinism.
 */

/** Whether fontconfig knows DejaVu Sans Bold here (the title's font). */
const dejavuBold = (() => {
  try {
    return execFileSync('fc-list', [':postscriptname=DejaVuSans-Bold', 'file'], { encoding: 'utf8' }).trim() !== '';
  } catch {
    return false;
  }
})();
describe('motion preview: drawing compositions', () => {
  let t: TestService;
  let board: string;
  let projectId: string;
  let folder: string;
  before(async () => {
    t = await startService();
    board = await t.createBoard('preview');
    const up = await t.upload(board, { name: 'template.aep', data: project() }, { addToBoard: true });
    assert.equal(up.status, 200, up.text);
    projectId = up.body.element.id;
    folder = path.join(t.dataDir, 'media', 'admin', board);
  });
  after(() => t.close());

  const preview = (body: Record<string, unknown>) =>
    t.api('POST', '/api/motion/projects/preview', { board_id: board, element_id: projectId, ...body });
  const bytes = async (url: string) => Buffer.from(await (await fetch(t.baseUrl + url)).arrayBuffer());
  async function pixels(url: string) {
    const { data, info } = await sharp(await bytes(url))
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    const at = (x: number, y: number): number[] => {
      const i = (y * info.width + x) * 3;
      return [data[i], data[i + 1], data[i + 2]];
    };
    return { at, info };
  }
  const near = (got: number[], want: number[], what: string, tol = 8) =>
    assert.ok(
      got.every((v, i) => Math.abs(v - want[i]) <= tol),
      `${what}: pixel ${JSON.stringify(got)} is not ${JSON.stringify(want)}`,
    );
  const lit = (at: (x: number, y: number) => number[], x0: number, y0: number, x1: number, y1: number) => {
    let n = 0;
    for (let x = x0; x < x1; x++) for (let y = y0; y < y1; y++) if (at(x, y)[0] > 200 && at(x, y)[2] > 200) n++;
    return n;
  };

  it('draws a frame: keyframed position, parenting, precomp timing, a track matte, text', async () => {
    const res = await preview({ composition: 'Main', time: 0.5 });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.type, 'image');
    assert.equal(res.body.filename, 'Main preview.png');
    assert.equal(res.body.width, 200);
    assert.equal(res.body.height, 100);
    // floor(0.5 s x 25 fps) = frame 12: 0.48 s.
    assert.equal(res.body.time, 0.48);
    assert.equal(res.body.element, undefined);
    const { at } = await pixels(res.body.url);
    near(at(100, 20), [255, 0, 0], 'the mover half way');
    near(at(30, 20), [0, 0, 0], 'where the mover was');
    near(at(100, 40), [0, 255, 0], 'its child, 20 px below');
    near(at(170, 70), [0, 0, 0], 'the precomp, its own time 0.1 s: opacity still 0');
    near(at(15, 75), [255, 0, 0], 'matted layer inside the matte');
    near(at(45, 75), [0, 0, 0], 'matted layer outside the matte');
    assert.ok(lit(at, 65, 60, 140, 100) > 150, 'the text is drawn');

    const later = await pixels((await preview({ composition: 'Main', time: 0.7 })).body.url);
    near(later.at(170, 70), [0, 0, 255], 'the precomp, its own time 0.3 s: opacity 100');
    near(later.at(132, 20), [255, 0, 0], 'the mover at 0.7 s');
    // floor(time x fps): 0.5 s at 3 fps is frame 1, 1/3 s.
    const third = await preview({ composition: 'Main', time: 0.5, fps: 3 });
    assert.ok(Math.abs(third.body.time - 1 / 3) < 1e-9, String(third.body.time));
    near((await pixels(third.body.url)).at(73, 20), [255, 0, 0], 'the mover at 1/3 s');
  });

  it('applies text edits and a composition chosen by id; scales the output', async () => {
    const plainRes = await preview({ composition: 10, time: 0.5 });
    const plain = await pixels(plainRes.body.url);
    const textExpression = (body: { approximations: { feature: string; detail: string }[] }) =>
      body.approximations.some((a) => a.feature === 'expression' && a.detail.includes('ADBE Text Document'));
    assert.ok(!textExpression(plainRes.body), 'the Source Text expression (value + "") evaluates: nothing listed');
    const edited = await preview({ composition: 10, time: 0.5, textEdits: [{ layer: 'Title', text: 'HIHIHI' }] });
    assert.equal(edited.status, 200, edited.text);
    const e = await pixels(edited.body.url);
    assert.ok(!textExpression(edited.body), 'an edited text has no expression left, as in a render');
    assert.ok(
      lit(e.at, 130, 60, 200, 100) > 100 && lit(plain.at, 130, 60, 200, 100) < 20,
      'the longer text reaches right',
    );
    const half = await preview({ composition: 'Main', time: 0.5, width: 100 });
    assert.deepEqual([half.body.width, half.body.height], [100, 50]);
    near((await pixels(half.body.url)).at(50, 10), [255, 0, 0], 'scaled by half');
    const boxed = await preview({ composition: 'Main', time: 0.5, width: 100, height: 100 });
    const b = await pixels(boxed.body.url);
    assert.deepEqual([b.info.width, b.info.height], [100, 100]);
    near(b.at(50, 35), [255, 0, 0], 'fitted and centred');
  });

  it('finds footage on the board, takes media edits, and draws a labelled placeholder for what is missing', async () => {
    const missing = await preview({ composition: 'Logo' });
    assert.equal(missing.status, 200, missing.text);
    const note = missing.body.approximations.find((a: { feature: string }) => a.feature === 'missing-footage');
    assert.ok(note, JSON.stringify(missing.body.approximations));
    assert.match(note.detail, /logo\.png/);
    assert.equal(
      (await t.upload(board, { name: 'logo.png', data: await png(64, 32, { r: 255, g: 0, b: 0 }) })).status,
      200,
    );
    const found = await preview({ composition: 'Logo' });
    assert.ok(!found.body.approximations.some((a: { feature: string }) => a.feature === 'missing-footage'));
    near((await pixels(found.body.url)).at(32, 16), [255, 0, 0], 'the board file of the same name');
    const blue = await t.upload(
      board,
      { name: 'blue.png', data: await png(64, 32, { r: 0, g: 0, b: 255 }) },
      { addToBoard: true },
    );
    const edited = await preview({ composition: 'Logo', mediaEdits: [{ layer: 1, element_id: blue.body.element.id }] });
    assert.equal(edited.status, 200, edited.text);
    near((await pixels(edited.body.url)).at(32, 16), [0, 0, 255], 'the media edit');
    // Files nobody can read are placeholders with a note, never a failed preview.
    for (const name of ['broken.png', 'broken.mp4']) {
      const bad = await t.upload(board, { name, data: Buffer.from('not a picture at all') });
      const res = await preview({ composition: 'Logo', mediaEdits: [{ layer: 1, url: bad.body.url }] });
      assert.equal(res.status, 200, `${name}: ${res.text}`);
      assert.ok(
        res.body.approximations.some((a: { feature: string; detail: string }) => a.feature === 'missing-footage'),
        `${name}: ${res.text}`,
      );
    }
  });

  it('shows the video frame at the layer time, and names substituted fonts', async () => {
    const dir = await tempDir();
    try {
      // 1 s red, then 1 s blue, 25 fps.
      const clip = path.join(dir, 'clip.mp4');
      await ffmpeg([
        '-f',
        'lavfi',
        '-i',
        'color=c=red:s=64x32:r=25:d=1',
        '-f',
        'lavfi',
        '-i',
        'color=c=blue:s=64x32:r=25:d=1',
        '-filter_complex',
        '[0][1]concat=n=2',
        '-pix_fmt',
        'yuv420p',
        clip,
      ]);
      assert.equal((await t.upload(board, clip)).status, 200);
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
    const at = async (time: number) => {
      const res = await preview({ composition: 'Clip', time });
      assert.equal(res.status, 200, res.text);
      return (await pixels(res.body.url)).at(32, 16);
    };
    near(await at(0.4), [0, 0, 0], 'before the layer starts');
    near(await at(1.4), [255, 0, 0], 'source time 0.9 s', 24);
    near(await at(1.8), [0, 0, 255], 'source time 1.3 s', 24);

    // DejaVu Sans Bold (the title's font) is installed here: no font note. NoSuchFont is drawn with what fontconfig
    // offers instead, and said so.
    const main = await preview({ composition: 'Main', time: 0.5 });
    if (dejavuBold)
      assert.ok(!main.body.approximations.some((a: { feature: string }) => a.feature === 'font'), main.text);
    const label = await preview({ composition: 'Fonts' });
    const note = label.body.approximations.find((a: { feature: string }) => a.feature === 'font');
    assert.ok(note, label.text);
    assert.equal(note.layer, 'Label');
    assert.match(note.detail, /NoSuchFont-Bold.*drawn with \S/);
  });

  it('draws a property at the value of its expression, evaluated in the sandbox', async () => {
    const res = await preview({ composition: 'Expr' });
    assert.equal(res.status, 200, res.text);
    const { at } = await pixels(res.body.url);
    near(at(70, 16), [255, 0, 0], 'where the expression puts the solid');
    near(at(20, 16), [0, 0, 0], "where the property's own value would");
    assert.ok(!res.body.approximations.some((a: { feature: string }) => a.feature === 'expression'), res.text);
  });

  it('renders mp4 and webm videos of the frames asked for', async () => {
    const dir = await tempDir();
    try {
      for (const format of ['mp4', 'webm'] as const) {
        const res = await preview({ composition: 'Main', format, fps: 10, start: 0.5, duration: 1 });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.type, 'video');
        assert.equal(res.body.duration, 1);
        assert.equal(res.body.filename, `Main preview.${format}`);
        const file = path.join(dir, `v.${format}`);
        await fsp.writeFile(file, await bytes(res.body.url));
        const info = await probeFile(file);
        assert.equal(info.video?.codec, format === 'mp4' ? 'h264' : 'vp9');
        assert.deepEqual([info.video?.width, info.video?.height], [200, 100]);
        assert.ok(Math.abs((info.duration ?? 0) - 1) < 0.15, String(info.duration));
      }
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  });

  it('gives the same bytes for the same request, and adds an element only with add_to_board', async () => {
    const a = await preview({ composition: 'Main', time: 0.3 });
    const b = await preview({ composition: 'Main', time: 0.3 });
    assert.notEqual(a.body.filename, b.body.filename);
    assert.ok((await bytes(a.body.url)).equals(await bytes(b.body.url)), 'same PNG bytes');
    // 38 frames: sampled on a sampling thread, which keeps the decoded project; an edited preview in between must
    // not change what the next one draws.
    const video = { composition: 'Main', format: 'mp4', fps: 25, duration: 1.5 };
    const va = await preview(video);
    assert.equal((await preview({ ...video, textEdits: [{ layer: 'Title', text: 'CHANGED' }] })).status, 200);
    const vb = await preview(video);
    assert.ok((await bytes(va.body.url)).equals(await bytes(vb.body.url)), 'same mp4 bytes');
    const count = async () => (await t.api('GET', `/api/moodboards/${board}`)).body.elements.length;
    const before = await count();
    const added = await preview({ composition: 'Main', time: 0.3, add_to_board: true });
    assert.equal(added.status, 200, added.text);
    assert.equal(added.body.element.type, 'image');
    assert.equal(added.body.element.url, added.body.url);
    assert.equal(await count(), before + 1);
  });

  it('stops a synchronous preview whose client goes away, leaving nothing', async () => {
    const listing = (await fsp.readdir(folder)).sort();
    const gone = new AbortController();
    const request = fetch(`${t.baseUrl}/api/motion/projects/preview`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        board_id: board,
        element_id: projectId,
        composition: 'Long',
        format: 'mp4',
        fps: 30,
        duration: 60,
      }),
      signal: gone.signal,
    }).catch(() => undefined);
    // Until its temp file appears in the board folder, the preview has not started writing.
    await eventually(async () => ((await fsp.readdir(folder)).some((f) => f.startsWith('.tmp-')) ? true : undefined));
    gone.abort();
    await request;
    // 1800 frames take far longer than this wait: only a stopped preview leaves the folder as it was this soon.
    await eventually(async () => {
      const now = (await fsp.readdir(folder)).sort();
      return JSON.stringify(now) === JSON.stringify(listing) ? true : undefined;
    }, 20_000);
  });

  it('runs as a motion.preview job with progress, and cancels', async () => {
    const queued = await preview({ composition: 'Main', format: 'mp4', fps: 25, duration: 2, async: true });
    assert.equal(queued.status, 202, queued.text);
    const done = await waitForJob(t, queued.body.job_id);
    assert.equal(done.status, 'complete', JSON.stringify(done));
    assert.equal(done.result.type, 'video');
    assert.match(done.result.filename, /^Main preview( \(\d+\))?\.mp4$/);
    assert.ok(Array.isArray(done.result.approximations));
    const listing = await fsp.readdir(folder);
    const long = await preview({ composition: 'Long', format: 'mp4', fps: 30, duration: 60, async: true });
    assert.equal(long.status, 202, long.text);
    // Progress moves while it runs (sampling, then frames captured), and a cancel stops it.
    await waitForJob(t, long.body.job_id, { until: (j) => j.status === 'running' && j.progress > 0.2 });
    assert.equal((await t.api('POST', `/api/jobs/${long.body.job_id}/cancel`)).status, 200);
    const cancelled = await waitForJob(t, long.body.job_id);
    assert.equal(cancelled.status, 'cancelled');
    assert.deepEqual((await fsp.readdir(folder)).sort(), listing.sort(), 'nothing left of the cancelled preview');
  });

  it("uses a font file on the board with the PostScript name the text asks for, before the machine's", async () => {
    // DejaVu Sans Bold renamed in its name table to the 15 letters the project asks for (same length: offsets hold).
    const face = await fsp.readFile('/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf').catch(() => undefined);
    if (!face) return console.log('# DejaVuSans-Bold.ttf is absent: board font test skipped');
    const rename = (b: Buffer, from: string, to: string) => {
      for (let at = b.indexOf(from); at >= 0; at = b.indexOf(from, at + 1)) b.write(to, at, to.length, 'latin1');
    };
    const utf16 = (s: string) => Buffer.from(s, 'utf16le').swap16().toString('latin1');
    rename(face, 'DejaVuSans-Bold', 'NoSuchFont-Bold');
    rename(face, utf16('DejaVuSans-Bold'), utf16('NoSuchFont-Bold'));
    assert.equal((await t.upload(board, { name: 'title-face.ttf', data: face })).status < 300, true);
    const label = await preview({ composition: 'Fonts' });
    assert.equal(label.status, 200, label.text);
    assert.ok(!label.body.approximations.some((a: { feature: string }) => a.feature === 'font'), label.text);
  });
});
