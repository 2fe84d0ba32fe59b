/**
 * Photoshop's layer-style contours that After Effects' layer styles use without showing them (docs/motion.md
 * "Effects"): After Effects' Satin has no Contour property, so it draws with Photoshop's default, the preset
 * "Gaussian". Its points are those a default Satin stores in a PSD (`ChFX` > `MpgS` > `Crv `: ag-psd's test file
 * test/read/effects, a Satin at Photoshop's defaults). A contour maps an input level 0..255 to an output level.
 */
export type ContourPoint = readonly [input: number, output: number];

/** Photoshop's "Gaussian" contour preset, Satin's default. */
export const GAUSSIAN_CONTOUR: readonly ContourPoint[] = [
  [0, 0],
  [32, 7],
  [64, 38],
  [96, 101],
  [128, 166],
  [159, 209],
  [191, 235],
  [223, 248],
  [255, 255],
];

/**
 * The contour as a 256-entry table of output levels 0..255: a natural cubic spline through the points (Photoshop draws
 * contours as smooth curves through them, like Curves; the exact spline is not documented, and with points 32 levels
 * apart it changes the table by a few levels at most against straight lines), rounded and clamped to 0..255.
 */
export function contourTable(points: readonly ContourPoint[]): number[] {
  const n = points.length;
  const x = points.map((p) => p[0]);
  const y = points.map((p) => p[1]);
  // second derivatives of the natural spline (zero at both ends), by the tridiagonal (Thomas) algorithm
  const m = new Array<number>(n).fill(0);
  const c = new Array<number>(n).fill(0);
  const d = new Array<number>(n).fill(0);
  for (let i = 1; i < n - 1; i++) {
    const h0 = x[i] - x[i - 1];
    const h1 = x[i + 1] - x[i];
    const b = 2 * (h0 + h1) - h0 * c[i - 1];
    c[i] = h1 / b;
    d[i] = (6 * ((y[i + 1] - y[i]) / h1 - (y[i] - y[i - 1]) / h0) - h0 * d[i - 1]) / b;
  }
  for (let i = n - 2; i > 0; i--) m[i] = d[i] - c[i] * m[i + 1];
  const table: number[] = [];
  let k = 0;
  for (let v = 0; v < 256; v++) {
    while (k < n - 2 && v > x[k + 1]) k++;
    const h = x[k + 1] - x[k];
    const a = (x[k + 1] - v) / h;
    const b = (v - x[k]) / h;
    const out = a * y[k] + b * y[k + 1] + ((a * a * a - a) * m[k] + (b * b * b - b) * m[k + 1]) * ((h * h) / 6);
    table.push(Math.round(Math.min(255, Math.max(0, out))));
  }
  return table;
}
