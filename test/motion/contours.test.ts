import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { contourTable, GAUSSIAN_CONTOUR } from '../../src/motion/preview/contours.js';

/**
 * Photoshop's default Satin contour, "Gaussian" (contours.ts): the points a Satin at Photoshop's defaults stores in a
 * PSD (ag-psd's test/read/effects), and the table the page draws with.
 */
describe('layer-style contours', () => {
  it("Satin's default contour is Photoshop's Gaussian preset: nine points from (0, 0) to (255, 255)", () => {
    assert.deepEqual(GAUSSIAN_CONTOUR, [
      [0, 0],
      [32, 7],
      [64, 38],
      [96, 101],
      [128, 166],
      [159, 209],
      [191, 235],
      [223, 248],
      [255, 255],
    ]);
  });

  it('the table passes through every point, rises monotonically, and bends the way the points do', () => {
    const t = contourTable(GAUSSIAN_CONTOUR);
    assert.equal(t.length, 256);
    for (const [x, y] of GAUSSIAN_CONTOUR) assert.equal(t[x], y, `at ${x}`);
    for (let v = 1; v < 256; v++) assert.ok(t[v] >= t[v - 1], `falls at ${v}`);
    // below the straight line in the shadows, above it in the highlights: an S, not a line
    assert.ok(t[48] < 48 - 20 && t[208] > 208 + 25, `${t[48]} ${t[208]}`);
    // between points the spline stays within a few levels of straight segments
    for (let k = 0; k + 1 < GAUSSIAN_CONTOUR.length; k++) {
      const [[x0, y0], [x1, y1]] = [GAUSSIAN_CONTOUR[k], GAUSSIAN_CONTOUR[k + 1]];
      const mid = Math.round((x0 + x1) / 2);
      assert.ok(Math.abs(t[mid] - (y0 + ((y1 - y0) * (mid - x0)) / (x1 - x0))) <= 5, `between ${x0} and ${x1}`);
    }
  });

  it("a two-point contour is the identity (Linear, the other styles' default)", () => {
    const t = contourTable([
      [0, 0],
      [255, 255],
    ]);
    assert.deepEqual(
      t,
      Array.from({ length: 256 }, (_, v) => v),
    );
  });
});
