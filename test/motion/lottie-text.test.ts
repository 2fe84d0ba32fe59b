import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { decodeScene } from '../../src/motion/scene/decode.js';
import { writeLottie } from '../../src/motion/lottie/write.js';
import type { BrowserPool } from '../../src/tools/browser.js';
import { lottiePool, withLottiePage } from './lottie-players.js';

/**
 * Text animators in the Lottie export (`t.a`): the corpus project with one text layer per selector kind (KraftyFX/aex
 * layer_text.aep, comp "Text Animators", text "text", 1920x1080, 24 fps), written field by field as bodymovin writes
 * them, and drawn by lottie-web as After Effects moves the characters.
 */
const CORPUS = path.resolve('../shared/fixtures/after-effects/corpus');
const LAYER_TEXT = path.join(CORPUS, 'KraftyFX__aex/cep__test__assets__layer_text.aep');
const haveCorpus = fs.existsSync(LAYER_TEXT);
if (!haveCorpus) console.log(`# Lottie text animators: ${LAYER_TEXT} is absent, the tests are skipped`);

type Json = Record<string, any>;

describe('Lottie export: text animators', { skip: haveCorpus ? false : `${LAYER_TEXT} is absent` }, () => {
  let lottie: Json;
  let approximations: { layer?: string; feature: string; detail: string }[];
  let pool: BrowserPool;
  before(() => {
    const scene = decodeScene(fs.readFileSync(LAYER_TEXT));
    const comp = scene.compositions.find((c) => c.name === 'Text Animators')!;
    ({ lottie, approximations } = writeLottie(scene, comp.id, { expressions: 'keep', images: new Map() }));
    pool = lottiePool();
  });
  after(() => pool?.close());
  const layer = (name: string): Json => (lottie.layers as Json[]).find((l) => l.nm === name)!;

  it('writes each animator with its range selector and properties', () => {
    const [pos] = layer('Position Animator').t.a;
    assert.equal(pos.nm, 'Position Animator');
    assert.deepEqual(pos.a, { p: { a: 0, k: [0, 100, 0] } });
    const s = pos.s;
    assert.deepEqual([s.t, s.b, s.r, s.sh, s.rn], [0, 1, 1, 1, 0], 'range, characters, percent, square');
    assert.deepEqual([s.a.k, s.e.k, s.o.k, s.xe.k, s.ne.k, s.sm.k], [100, 100, 0, 0, 0, 100]);
    // the start keyed from 0 % at 0 s to 100 % at 2 s (frame 48)
    assert.deepEqual(
      s.s.k.map((k: Json) => [k.t, k.s?.[0]]),
      [
        [0, 0],
        [48, 100],
      ],
    );
    // the second animator of "Multiple Animators" is switched off in the file: left out
    const multi = layer('Multiple Animators').t.a;
    assert.equal(multi.length, 1);
    assert.deepEqual([multi[0].s.s.k, multi[0].a.p.k], [20, [100, 200, 0]]);
    assert.deepEqual(layer('Expression Selector').t.a[0].a, { fc: { a: 0, k: [1, 0, 0, 1] } });
  });

  it('lists what Lottie cannot carry: more than one selector, a wiggly selector', () => {
    const notes = approximations.filter((a) => a.feature === 'text-animator');
    assert.deepEqual(notes.map((a) => a.layer).sort(), ['Expression Selector', 'Multiple Selectors', 'WiggleSelector']);
    assert.match(notes.find((a) => a.layer === 'WiggleSelector')!.detail, /wiggly selector not written/);
    assert.deepEqual(layer('WiggleSelector').t.a, [], 'an animator whose only selector is wiggly is left out');
    assert.ok(!notes.some((a) => a.layer === 'Position Animator'), 'nothing listed where all is written');
  });

  it('draws in lottie-web as After Effects moves the characters the range start selects', async () => {
    // Only the "Position Animator" layer, at a quarter of the size: the characters a selector takes are 100 px
    // (25 px drawn) lower. At 0 s every character is selected, at 2 s none, at 1 s the last two.
    const only = { ...lottie, layers: [{ ...layer('Position Animator'), parent: undefined }] };
    const W = 480;
    const H = 270;
    const ink = (rgba: Buffer) => {
      const rows: number[] = [];
      const cols: number[] = [];
      for (let y = 0; y < H; y++)
        for (let x = 0; x < W; x++) {
          const i = 4 * (y * W + x);
          // white glyphs over black
          if (rgba[i] > 128) {
            rows.push(y);
            cols.push(x);
          }
        }
      return { rows, cols };
    };
    const at = (frame: number) =>
      withLottiePage(pool, async (page) => {
        const r = await page.draw(only, frame, { w: W, h: H }, 'svg', '#000');
        assert.deepEqual(r.errors, []);
        return ink(r.rgba);
      });
    const [all, half, none] = [await at(0), await at(24), await at(48)];
    for (const d of [all, half, none]) assert.ok(d.rows.length > 20, 'the text is drawn');
    const mid = (rows: number[]) => rows.reduce((a, b) => a + b, 0) / rows.length;
    // every character 25 px lower at 0 s than at 2 s
    assert.ok(Math.abs(mid(all.rows) - mid(none.rows) - 25) < 2, `${mid(all.rows)} vs ${mid(none.rows)}`);
    // at 1 s: ink in both bands, the lower band's to the right of the upper band's
    const top = Math.max(...none.rows) + 1;
    const upper = half.cols.filter((_, k) => half.rows[k] < top);
    const lower = half.cols.filter((_, k) => half.rows[k] >= top);
    assert.ok(upper.length > 10 && lower.length > 10, `${upper.length} above, ${lower.length} below`);
    assert.ok(Math.max(...upper) < Math.min(...lower) + 2, 'the selected characters are the last ones');
  });
});
