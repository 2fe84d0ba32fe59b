import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { ProjectFormatError } from '../../src/motion/chunks.js';
import { decodeScene } from '../../src/motion/scene/decode.js';
import type { DisplayEffect, DisplayGroup, DisplayNode } from '../../src/motion/scene/display.js';
import { evaluate } from '../../src/motion/scene/evaluate.js';
import { createExpressionEvaluator, type ExpressionEvaluator } from '../../src/motion/scene/expressions.js';
import { effectApproximation } from '../../src/motion/scene/effects.js';
import type { Effect, SceneProject } from '../../src/motion/scene/model.js';
import { inflateMatte, parseRotoMatte } from '../../src/motion/scene/roto-matte.js';

/**
 * Roto Brush: After Effects' propagated matte read from the project (roto-matte.ts) and drawn as the layer's alpha.
 * The corpus figures were read once from the inflated frames and checked by hand against the stored shape (a disc
 * about 250 matte pixels wide moving left to right).
 */
const FILE = path.resolve('../shared/fixtures/after-effects/corpus/KraftyFX__aex/cep__test__assets__layer_effects.aep');
const have = fs.existsSync(FILE);
if (!have) console.log(`# motion roto brush: ${FILE} is absent, the corpus checks are skipped`);

/** A matte text as After Effects writes it, for frames of width x height bytes. */
const text = (w: number, h: number, frames: Uint8Array[], first = 0) =>
  `3,,1,0,1,${frames.length},1,${w},${h},1,24,1618165364,${frames.length},${first},` +
  frames
    .map((f, k) => `${zlib.deflateSync(f).toString('base64')},${k + 1 < frames.length ? first + k + 1 : 0},`)
    .join('');

const bbox = (a: Uint8Array, w: number, h: number) => {
  let [x0, y0, x1, y1] = [w, h, -1, -1];
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      if (a[y * w + x] > 127) [x0, y0, x1, y1] = [Math.min(x0, x), Math.min(y0, y), Math.max(x1, x), Math.max(y1, y)];
  return [x0, y0, x1, y1];
};

describe('roto brush matte (decode)', () => {
  it('reads a matte strictly and inflates a frame to width x height', () => {
    const f0 = Uint8Array.from([0, 255, 128, 0, 255, 255]);
    const m = parseRotoMatte(text(3, 2, [f0, f0.map((v) => 255 - v)], 5));
    assert.deepEqual([m.width, m.height, m.frameRate, Object.keys(m.frames)], [3, 2, 24, ['5', '6']]);
    assert.deepEqual([...inflateMatte(m, 6)!], [255, 0, 127, 255, 0, 0]);
    assert.equal(inflateMatte(m, 7), undefined);
  });

  it('a hostile matte is a ProjectFormatError, never a large allocation', () => {
    const bomb = `3,,1,0,1,1,1,10,10,1,24,0,1,0,${zlib.deflateSync(new Uint8Array(50_000_000)).toString('base64')},0,`;
    const cases = [
      bomb, // inflates past 100 bytes: stopped at 100
      text(3, 2, [new Uint8Array(5)]), // short frame
      text(3, 2, [new Uint8Array(6)]).replace(',1618165364,1,', ',1618165364,2,'), // count says 2
      '3,,1,0,1,1,1,40000,40000,1,24,0,1,0,AAAA,0,', // too large
      '3,,1,0,1,1,1,3,2,1,24,0,1,0,@@@@,0,', // not base64
      '3,,1,0,1,1,1,3,2,1,24,0,1,0,AAAA,0,', // not zlib
      '3,,1,0,1,1,1,-3,2', // header
    ];
    for (const c of cases) assert.throws(() => parseRotoMatte(c), ProjectFormatError, c.slice(0, 40));
  });

  describe('the corpus Rotobrush composition', { skip: have ? false : `${FILE} is absent` }, () => {
    let scene: SceneProject;
    let ev: ExpressionEvaluator;
    let effect: Effect;
    before(async () => {
      scene = decodeScene(fs.readFileSync(FILE));
      ev = await createExpressionEvaluator();
      const comp = scene.compositions.find((c) => c.name === 'Rotobrush')!;
      effect = comp.layers[0].effects.find((e) => e.matchName === 'ADBE Samurai')!;
    });
    after(() => ev?.dispose());

    it('keeps 72 frames of 960x540 at 24 fps; frame 0 and 71 hold the disc at its two ends', () => {
      const m = effect.matte!;
      assert.deepEqual([m.width, m.height, m.frameRate, Object.keys(m.frames).length], [960, 540, 24, 72]);
      const f0 = inflateMatte(m, 0)!;
      assert.equal(f0.length, 960 * 540);
      assert.equal(f0.filter((v) => v === 255).length, 48_678);
      assert.equal(f0.filter((v) => v === 0).length, 468_822);
      assert.deepEqual(bbox(f0, 960, 540), [78, 145, 328, 394]);
      // the disc's left edge on its middle row: one pixel of partial coverage, then full
      assert.deepEqual([...f0.subarray(270 * 960 + 76, 270 * 960 + 80)], [0, 0, 129, 255]);
      assert.deepEqual(bbox(inflateMatte(m, 71)!, 960, 540), [669, 145, 918, 394]);
    });

    it('the project with its matte header altered (same length) is a ProjectFormatError, not a crash', () => {
      const buf = fs.readFileSync(FILE);
      // the project holds the text twice: the effect's copy is the second
      const at = buf.lastIndexOf('3,,1,0,1,72,1,960,540,');
      assert.ok(at > 0);
      // 960 x 541: every stored frame inflates to 960 bytes short
      buf.write('3,,1,0,1,72,1,960,541,', at, 'latin1');
      assert.throws(
        () => decodeScene(buf),
        (e: Error) => e instanceof ProjectFormatError && /960x541/.test(e.message),
      );
    });

    it("the display list carries the frame's matte and its Fine-tune step's controls; nothing is listed", () => {
      const comp = scene.compositions.find((c) => c.name === 'Rotobrush')!;
      const list = evaluate(scene, comp.id, 1.5, { expressions: ev });
      const find = (n: DisplayNode): DisplayEffect | undefined =>
        n.kind === 'group'
          ? ((n as DisplayGroup).effects?.find((e) => e.kind === 'roto-brush') ??
            (n as DisplayGroup).children.map(find).find(Boolean))
          : undefined;
      const fx = find(list.root)!;
      assert.deepEqual([fx.matte!.width, fx.matte!.height], [960, 540]);
      const frame36 = inflateMatte(effect.matte!, 36)!;
      assert.ok(Buffer.from(fx.matte!.alpha, 'base64').equals(frame36));
      assert.deepEqual(bbox(frame36, 960, 540), [376, 275, 625, 524]);
      // the page applies Feather 5, Contrast 80 (draw-effects.ts); the Refine Edge part's own Feather and Contrast
      // come after, under their " 2" names, and draw nothing without a Refine Edge radius
      const p = fx.params;
      assert.deepEqual(
        [p['Fine-tune Roto Brush Matte'], p['Feather'], p['Contrast'], p['Shift Edge'], p['Reduce Chatter']],
        [1, 5, 80, 0, 0],
      );
      assert.deepEqual([p['Base Refine Edge Radius'], p['Use Motion Blur'], p['Decontaminate Edge Colors']], [0, 0, 0]);
      const notes = list.approximations.map((a) => a.detail ?? '').join('\n');
      assert.doesNotMatch(notes, /ADBE Samurai/);
    });

    it('lists what the page does not draw: Reduce Chatter (with the step on), Refine Edge, motion blur, decontamination', () => {
      const withValues = (values: Record<string, number>): Effect => ({
        ...effect,
        params: effect.params!.map((p) =>
          p.matchName in values ? { ...p, value: { ...p.value, value: [values[p.matchName]] } } : p,
        ),
      });
      assert.equal(effectApproximation(effect, 1.5), undefined);
      assert.equal(
        effectApproximation(withValues({ '/rmreducechatter': 20 }), 1.5),
        "Roto Brush's matte is drawn without Reduce Chatter",
      );
      // Reduce Chatter belongs to the Fine-tune step: off, it does nothing
      assert.equal(
        effectApproximation(withValues({ '/rmreducechatter': 20, '/rmrefinematteenable': 0 }), 1.5),
        undefined,
      );
      assert.equal(
        effectApproximation(
          withValues({ '/baserefineedgeradius': 3, '/rmusemotionblur': 1, '/rmcleanedgecolors': 1 }),
          1.5,
        ),
        "Roto Brush's matte is drawn without Refine Edge, Use Motion Blur, Decontaminate Edge Colors",
      );
      // the Refine Edge radius draws nothing with Render Refine Edge off
      assert.equal(effectApproximation(withValues({ '/baserefineedgeradius': 3, '/renderHB': 0 }), 1.5), undefined);
      assert.match(effectApproximation(effect, 3.5)!, /no stored matte for this frame/);
    });
  });
});
