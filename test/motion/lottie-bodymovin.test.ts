import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startService, type TestService } from '../helpers/service.js';
import { lottiePool, withLottiePage, type LottiePage } from './lottie-players.js';
import type { BrowserPool } from '../../src/tools/browser.js';

/**
 * Our exports against bodymovin's of the same compositions (../shared/fixtures/after-effects/ae-renders, 68 pairs):
 * each exported over HTTP, then ours and bodymovin's drawn by lottie-web (canvas) in the service's headless Chromium
 * at five frames across the animation and at every frame After Effects rendered; the mean over the picture of each
 * pixel's largest channel difference (over white) must be at most 2 of 255 on every frame. Where After Effects'
 * own render exists (composited over white), ours drawn by lottie-web is compared with it too: no further from it
 * than bodymovin's + 2.
 * Prints the figures and the size ratio (ours / bodymovin's, both minified) of every pair.
 */
const ROOT = path.resolve('../shared/fixtures/after-effects/ae-renders');
const have = fs.existsSync(ROOT);
if (!have) console.log(`# lottie vs bodymovin: ${ROOT} is absent, the comparison is skipped`);

/**
 * Pairs whose difference comes from what the scene model does not read yet, each listed by the export too or named
 * here: they are drawn and printed, and must still load and draw, but are not held to the limit.
 */
const KNOWN: Record<string, string> = {
  'LottieFiles__test-files/layers/precomp-transform.aep':
    'the anchor point is stored as 1.0 (80 px shown): a storage the decoder does not read (the preview shares it)',
  'LottieFiles__test-files/transform/anchor.aep': 'the same anchor point storage',
  'LottieFiles__test-files/layers/image-layer-transform.aep': 'the same anchor point storage (1.0 for 40 px)',
};

const LIMIT = 2;

function projects(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? projects(path.join(dir, e.name)) : e.name.endsWith('.aep') ? [path.join(dir, e.name)] : [],
    )
    .sort();
}

/** After Effects' renders of a pair: frame number → PNG path. */
function aeRenders(aep: string): Map<number, string> {
  const out = new Map<number, string>();
  const dir = path.dirname(aep);
  if (aep.endsWith('AfterEffects.aep')) {
    const frames = path.join(dir, 'Frames');
    for (const f of fs.existsSync(frames) ? fs.readdirSync(frames) : []) {
      const m = /^frame(\d+)\.png$/.exec(f);
      if (m) out.set(Number(m[1]), path.join(frames, f));
    }
  } else {
    const base = path.basename(aep, '.aep');
    for (const f of fs.readdirSync(dir)) {
      const m = new RegExp(`^${base.replace(/[-]/g, '\\-')}-(\\d+)\\.png$`).exec(f);
      if (m) out.set(Number(m[1]), path.join(dir, f));
    }
  }
  return out;
}

describe('Lottie export against bodymovin', { skip: !have }, () => {
  let t: TestService;
  let board: string;
  let pool: BrowserPool;
  before(async () => {
    t = await startService({ AERENDER_PATH: '/nonexistent/aerender' });
    board = await t.createBoard('Lottie pairs');
    pool = lottiePool();
    // the image layers' footage, found on the board by its file name
    const asset = path.join(ROOT, 'LottieFiles__test-files/layers/asset.png');
    if (fs.existsSync(asset)) assert.equal((await t.upload(board, asset)).status, 200);
  });
  after(async () => {
    await pool?.close();
    await t?.close();
  });

  it('draws like bodymovin with lottie-web on every frame compared, and like After Effects', () =>
    withLottiePage(pool, (page) => comparePairs(page)));

  async function comparePairs(page: LottiePage): Promise<void> {
    const rows: string[] = [];
    const failures: string[] = [];
    let within = 0;
    let total = 0;
    let oursBytes = 0;
    let theirsBytes = 0;
    let worstRatio = 0;
    for (const aep of have ? projects(ROOT) : []) {
      const name = path.relative(ROOT, aep);
      const theirsFile = aep.endsWith('AfterEffects.aep')
        ? path.join(path.dirname(aep), 'Lottie.json')
        : aep.replace(/\.aep$/, '.json');
      const theirs = JSON.parse(fs.readFileSync(theirsFile, 'utf8'));
      const up = await t.upload(board, { name: name.replace(/[\\/]/g, '__'), data: fs.readFileSync(aep) });
      assert.equal(up.status, 200, `${name}: ${up.text}`);
      const res = await t.api('POST', '/api/motion/projects/export', {
        board_id: board,
        url: up.body.url,
        composition: theirs.nm,
      });
      assert.equal(res.status, 200, `${name}: ${res.text}`);
      const text = await (await fetch(t.baseUrl + res.body.url)).text();
      assert.equal(Buffer.byteLength(text), res.body.bytes);
      const ours = JSON.parse(text);
      assert.equal(res.body.frames, ours.op);
      const w = theirs.w;
      const h = theirs.h;
      const renders = aeRenders(aep);
      // five frames across the animation and every frame After Effects rendered
      const spread = Array.from({ length: 5 }, (_, i) => Math.floor(theirs.ip + ((theirs.op - 1 - theirs.ip) * i) / 4));
      const references: Record<number, string> = {};
      for (const [frame, png] of renders)
        if (frame < theirs.op) references[frame] = `data:image/png;base64,${fs.readFileSync(png).toString('base64')}`;
      const frames = [...new Set([...spread, ...Object.keys(references).map(Number)])].sort((a, b) => a - b);
      const { diffs, errors } = await page.compare(ours, theirs, frames, { w, h }, references);
      assert.deepEqual(errors, [], `${name}: lottie-web reported errors`);
      const worst = diffs.reduce((a, d) => (d.mean > a.mean ? d : a));
      // against After Effects' own pictures: ours no further from them than bodymovin's
      const aeOurs = Math.max(0, ...diffs.map((d) => d.reference?.ours ?? 0));
      const aeTheirs = Math.max(0, ...diffs.map((d) => d.reference?.theirs ?? 0));
      const ratio = text.length / JSON.stringify(theirs).length;
      oursBytes += text.length;
      theirsBytes += JSON.stringify(theirs).length;
      worstRatio = Math.max(worstRatio, ratio);
      total++;
      const ok = worst.mean <= LIMIT;
      if (ok) within++;
      const listed = res.body.approximations.map((a: { feature: string }) => a.feature);
      rows.push(
        `${name.padEnd(64)} bodymovin ${worst.mean.toFixed(2).padStart(6)} (frame ${worst.frame})  AE ours ${aeOurs.toFixed(2).padStart(6)} bodymovin ${aeTheirs.toFixed(2).padStart(6)}  size x${ratio.toFixed(2)}${listed.length ? `  listed: ${[...new Set(listed)].join(', ')}` : ''}`,
      );
      if (!ok && !listed.length && !KNOWN[name])
        failures.push(`${name}: mean difference ${worst.mean.toFixed(2)} at frame ${worst.frame}`);
      if (!listed.length && !KNOWN[name] && renders.size && aeOurs > aeTheirs + LIMIT)
        failures.push(`${name}: ${aeOurs.toFixed(2)} from After Effects' render, bodymovin's ${aeTheirs.toFixed(2)}`);
      if (!listed.length && !KNOWN[name])
        assert.ok(ratio <= 1.2, `${name}: ours is ${ratio.toFixed(2)} times bodymovin's size`);
    }
    console.log(rows.map((r) => `# ${r}`).join('\n'));
    console.log(
      `# ${within} of ${total} pairs within ${LIMIT} on every frame; size ours/bodymovin over all pairs ${(oursBytes / theirsBytes).toFixed(3)}, worst pair ${worstRatio.toFixed(2)}`,
    );
    assert.deepEqual(failures, []);
    assert.equal(total, 68);
  }
});
