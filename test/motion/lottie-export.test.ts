import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import yauzl from 'yauzl';
import { startService, waitForJob, type TestService } from '../helpers/service.js';
import { glyphPaths } from '../../src/motion/lottie/glyphs.js';
import { inCompOrder, numValue, otherValue, withoutEmptyPathKeys } from '../../src/motion/lottie/keyframes.js';
import type { BezierPath, Keyframe, Layer, NumProperty, Property, SceneProject } from '../../src/motion/scene/model.js';
import { writeLottie } from '../../src/motion/lottie/write.js';
import { png, project } from './preview-project.js';

/**
 * POST /api/motion/projects/export over HTTP on the preview tests' synthetic project (preview-project.ts): the checks
 * (each a 4xx before anything is written or queued), what the file holds (keyframes, parenting, precomp asset, the
 * matte, text and a text edit, an embedded picture, a baked and a kept expression), the .lottie archive, the element
 * with add_to_board, and the job.
 */

/** The entries of a ZIP archive, by name. */
function unzip(buf: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buf, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('no zip'));
      const out = new Map<string, Buffer>();
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error('no stream'));
          const parts: Buffer[] = [];
          stream.on('data', (d: Buffer) => parts.push(d));
          stream.on('end', () => {
            out.set(entry.fileName, Buffer.concat(parts));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(out));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

describe('motion export to Lottie', () => {
  let t: TestService;
  let board: string;
  let projectId: string;
  let folder: string;
  before(async () => {
    t = await startService({ AERENDER_PATH: '/nonexistent/aerender' });
    board = await t.createBoard('export');
    const up = await t.upload(board, { name: 'template.aep', data: project() }, { addToBoard: true });
    assert.equal(up.status, 200, up.text);
    projectId = up.body.element.id;
    folder = path.join(t.dataDir, 'media', 'admin', board);
    const logo = await t.upload(board, { name: 'logo.png', data: await png(64, 32, { r: 255, g: 0, b: 0 }) });
    assert.equal(logo.status, 200);
  });
  after(() => t?.close());

  const exportIt = (body: Record<string, unknown>) =>
    t.api('POST', '/api/motion/projects/export', { board_id: board, element_id: projectId, ...body });
  const json = async (url: string) => JSON.parse(await (await fetch(t.baseUrl + url)).text());
  const layer = (lottie: { layers: { nm: string }[] }, name: string) => lottie.layers.find((l) => l.nm === name) as any;

  it('refuses what it cannot do before writing or queueing anything', async () => {
    const listing = (await fsp.readdir(folder)).sort();
    const jobs = (await t.api('GET', `/api/jobs?board_id=${board}`)).body;
    const broken = await t.upload(board, { name: 'broken.aep', data: Buffer.from('RIFX\u0000\u0000\u0000\u0010Egg!') });
    const listingWithBroken = (await fsp.readdir(folder)).sort();
    const unreadable = await t.api('POST', '/api/motion/projects/export', {
      board_id: board,
      url: broken.body.url,
      composition: 'Main',
    });
    assert.equal(unreadable.status, 400, unreadable.text);
    assert.equal(unreadable.body.error.code, 'invalid_project');
    const unknown = await exportIt({ composition: 'Nope', async: true });
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal(unknown.body.error.code, 'composition_not_found');
    assert.match(unknown.body.error.message, /"Nope"/);
    const files = await exportIt({ composition: 'Main', images: 'files' });
    assert.equal(files.status, 400, files.text);
    assert.equal(files.body.error.details[0].field, 'body.images');
    const field = await exportIt({ composition: 'Main', width: 100 });
    assert.equal(field.status, 400, field.text);
    const edit = await exportIt({ composition: 'Main', textEdits: [{ layer: 'Mover', text: 'x' }] });
    assert.equal(edit.status, 400, edit.text);
    assert.equal(edit.body.error.code, 'invalid_edit');
    // a replacement picture of 40 MB is about 53 MB as a data URI: past the limit, refused before reading it
    const big = await t.upload(board, { name: 'big.png', data: Buffer.alloc(40 * 1024 * 1024, 1) });
    assert.equal(big.status, 200, big.text);
    const listingWithBig = (await fsp.readdir(folder)).sort();
    for (const async of [false, true]) {
      const tooBig = await exportIt({
        composition: 'Main',
        mediaEdits: [{ layer: 'Mover', url: big.body.url }],
        async,
      });
      assert.equal(tooBig.status, 400, tooBig.text);
      assert.equal(tooBig.body.error.code, 'export_too_large');
      assert.match(tooBig.body.error.message, /50 MB/);
      assert.equal(tooBig.body.error.info.limit_bytes, 50 * 1024 * 1024);
    }
    assert.deepEqual((await fsp.readdir(folder)).sort(), listingWithBig, 'nothing written');
    assert.ok(listingWithBroken.length >= listing.length);
    await fsp.rm(path.join(folder, big.body.url.split('/').pop()));
    assert.deepEqual((await t.api('GET', `/api/jobs?board_id=${board}`)).body, jobs, 'nothing queued');
  });

  it('writes the composition: keys, parenting, the precomposition, the matte, text and its edit', async () => {
    const res = await exportIt({ composition: 'Main' });
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.filename, /^Main( \(\d+\))?\.json$/);
    assert.equal(res.body.frames, 50);
    assert.equal(res.body.element, undefined);
    const lottie = await json(res.body.url);
    assert.equal(lottie.fr, 25);
    assert.equal(lottie.op, 50);
    assert.deepEqual([lottie.w, lottie.h], [200, 100]);
    const mover = layer(lottie, 'Mover');
    assert.equal(mover.ty, 1);
    assert.equal(mover.sc, '#ff0000');
    assert.equal(mover.ks.p.a, 1);
    assert.deepEqual(
      mover.ks.p.k.map((k: { t: number; s: number[] }) => [k.t, k.s]),
      [
        [0, [20, 20, 0]],
        [25, [180, 20, 0]],
      ],
    );
    assert.equal(layer(lottie, 'Child').parent, mover.ind);
    const inner = layer(lottie, 'Inner');
    assert.equal(inner.ty, 0);
    assert.equal(inner.st, 10);
    const asset = lottie.assets.find((a: { id: string }) => a.id === inner.refId);
    assert.equal(asset.layers[0].ks.o.k[0].h, 1, 'the held opacity');
    const matted = layer(lottie, 'Matted');
    const i = lottie.layers.indexOf(matted);
    assert.equal(matted.tt, 1);
    assert.equal(lottie.layers[i - 1].td, 1);
    assert.equal(lottie.layers[i - 1].nm, 'Matte');
    assert.equal(matted.tp, lottie.layers[i - 1].ind);
    const title = layer(lottie, 'Title');
    assert.equal(title.ty, 5);
    assert.equal(title.t.d.k[0].s.t, 'HI');
    assert.equal(title.t.d.k[0].s.f, 'DejaVuSans-Bold');
    assert.ok(lottie.fonts.list.some((f: { fName: string }) => f.fName === 'DejaVuSans-Bold'));
    const edited = await exportIt({ composition: 'Main', textEdits: [{ layer: 'Title', text: 'CHANGED' }] });
    assert.equal(edited.status, 200, edited.text);
    assert.equal(layer(await json(edited.body.url), 'Title').t.d.k[0].s.t, 'CHANGED');
  });

  it('writes glyph outlines on request (chars, from the font file the preview draws with)', async () => {
    const plain = await exportIt({ composition: 'Main' });
    const without = await json(plain.body.url);
    assert.equal(without.chars, undefined);
    assert.ok(plain.body.approximations.some((a: { feature: string }) => a.feature === 'text-glyphs'));
    assert.equal(without.fonts.list[0].origin, 0);
    const res = await exportIt({ composition: 'Main', glyphs: true });
    assert.equal(res.status, 200, res.text);
    assert.ok(!res.body.approximations.some((a: { feature: string }) => a.feature === 'text-glyphs'), res.text);
    const lottie = await json(res.body.url);
    const font = lottie.fonts.list.find((f: { fName: string }) => f.fName === 'DejaVuSans-Bold');
    assert.deepEqual([font.fFamily, font.fStyle, font.origin], ['DejaVu Sans', 'Bold', 0]);
    assert.ok(font.ascent > 70 && font.ascent < 100, `ascent ${font.ascent}`);
    assert.deepEqual(
      lottie.chars.map((c: { ch: string }) => c.ch),
      ['H', 'I'],
    );
    for (const c of lottie.chars) {
      assert.deepEqual([c.fFamily, c.style, c.size], ['DejaVu Sans', 'Bold', 100]);
      // DejaVu Sans Bold: H advances 1714 of 2048 units, I 762 (at size 100: 83.69, 37.21)
      assert.equal(c.w, c.ch === 'H' ? 83.691 : 37.207);
      const paths = c.data.shapes[0].it;
      assert.equal(c.data.shapes[0].ty, 'gr');
      // H and I are one closed contour each, drawn above the baseline (y up is negative)
      assert.equal(paths.length, 1);
      assert.ok(paths[0].ks.k.c);
      assert.ok(paths[0].ks.k.v.every(([x, y]: number[]) => y <= 0 && y > -80 && x >= 0 && x <= c.w));
    }
    const edited = await exportIt({ composition: 'Main', glyphs: true, textEdits: [{ layer: 'Title', text: 'OK' }] });
    assert.deepEqual(
      (await json(edited.body.url)).chars.map((c: { ch: string }) => c.ch),
      ['K', 'O'],
    );
  });

  it('bakes an expression into the value it gives, or keeps it for lottie-web', async () => {
    const baked = await exportIt({ composition: 'Expr' });
    assert.equal(baked.status, 200, baked.text);
    assert.ok(!baked.body.approximations.some((a: { feature: string }) => a.feature === 'expression'), baked.text);
    const p = layer(await json(baked.body.url), 'Shifted').ks.p;
    assert.deepEqual(p, { a: 0, k: [70, 16, 0], ix: 2, l: 2 }, 'the constant result, as a static value');
    const kept = await exportIt({ composition: 'Expr', expressions: 'keep' });
    assert.equal(kept.status, 200, kept.text);
    const q = layer(await json(kept.body.url), 'Shifted').ks.p;
    assert.deepEqual(q.k, [20, 16, 0]);
    assert.match(q.x, /\$bm_rt = \[\$bm_sum\(value\[0\], 50\), value\[1\]\]/);
  });

  it('embeds a picture, or puts it in a .lottie archive; adds an element only with add_to_board', async () => {
    const res = await exportIt({ composition: 'Logo' });
    assert.equal(res.status, 200, res.text);
    const lottie = await json(res.body.url);
    assert.equal(lottie.layers[0].ty, 2);
    const img = lottie.assets.find((a: { id: string }) => a.id === lottie.layers[0].refId);
    assert.deepEqual([img.w, img.h, img.e], [64, 32, 1]);
    assert.match(img.p, /^data:image\/png;base64,iVBOR/);
    const archive = await exportIt({ composition: 'Logo', format: 'dotlottie', add_to_board: true });
    assert.equal(archive.status, 200, archive.text);
    assert.match(archive.body.filename, /^Logo( \(\d+\))?\.lottie$/);
    assert.equal(archive.body.element.type, 'file');
    assert.equal(archive.body.element.url, archive.body.url);
    assert.equal(archive.body.element.data.source, 'motion-export');
    assert.equal(archive.body.element.data.lottie.composition, 'Logo');
    const entries = await unzip(Buffer.from(await (await fetch(t.baseUrl + archive.body.url)).arrayBuffer()));
    const manifest = JSON.parse(entries.get('manifest.json')!.toString());
    assert.equal(manifest.version, '2');
    const anim = JSON.parse(entries.get(`a/${manifest.animations[0].id}.json`)!.toString());
    const asset = anim.assets.find((a: { id: string }) => a.id === anim.layers[0].refId);
    assert.deepEqual([asset.u, asset.e], ['/i/', 0]);
    assert.equal(
      (await png(1, 1, { r: 0, g: 0, b: 0 })).subarray(0, 8).compare(entries.get(`i/${asset.p}`)!.subarray(0, 8)),
      0,
    );
  });

  it('runs as a motion.export job with the same answer; a cancelled job leaves nothing', async () => {
    const queued = await exportIt({ composition: 'Main', async: true });
    assert.equal(queued.status, 202, queued.text);
    const done = await waitForJob(t, queued.body.job_id);
    assert.equal(done.status, 'complete', JSON.stringify(done));
    assert.equal(done.progress, 1);
    assert.match(done.result.filename, /^Main( \(\d+\))?\.json$/);
    assert.equal(done.result.frames, 50);
    assert.equal((await json(done.result.url)).op, 50);
    const listing = (await fsp.readdir(folder)).sort();
    const next = await exportIt({ composition: 'Long', async: true });
    assert.equal(next.status, 202, next.text);
    assert.equal((await t.api('POST', `/api/jobs/${next.body.job_id}/cancel`)).status, 200);
    const cancelled = await waitForJob(t, next.body.job_id);
    assert.ok(['cancelled', 'complete'].includes(cancelled.status), JSON.stringify(cancelled));
    if (cancelled.status === 'cancelled') assert.deepEqual((await fsp.readdir(folder)).sort(), listing);
  });
});

describe('Lottie writer: field shapes the players accept', () => {
  const key = (time: number, value: BezierPath): Keyframe<BezierPath> => ({
    time,
    value,
    inInterpolation: 'linear',
    outInterpolation: 'linear',
  });
  const empty: BezierPath = { closed: false, v: [], i: [], o: [] };
  const tri: BezierPath = {
    closed: true,
    v: [
      [0, 0],
      [10, 0],
      [0, 10],
    ],
    i: [
      [0, 0],
      [0, 0],
      [0, 0],
    ],
    o: [
      [0, 0],
      [0, 0],
      [0, 0],
    ],
  };
  const base = { startTime: 0, stretch: 1, fps: 25 };
  const write = (p: BezierPath) => ({ v: p.v, c: p.closed });

  it('writes keys that all hold one path as a static path (lottie-web throws on keyed paths without vertices)', () => {
    const p: Property<BezierPath> = { path: 'Path', value: empty, keyframes: [0, 1, 2].map((t) => key(t, empty)) };
    assert.deepEqual(otherValue(p, base, write, true), { a: 0, k: { v: [], c: false } });
    const moving: Property<BezierPath> = { path: 'Path', value: tri, keyframes: [key(0, tri), key(1, empty)] };
    assert.equal(otherValue(moving, base, write, true).a, 1);
  });

  it("turns a glyph's contours into closed bezier paths, quadratic segments as cubic ones", () => {
    const [path] = glyphPaths([
      { type: 'M', x: 0, y: 0 },
      { type: 'L', x: 30, y: 0 },
      { type: 'Q', x1: 30, y1: -30, x: 0, y: -30 },
      { type: 'L', x: 0, y: 0 },
      { type: 'Z' },
    ]);
    assert.deepEqual(path.v, [
      [0, 0],
      [30, 0],
      [0, -30],
    ]);
    assert.ok(path.closed);
    assert.deepEqual(path.o[1], [0, -20], 'two thirds of the way to the control point');
    assert.deepEqual(path.i[2], [20, 0]);
    assert.deepEqual(path.i[0], [0, 0], 'the closing line');
  });

  it('writes the keys of a layer played backwards in composition order, each side of a key swapped', () => {
    const back = { startTime: 4, stretch: -1, fps: 10 };
    const p: NumProperty = {
      path: 'Opacity',
      value: [0],
      keyframes: [
        {
          time: 0,
          value: [0],
          inInterpolation: 'linear',
          outInterpolation: 'bezier',
          outEase: [{ speed: 0, influence: 0.5 }],
        },
        {
          time: 1,
          value: [50],
          inInterpolation: 'bezier',
          outInterpolation: 'linear',
          inEase: [{ speed: 0, influence: 0.25 }],
        },
        { time: 3, value: [100], inInterpolation: 'linear', outInterpolation: 'linear' },
      ],
    };
    const v = numValue(p, back, { scalar: true }) as {
      k: { t: number; s: number[]; o?: { x: number[] }; i?: { x: number[] } }[];
    };
    assert.deepEqual(
      v.k.map((k) => [k.t, k.s[0]]),
      [
        [10, 100],
        [30, 50],
        [40, 0],
      ],
    );
    // the segment 50 -> 0 leaves 50 with what was its in ease (influence 0.25) and enters 0 with its out ease (0.5)
    assert.deepEqual([v.k[1].o!.x[0], v.k[1].i!.x[0]], [0.25, 0.5]);
    const forward = inCompOrder(p.keyframes!, { ...back, stretch: 1 });
    assert.equal(forward, p.keyframes, 'a layer played forwards keeps its keys');
  });

  it("writes effects as bodymovin does: the type players know, each parameter's control type and value", () => {
    const num = (path: string, value: number[]): NumProperty => ({ path, value });
    const layer: Layer = {
      index: 1,
      id: 10,
      name: 'Tinted',
      type: 'null',
      startTime: 0,
      inPoint: 0,
      outPoint: 1,
      stretch: 1,
      enabled: true,
      solo: false,
      shy: false,
      guide: false,
      threeD: false,
      adjustment: false,
      collapse: false,
      autoOrient: false,
      motionBlur: false,
      blendMode: 'normal',
      preserveTransparency: false,
      isMatte: false,
      transform: {
        anchor: num('a', [0, 0]),
        position: num('p', [0, 0]),
        scale: num('s', [100, 100]),
        rotation: num('r', [0]),
        opacity: num('o', [100]),
      },
      masks: [],
      effects: [
        {
          matchName: 'ADBE Tint',
          name: 'Tint',
          enabled: true,
          params: [
            { matchName: 'ADBE Tint-0001', name: 'Map Black To', type: 'color', value: num('c', [1, 0, 0, 1]) },
            { matchName: 'ADBE Tint-0002', name: 'Map White To', type: 'color', value: num('c', [0, 0, 1, 1]) },
            { matchName: 'ADBE Tint-0003', name: 'Amount to Tint', type: 'slider', value: num('s', [40]) },
          ],
        },
        {
          matchName: 'ADBE Layer Control',
          name: 'Other',
          enabled: true,
          params: [
            { matchName: 'ADBE Layer Control-0001', name: 'Layer', type: 'layer', value: num('l', [0]), layerId: 10 },
          ],
        },
        { matchName: 'ADBE Glo2', name: 'Glow', enabled: true },
        { matchName: 'ADBE Invert', name: 'Off', enabled: false, params: [] },
      ],
      layerStyles: [],
      expressions: [],
    };
    const project: SceneProject = {
      aeVersion: '23',
      footage: [],
      compositions: [
        {
          id: 1,
          name: 'C',
          width: 10,
          height: 10,
          pixelAspect: 1,
          frameRate: 25,
          duration: 1,
          background: [0, 0, 0],
          workArea: { start: 0, end: 1 },
          displayStartTime: 0,
          hideShyLayers: false,
          motionBlur: false,
          layers: [layer],
        },
      ],
    };
    const written = writeLottie(project, 1, { expressions: 'keep', images: new Map() });
    const ef = (written.lottie.layers as { ef: any[] }[])[0].ef;
    assert.deepEqual(
      ef.map((e) => [e.ty, e.mn, e.ix, e.en, e.np]),
      [
        [20, 'ADBE Tint', 1, 1, 5],
        [5, 'ADBE Layer Control', 2, 1, 3],
      ],
    );
    assert.deepEqual(
      ef[0].ef.map((p: { ty: number; mn: string; v: { k: unknown } }) => [p.ty, p.mn, p.v.k]),
      [
        [2, 'ADBE Tint-0001', [1, 0, 0, 1]],
        [2, 'ADBE Tint-0002', [0, 0, 1, 1]],
        [0, 'ADBE Tint-0003', 40],
      ],
    );
    assert.deepEqual([ef[1].ef[0].ty, ef[1].ef[0].v.k], [10, 1], "a layer parameter is the layer's index");
    const listed = written.approximations.filter((a) => a.feature === 'effect').map((a) => a.detail);
    assert.ok(
      listed.some((d) => /ADBE Glo2.*not written/.test(d)),
      'an effect without parameters read is listed',
    );
    assert.ok(listed.some((d) => /ADBE Layer Control.*lottie-web does not draw it/.test(d)));
    assert.ok(!listed.some((d) => /ADBE Tint|ADBE Invert/.test(d)));
  });

  it('leaves out keys without vertices among keys with some, and counts them', () => {
    const p: Property<BezierPath> = {
      path: 'Path',
      value: tri,
      keyframes: [key(0, tri), key(1, empty), key(2, { ...tri, v: tri.v.map(([x, y]) => [x + 5, y]) })],
    };
    const { path, dropped } = withoutEmptyPathKeys(p);
    assert.equal(dropped, 1);
    assert.deepEqual(
      path.keyframes!.map((k) => k.time),
      [0, 2],
    );
    const written = otherValue(path, base, write, true).k as { t: number; s: { v: number[][] }[] }[];
    assert.ok(written.every((k) => k.s[0].v.length === 3));
  });
});
