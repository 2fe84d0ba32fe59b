import sharp from 'sharp';

/** A 64-bit DCT pHash and a 64-bit difference hash, each as two unsigned 32-bit halves (JS bit operations are 32-bit). */
export interface PerceptualHash {
  pHi: number;
  pLo: number;
  dHi: number;
  dLo: number;
}

const N = 32;
const K = 8;

/** cos((2x+1)uπ/2N) for the K lowest frequencies u, computed once. */
const COS = (() => {
  const t = new Float64Array(K * N);
  for (let u = 0; u < K; u++)
    for (let x = 0; x < N; x++) t[u * N + x] = Math.cos(((2 * x + 1) * u * Math.PI) / (2 * N));
  return t;
})();

function packBits(bits: boolean[]): [number, number] {
  let hi = 0;
  let lo = 0;
  for (let i = 0; i < 32; i++) {
    hi = (hi << 1) | (bits[i] ? 1 : 0);
    lo = (lo << 1) | (bits[32 + i] ? 1 : 0);
  }
  return [hi >>> 0, lo >>> 0];
}

/**
 * pHash of a 32x32 greyscale image: the 8x8 lowest frequencies of its 2-D DCT-II, each bit set when the coefficient
 * is above the median of the 63 AC coefficients. Only the 8 needed frequencies are computed per axis (about 10k
 * multiply-adds), which is why this runs inline rather than in a worker thread (see docs/media.md for the timing).
 */
export function dctHash(grey32: Uint8Array): [number, number] {
  const rows = new Float64Array(N * K);
  for (let y = 0; y < N; y++) {
    for (let u = 0; u < K; u++) {
      let s = 0;
      for (let x = 0; x < N; x++) s += grey32[y * N + x] * COS[u * N + x];
      rows[y * K + u] = s;
    }
  }
  const coeffs = new Float64Array(K * K);
  for (let v = 0; v < K; v++) {
    for (let u = 0; u < K; u++) {
      let s = 0;
      for (let y = 0; y < N; y++) s += rows[y * K + u] * COS[v * N + y];
      coeffs[v * K + u] = s;
    }
  }
  const ac = Array.from(coeffs.subarray(1)).sort((a, b) => a - b);
  const median = (ac[31] + ac[32]) / 2;
  return packBits(Array.from(coeffs, (c) => c > median));
}

/** dHash of a 9x8 greyscale image: one bit per horizontally adjacent pair, set when brightness rises. */
function differenceHash(grey9x8: Uint8Array): [number, number] {
  const bits: boolean[] = [];
  for (let y = 0; y < 8; y++) for (let x = 0; x < 8; x++) bits.push(grey9x8[y * 9 + x + 1] > grey9x8[y * 9 + x]);
  return packBits(bits);
}

/** Both hashes of an image file (EXIF orientation applied, transparency on white, first frame of animations). */
export async function hashImageFile(file: string): Promise<PerceptualHash> {
  const base = sharp(file, { failOn: 'error' }).rotate().flatten({ background: '#ffffff' }).greyscale();
  const [p, d] = await Promise.all([
    base.clone().resize(N, N, { fit: 'fill' }).raw().toBuffer(),
    base.clone().resize(9, 8, { fit: 'fill' }).raw().toBuffer(),
  ]);
  const [pHi, pLo] = dctHash(p);
  const [dHi, dLo] = differenceHash(d);
  return { pHi, pLo, dHi, dLo };
}
