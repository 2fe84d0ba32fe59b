/**
 * 3D as After Effects' Classic 3D renderer computes it: layer and camera matrices, the perspective projection, and the
 * homography that places a flat layer (its plane z = 0) on the composition. Facts and sources: docs/motion.md ("3D")
 * and ../shared/research/after-effects-3d.md.
 *
 * Coordinates are After Effects': x right, y down, z away from the viewer (a right-handed system), pixels and degrees.
 * A Mat4 is row-major and acts on column vectors: p' = M p.
 */
import type { Matrix } from './display.js';

export type Mat4 = number[];

export const IDENTITY4: Mat4 = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];

export function mul4(a: Mat4, b: Mat4): Mat4 {
  const out = new Array<number>(16);
  for (let r = 0; r < 4; r++)
    for (let c = 0; c < 4; c++)
      out[r * 4 + c] = a[r * 4] * b[c] + a[r * 4 + 1] * b[4 + c] + a[r * 4 + 2] * b[8 + c] + a[r * 4 + 3] * b[12 + c];
  return out;
}

/** [x, y, z, w] of M (x, y, z, 1). */
export function apply4(m: Mat4, p: number[]): [number, number, number, number] {
  const [x, y, z] = [p[0] ?? 0, p[1] ?? 0, p[2] ?? 0];
  return [0, 1, 2, 3].map((r) => m[r * 4] * x + m[r * 4 + 1] * y + m[r * 4 + 2] * z + m[r * 4 + 3]) as [
    number,
    number,
    number,
    number,
  ];
}

const translate = (x: number, y: number, z: number): Mat4 => [1, 0, 0, x, 0, 1, 0, y, 0, 0, 1, z, 0, 0, 0, 1];
const scale = (x: number, y: number, z: number): Mat4 => [x, 0, 0, 0, 0, y, 0, 0, 0, 0, z, 0, 0, 0, 0, 1];
const rad = (deg: number) => (deg * Math.PI) / 180;

/** Right-hand rotations about x, y and z: each turns clockwise as seen looking along its axis (Z: clockwise on screen). */
export function rotX(deg: number): Mat4 {
  const [c, s] = [Math.cos(rad(deg)), Math.sin(rad(deg))];
  return [1, 0, 0, 0, 0, c, -s, 0, 0, s, c, 0, 0, 0, 0, 1];
}
export function rotY(deg: number): Mat4 {
  const [c, s] = [Math.cos(rad(deg)), Math.sin(rad(deg))];
  return [c, 0, s, 0, 0, 1, 0, 0, -s, 0, c, 0, 0, 0, 0, 1];
}
export function rotZ(deg: number): Mat4 {
  const [c, s] = [Math.cos(rad(deg)), Math.sin(rad(deg))];
  return [c, -s, 0, 0, s, c, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
}

/** Orientation then X, Y, Z rotation: points turn by Z first, then Y, then X, then the orientation's Z, Y, X. */
export function rotation3(orientation: number[], rx: number, ry: number, rz: number): Mat4 {
  return [
    rotX(orientation[0] ?? 0),
    rotY(orientation[1] ?? 0),
    rotZ(orientation[2] ?? 0),
    rotX(rx),
    rotY(ry),
    rotZ(rz),
  ].reduce(mul4);
}

/** A 3D layer's matrix into its parent: T(position) R S T(-anchor), with scale in percent. */
export function layerMatrix3(anchor: number[], position: number[], scalePct: number[], rotation: Mat4): Mat4 {
  const s = (k: number) => (scalePct[k] ?? 100) / 100;
  return [
    translate(position[0] ?? 0, position[1] ?? 0, position[2] ?? 0),
    rotation,
    scale(s(0), s(1), s(2)),
    translate(-(anchor[0] ?? 0), -(anchor[1] ?? 0), -(anchor[2] ?? 0)),
  ].reduce(mul4);
}

/** A 2D matrix as a 3D one acting on the plane z = 0 (2D layers and 2D parents of 3D layers). */
export function fromAffine(m: Matrix): Mat4 {
  return [m[0], m[2], 0, m[4], m[1], m[3], 0, m[5], 0, 0, 1, 0, 0, 0, 0, 1];
}

/**
 * A two-node camera's aim: the rotation that turns its view axis (+z) towards the point of interest without roll
 * (a turn about y, then a tilt about x).
 */
export function lookAt(position: number[], interest: number[]): Mat4 {
  const d = [0, 1, 2].map((k) => (interest[k] ?? 0) - (position[k] ?? 0));
  const len = Math.hypot(d[0], d[1], d[2]);
  if (len < 1e-9) return IDENTITY4;
  const yaw = Math.atan2(d[0], d[2]);
  const pitch = Math.atan2(-d[1], Math.hypot(d[0], d[2]));
  return mul4(rotY((yaw * 180) / Math.PI), rotX((pitch * 180) / Math.PI));
}

/** The inverse of a 4x4 matrix (Gauss-Jordan with partial pivoting), or undefined when it is singular. */
export function invert4(m: Mat4): Mat4 | undefined {
  const a = [...m];
  const inv = [...IDENTITY4];
  for (let c = 0; c < 4; c++) {
    let p = c;
    for (let r = c + 1; r < 4; r++) if (Math.abs(a[r * 4 + c]) > Math.abs(a[p * 4 + c])) p = r;
    if (!(Math.abs(a[p * 4 + c]) > 1e-12)) return undefined;
    for (let k = 0; k < 4; k++) {
      [a[c * 4 + k], a[p * 4 + k]] = [a[p * 4 + k], a[c * 4 + k]];
      [inv[c * 4 + k], inv[p * 4 + k]] = [inv[p * 4 + k], inv[c * 4 + k]];
    }
    const d = a[c * 4 + c];
    for (let k = 0; k < 4; k++) {
      a[c * 4 + k] /= d;
      inv[c * 4 + k] /= d;
    }
    for (let r = 0; r < 4; r++) {
      if (r === c) continue;
      const f = a[r * 4 + c];
      for (let k = 0; k < 4; k++) {
        a[r * 4 + k] -= f * a[c * 4 + k];
        inv[r * 4 + k] -= f * inv[c * 4 + k];
      }
    }
  }
  return inv;
}

/** The view of a composition: its camera's world-to-camera matrix and zoom, and the composition's centre. */
export interface View {
  /** World (composition space) to camera space: the camera at 0, looking along +z, y down. */
  toCamera: Mat4;
  zoom: number;
  center: [number, number];
}

/**
 * The composition's default view when it has no camera: After Effects' default 50 mm camera (zoom = width x 50/36)
 * at the centre, zoom pixels in front of the plane z = 0, which it shows at 100 %.
 */
export function defaultView(width: number, height: number): View {
  const zoom = (width * 50) / 36;
  return { toCamera: translate(-width / 2, -height / 2, zoom), zoom, center: [width / 2, height / 2] };
}

/** A camera layer's view from its world matrix (position, aim, orientation, rotation and parents). */
export function cameraView(world: Mat4, zoom: number, width: number, height: number): View | undefined {
  const toCamera = invert4(world);
  return toCamera && { toCamera, zoom, center: [width / 2, height / 2] };
}

/** Nearer than this to the camera (pixels) a point is not drawn (After Effects clips what is behind the camera). */
export const NEAR = 1;

/**
 * The homography of a layer's plane (its z = 0) into composition pixels: [h0..h8] row-major, x' = (h0 x + h1 y +
 * h2) / w, y' = (h3 x + h4 y + h5) / w, w = h6 x + h7 y + h8, where w is the point's depth in front of the camera.
 */
export function planeHomography(view: View, world: Mat4): number[] {
  const m = mul4(view.toCamera, world);
  const [f, cx, cy] = [view.zoom, view.center[0], view.center[1]];
  // camera space (x, y, z) projects to (f x / z + cx, f y / z + cy); columns 0, 1 and 3 of m act on (x, y, 1)
  const row = (r: number) => [m[r * 4], m[r * 4 + 1], m[r * 4 + 3]];
  const [X, Y, Z] = [row(0), row(1), row(2)];
  return [...X.map((v, k) => f * v + cx * Z[k]), ...Y.map((v, k) => f * v + cy * Z[k]), ...Z];
}

/** A point of the plane through a homography: [x, y, depth]. */
export function project(h: number[], x: number, y: number): [number, number, number] {
  const w = h[6] * x + h[7] * y + h[8];
  return [(h[0] * x + h[1] * y + h[2]) / w, (h[3] * x + h[4] * y + h[5]) / w, w];
}

/** Whether two planar quads (camera-space corners, in order) cross each other: an edge of one passes through the other. */
export function quadsIntersect(a: number[][], b: number[][]): boolean {
  return edgesThrough(a, b) || edgesThrough(b, a);
}

function edgesThrough(edges: number[][], quad: number[][]): boolean {
  const sub = (p: number[], q: number[]) => [p[0] - q[0], p[1] - q[1], p[2] - q[2]];
  const cross = (p: number[], q: number[]) => [
    p[1] * q[2] - p[2] * q[1],
    p[2] * q[0] - p[0] * q[2],
    p[0] * q[1] - p[1] * q[0],
  ];
  const dot = (p: number[], q: number[]) => p[0] * q[0] + p[1] * q[1] + p[2] * q[2];
  const n = cross(sub(quad[1], quad[0]), sub(quad[3], quad[0]));
  if (Math.hypot(n[0], n[1], n[2]) < 1e-9) return false;
  for (let k = 0; k < 4; k++) {
    const [p, q] = [edges[k], edges[(k + 1) % 4]];
    const dp = dot(n, sub(p, quad[0]));
    const dq = dot(n, sub(q, quad[0]));
    // strictly on both sides: touching planes (equal depth, shared edges) do not count as crossing
    if (dp * dq >= -1e-6) continue;
    const t = dp / (dp - dq);
    const x = [0, 1, 2].map((j) => p[j] + (q[j] - p[j]) * t);
    // inside the quad (convex: the same side of its four edges)
    let sign = 0;
    let inside = true;
    for (let j = 0; j < 4 && inside; j++) {
      const s = dot(n, cross(sub(quad[(j + 1) % 4], quad[j]), sub(x, quad[j])));
      if (Math.abs(s) < 1e-9) continue;
      if (sign === 0) sign = Math.sign(s);
      else if (Math.sign(s) !== sign) inside = false;
    }
    if (inside) return true;
  }
  return false;
}
