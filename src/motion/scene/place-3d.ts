/**
 * Classic 3D in the display list: each 3D layer's group gets the homography that places its flat drawing on the
 * composition (`warp`, from its world matrix and the composition's camera) and the rectangle it draws in (`bounds`);
 * runs of 3D layers not separated by a 2D layer are ordered by depth, far first (evaluate.ts calls these). Facts and
 * sources: docs/motion.md ("3D") and ../shared/research/after-effects-3d.md.
 */
import type { DisplayGroup, DisplayNode, Matrix } from './display.js';
import { multiply } from './geometry.js';
import type { Composition, Layer, NumProperty } from './model.js';
import {
  cameraView,
  defaultView,
  fromAffine,
  IDENTITY4,
  layerMatrix3,
  lookAt,
  mul4,
  NEAR,
  planeHomography,
  project,
  quadsIntersect,
  rotation3,
  type Mat4,
  type View,
} from './three-d.js';
import { characterReach } from './text-animators.js';

/** What the 3D placement reads of the evaluator: sampled properties (expressions included) and 2D matrices. */
export interface Sampler {
  num(l: Layer, p: NumProperty, lt: number): number[];
  /** A layer's 2D matrix into its composition, parents included. */
  matrix(l: Layer, comp: Composition, t: number): Matrix;
  layerTime(l: Layer, t: number): number;
}

/**
 * Where a composition's layers are placed in 3D: the camera's view, and `base`, the world matrix of the collapsed 3D
 * precomposition layer showing it (identity at the top). In a collapsed precomposition every layer is placed (its 2D
 * layers on its plane), since the outer camera sees them.
 */
export interface Space {
  view: View;
  base: Mat4;
  collapsed: boolean;
}

/** A 3D layer's (or camera's) position with its separated dimensions. */
function position3(l: Layer, lt: number, s: Sampler): number[] {
  const tr = l.transform;
  if (tr.position) return s.num(l, tr.position, lt);
  const z = tr.positionZ ? s.num(l, tr.positionZ, lt)[0] : 0;
  return [s.num(l, tr.positionX!, lt)[0], s.num(l, tr.positionY!, lt)[0], z];
}

/** A layer's matrix into its composition's 3D space, through its parents (2D parents act on the plane z = 0). */
export function worldMatrix(l: Layer, comp: Composition, t: number, s: Sampler, chain = 0): Mat4 {
  const lt = s.layerTime(l, t);
  const tr = l.transform;
  const angle = (p: NumProperty | undefined) => (p ? s.num(l, p, lt)[0] : 0);
  const rot = rotation3(
    tr.orientation?.value ?? [0, 0, 0],
    angle(tr.rotationX),
    angle(tr.rotationY),
    angle(tr.rotation),
  );
  const pos = position3(l, lt, s);
  const anchor = s.num(l, tr.anchor, lt);
  let local: Mat4;
  if (l.type === 'camera') {
    // a camera has no anchor or scale: its anchor point is the point of interest a two-node camera aims at
    const aim = l.camera?.twoNode ? lookAt(pos, anchor) : IDENTITY4;
    local = mul4(layerMatrix3([0, 0, 0], pos, [100, 100, 100], aim), rot);
  } else local = layerMatrix3(anchor, pos, s.num(l, tr.scale, lt), rot);
  const parent = l.parentId !== undefined && chain < comp.layers.length && comp.layers.find((p) => p.id === l.parentId);
  if (!parent) return local;
  const up =
    parent.threeD || parent.type === 'camera'
      ? worldMatrix(parent, comp, t, s, chain + 1)
      : fromAffine(s.matrix(parent, comp, t));
  return mul4(up, local);
}

/** The view of `comp` at `t`: its topmost camera that is on at that time (After Effects' active camera), else the default. */
export function viewAt(comp: Composition, t: number, s: Sampler): View {
  const cam = comp.layers.find((l) => l.type === 'camera' && l.enabled && t >= l.inPoint && t < l.outPoint);
  if (!cam?.camera) return defaultView(comp.width, comp.height);
  const zoom = s.num(cam, cam.camera.zoom, s.layerTime(cam, t))[0];
  return (
    cameraView(worldMatrix(cam, comp, t, s), zoom, comp.width, comp.height) ?? defaultView(comp.width, comp.height)
  );
}

/**
 * Places a layer's group: its drawing stays in its own coordinates (matrix identity) and `warp` takes it to the
 * composition. `world` is the layer's matrix in the space's coordinates (3D, or its 2D matrix on the plane z = 0).
 */
export function place(g: DisplayGroup, world: Mat4, space: Space): void {
  g.warp = planeHomography(space.view, mul4(space.base, world));
  g.bounds = g.clip ? [0, 0, g.clip.width, g.clip.height] : contentBounds(g.children);
  g.matrix = [1, 0, 0, 1, 0, 0];
}

type Box = [number, number, number, number];
const EMPTY: Box = [Infinity, Infinity, -Infinity, -Infinity];

/** The rectangle (x0, y0, x1, y1) a group's children draw in, in its coordinates; text is estimated generously. */
export function contentBounds(nodes: DisplayNode[], m: Matrix = [1, 0, 0, 1, 0, 0]): Box {
  const box: Box = [...EMPTY];
  const add = (x: number, y: number, pad = 0) => {
    const [px, py] = [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];
    const r = pad * Math.sqrt(Math.abs(m[0] * m[3] - m[1] * m[2]));
    box[0] = Math.min(box[0], px - r);
    box[1] = Math.min(box[1], py - r);
    box[2] = Math.max(box[2], px + r);
    box[3] = Math.max(box[3], py + r);
  };
  const rect = (x0: number, y0: number, x1: number, y1: number) => {
    add(x0, y0);
    add(x1, y0);
    add(x1, y1);
    add(x0, y1);
  };
  for (const n of nodes) {
    if (n.kind === 'solid' || n.kind === 'footage') rect(0, 0, n.width, n.height);
    else if (n.kind === 'shape') {
      const pad = n.stroke ? (n.stroke.width / 2) * Math.max(1, n.stroke.miter_limit) : 0;
      for (const p of n.paths)
        p.v.forEach((v, k) => {
          add(v[0], v[1], pad);
          add(v[0] + (p.i[k]?.[0] ?? 0), v[1] + (p.i[k]?.[1] ?? 0), pad);
          add(v[0] + (p.o[k]?.[0] ?? 0), v[1] + (p.o[k]?.[1] ?? 0), pad);
        });
    } else if (n.kind === 'text') {
      if (n.box) rect(n.box.x, n.box.y, n.box.x + n.box.width, n.box.y + n.box.height);
      const lines = n.text.split('\n');
      const wide = Math.max(...lines.map((x) => x.length)) * n.size * (1 + Math.max(0, n.tracking) / 1000) * 1.2;
      const w = (wide * (n.horizontal_scale || 100)) / 100 + n.stroke_width;
      const x0 = n.box
        ? n.box.x
        : n.justification.endsWith('right')
          ? -w
          : n.justification.endsWith('center')
            ? -w / 2
            : 0;
      // text animators move and grow glyphs past the plain layout
      const reach = n.characters ? characterReach(n.characters, n.size) : 0;
      rect(
        x0 - n.size - reach,
        -n.size * 1.5 - Math.abs(n.baseline_shift) - reach,
        x0 + w + n.size + reach,
        (lines.length - 1) * n.leading + n.size + reach,
      );
    } else {
      const inner = n.clip ? ([0, 0, n.clip.width, n.clip.height] as Box) : contentBounds(n.children);
      if (inner[0] > inner[2]) continue;
      const mm = multiply(m, n.matrix);
      const [a, b, c, d, e, f] = mm;
      for (const [x, y] of [
        [inner[0], inner[1]],
        [inner[2], inner[1]],
        [inner[2], inner[3]],
        [inner[0], inner[3]],
      ]) {
        const px = a * x + c * y + e;
        const py = b * x + d * y + f;
        box[0] = Math.min(box[0], px);
        box[1] = Math.min(box[1], py);
        box[2] = Math.max(box[2], px);
        box[3] = Math.max(box[3], py);
      }
    }
  }
  return box[0] > box[2] ? [0, 0, 0, 0] : box;
}

/** Depth of a placed group: the camera distance of its rectangle's centre. */
function depthOf(g: DisplayGroup): number {
  const b = g.bounds!;
  return project(g.warp!, (b[0] + b[2]) / 2, (b[1] + b[3]) / 2)[2];
}

/**
 * Orders each run of placed groups (3D layers with no 2D layer between them in the Timeline) by depth, far first;
 * at equal depth the Timeline's order stays (the higher layer in front). Layers that cross each other are gathered in
 * one `intersect` group, where the farthest of them was, drawn with a depth test per pixel. Returns those groups.
 */
export function depthOrder(nodes: DisplayNode[], view: View): DisplayGroup[] {
  const clusters: DisplayGroup[] = [];
  const placed = (n: DisplayNode | undefined): n is DisplayGroup => n?.kind === 'group' && n.warp !== undefined;
  let k = 0;
  while (k < nodes.length) {
    if (!placed(nodes[k])) {
      k++;
      continue;
    }
    let end = k;
    while (placed(nodes[end])) end++;
    const run = (nodes.slice(k, end) as DisplayGroup[]).map((g, i) => ({ g, i, z: depthOf(g) }));
    run.sort((a, b) => b.z - a.z || a.i - b.i);
    // crossing layers joined (union-find on the sorted run)
    const root = run.map((_, i) => i);
    const find = (i: number): number => (root[i] === i ? i : (root[i] = find(root[i])));
    const quads = run.map((r) => corners(r.g, view));
    for (let a = 0; a < run.length; a++)
      for (let b = a + 1; b < run.length; b++)
        if (quadsIntersect(quads[a], quads[b])) root[Math.max(find(a), find(b))] = Math.min(find(a), find(b));
    const sorted: DisplayNode[] = [];
    const made = new Map<number, DisplayGroup>();
    run.forEach((r, i) => {
      const c = find(i);
      if (c === i && !run.some((_, j) => j !== i && find(j) === i)) return void sorted.push(r.g);
      let group = made.get(c);
      if (!group) {
        group = {
          kind: 'group',
          matrix: [1, 0, 0, 1, 0, 0],
          opacity: 1,
          blend: 'normal',
          intersect: true,
          children: [],
        };
        made.set(c, group);
        clusters.push(group);
        sorted.push(group);
      }
      group.children.push(r.g);
    });
    for (const n of sorted) if (n.kind === 'group' && !n.intersect) flattenAffine(n);
    nodes.splice(k, end - k, ...sorted);
    k += sorted.length;
  }
  return clusters;
}

/**
 * A layer facing the camera square on (its homography has no perspective terms over its rectangle) is exactly an
 * affine map: it is drawn as a 2D group with that matrix, which is cheaper than the pixel mapping and as exact.
 */
function flattenAffine(g: DisplayGroup): void {
  const h = g.warp!;
  const b = g.bounds!;
  const reach =
    Math.max(Math.abs(b[0]), Math.abs(b[2])) * Math.abs(h[6]) +
    Math.max(Math.abs(b[1]), Math.abs(b[3])) * Math.abs(h[7]);
  if (!(h[8] >= NEAR) || reach > 1e-9 * h[8]) return;
  g.matrix = [h[0] / h[8], h[3] / h[8], h[1] / h[8], h[4] / h[8], h[2] / h[8], h[5] / h[8]];
  delete g.warp;
  delete g.bounds;
}

/** Camera-space corners of a placed group, from its homography (whose last row is the depth). */
function corners(g: DisplayGroup, view: View): number[][] {
  const b = g.bounds!;
  const h = g.warp!;
  return [
    [b[0], b[1]],
    [b[2], b[1]],
    [b[2], b[3]],
    [b[0], b[3]],
  ].map(([x, y]) => {
    const [px, py, z] = project(h, x, y);
    return [((px - view.center[0]) * z) / view.zoom, ((py - view.center[1]) * z) / view.zoom, z];
  });
}
