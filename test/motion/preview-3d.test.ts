import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { decodeScene } from '../../src/motion/scene/decode.js';
import type { DisplayGroup } from '../../src/motion/scene/display.js';
import { evaluate } from '../../src/motion/scene/evaluate.js';
import { project as projectPoint } from '../../src/motion/scene/three-d.js';
import { startService, type TestService } from '../helpers/service.js';
import { comp, group, layer, layerData, project, prop, solidItem } from './scene-builder.js';

/**
 * 3D as Classic 3D draws it: a two-node camera orbiting two 3D solids (one turned 30 degrees about Y, one further
 * back), each layer's corners where a hand computation of the camera's view puts them, in the display list exactly
 * and in the drawn PNG within the antialiased edge; depth order as the camera goes round; a 2D layer keeping two runs
 * of 3D layers apart; approximations.
 */

const [W, H, FPS] = [400, 300, 25];
const R = 600;
const ZOOM = 500;
const POI = [200, 150, 0];
/** Camera angles round the point of interest (degrees about Y), one per second (hold keys). */
const ANGLES = [0, 40, 80, 150];
const camAt = (deg: number) => {
  const a = (deg * Math.PI) / 180;
  return [POI[0] + R * Math.sin(a), POI[1], POI[2] - R * Math.cos(a)];
};

const held = (values: number[][]) =>
  prop({ keys: values.map((v, k) => ({ t: k, v, in: 'hold' as const, out: 'hold' as const })), fps: FPS });

const solid3d = (id: number, source: number, name: string, pos: number[], extra: [string, Buffer][] = []) =>
  layer(layerData({ id, source, flags38: 0x04, flags39: 1, duration: 4 }), name, [
    ['ADBE Transform Group', group([['ADBE Position', prop({ value: pos })], ...extra])],
  ]);

const camera = layer(layerData({ id: 1, type: 2, flags38: 0x44, flags39: 1, duration: 4 }), 'Camera', [
  [
    'ADBE Transform Group',
    group([
      ['ADBE Anchor Point', prop({ value: POI })],
      ['ADBE Position', held(ANGLES.map(camAt))],
    ]),
  ],
  ['ADBE Camera Options Group', group([['ADBE Camera Zoom', prop({ value: [ZOOM] })]])],
]);

/** Red 100x100 turned 30 degrees about Y at the point of interest; green 100x100 100 px further back, to the right. */
function orbitProject(middle: Buffer[] = []): Buffer {
  return project(
    comp({
      id: 1,
      name: 'Orbit',
      width: W,
      height: H,
      fps: FPS,
      duration: 4,
      layers: [
        camera,
        solid3d(2, 50, 'Red', [200, 150, 0], [['ADBE Rotate Y', prop({ value: [30] })]]),
        ...middle,
        solid3d(3, 51, 'Green', [330, 150, 100]),
      ],
    }),
    solidItem(50, 'Red Solid', 100, 100, [1, 0, 0]),
    solidItem(51, 'Green Solid', 100, 100, [0, 1, 0]),
  );
}

/**
 * Where a point of the scene appears, computed by hand for a camera at angle `deg` aiming at POI: its axes are right
 * (cos, 0, sin), down (0, 1, 0) and forward (-sin, 0, cos); the screen point is zoom x (x, y) / z from the centre.
 */
function byHand(deg: number, p: number[]): [number, number] {
  const a = (deg * Math.PI) / 180;
  const c = camAt(deg);
  const d = [p[0] - c[0], p[1] - c[1], p[2] - c[2]];
  const x = d[0] * Math.cos(a) + d[2] * Math.sin(a);
  const y = d[1];
  const z = -d[0] * Math.sin(a) + d[2] * Math.cos(a);
  return [(ZOOM * x) / z + W / 2, (ZOOM * y) / z + H / 2];
}

/** The red layer's corners in the world: anchor (50, 50) at (200, 150, 0), turned 30 degrees about Y (x' = x cos + z sin, z' = -x sin + z cos). */
const redCorners = [
  [0, 0],
  [100, 0],
  [100, 100],
  [0, 100],
].map(([x, y]) => {
  const [lx, ly] = [x - 50, y - 50];
  const a = (30 * Math.PI) / 180;
  return { local: [x, y], world: [200 + lx * Math.cos(a), 150 + ly, -lx * Math.sin(a)] };
});
const greenCorners = [
  [0, 0],
  [100, 0],
  [100, 100],
  [0, 100],
].map(([x, y]) => ({ local: [x, y], world: [330 + x - 50, 150 + y - 50, 100] }));

/** Where a group draws a point of its own: through its homography, or its matrix when it faces the camera square on. */
const placeOf = (g: DisplayGroup, x: number, y: number): number[] =>
  g.warp
    ? projectPoint(g.warp, x, y)
    : [g.matrix[0] * x + g.matrix[2] * y + g.matrix[4], g.matrix[1] * x + g.matrix[3] * y + g.matrix[5]];

const groupOf = (root: DisplayGroup, name: string) =>
  root.children.find((n): n is DisplayGroup => n.kind === 'group' && n.layer === name)!;

describe('motion 3D: a camera orbiting 3D layers (display lists)', () => {
  const scene = decodeScene(orbitProject());

  it('decodes the camera: two-node, zoom, point of interest', () => {
    const cam = scene.compositions[0].layers[0];
    assert.equal(cam.type, 'camera');
    assert.equal(cam.camera?.twoNode, true);
    assert.deepEqual(cam.camera?.zoom.value, [ZOOM]);
    assert.deepEqual(cam.transform.anchor.value, POI);
  });

  ANGLES.forEach((deg, k) => {
    it(`places every corner where the camera at ${deg} degrees sees it`, () => {
      const list = evaluate(scene, 1, k + 0.5);
      for (const [name, corners] of [
        ['Red', redCorners],
        ['Green', greenCorners],
      ] as const) {
        const g = groupOf(list.root, name);
        // facing the camera square on (the green layer at 0 degrees, the red one's back at 150), a layer is drawn
        // with a plain matrix
        if ((name === 'Green' && deg === 0) || (name === 'Red' && deg === 150)) assert.equal(g.warp, undefined);
        else assert.deepEqual(g.bounds, [0, 0, 100, 100]);
        for (const c of corners) {
          const [x, y] = placeOf(g, c.local[0], c.local[1]);
          const [hx, hy] = byHand(deg, c.world);
          assert.ok(
            Math.abs(x - hx) < 1e-6 && Math.abs(y - hy) < 1e-6,
            `${name} ${c.local}: ${[x, y]} is not ${[hx, hy]}`,
          );
        }
      }
      // far first, by the depth of each layer's centre along the camera's view axis (computed by hand)
      const a = (deg * Math.PI) / 180;
      const depth = (p: number[]) => -(p[0] - camAt(deg)[0]) * Math.sin(a) + (p[2] - camAt(deg)[2]) * Math.cos(a);
      const far = depth([200, 150, 0]) > depth([330, 150, 100]) ? ['Green', 'Red'].reverse() : ['Green', 'Red'];
      const order = list.root.children.map((n) => (n as DisplayGroup).layer);
      assert.deepEqual(order, far, `order at ${deg}`);
      assert.ok(deg !== 0 || order[0] === 'Green', 'seen from the front, the layer 100 px further back is drawn first');
      assert.deepEqual(list.approximations, [], 'nothing listed: the camera is used');
    });
  });

  it('lists a light, whose shading of the 3D layers is not drawn (they accept lights by default)', () => {
    const lit = decodeScene(
      orbitProject([layer(layerData({ id: 5, type: 1, flags38: 0x04, flags39: 1, duration: 4 }), 'Sun', [])]),
    );
    const notes = evaluate(lit, 1, 0.5).approximations;
    assert.deepEqual(
      notes.map((a) => [a.layer, a.feature]),
      [['Sun', 'light']],
    );
    // a light splits no run: the two 3D layers still sort together
    assert.deepEqual(
      evaluate(lit, 1, 0.5).root.children.map((n) => (n as DisplayGroup).layer),
      ['Green', 'Red'],
    );
  });

  it('keeps a 2D layer between two runs of 3D layers (each run ordered on its own)', () => {
    const split = decodeScene(
      orbitProject([layer(layerData({ id: 4, source: 51, flags39: 1, duration: 4 }), 'Flat', [])]),
    );
    // at 150 degrees the green layer is nearer, but the 2D layer above it keeps it under everything above
    const order = evaluate(split, 1, 3.5).root.children.map((n) => (n as DisplayGroup).layer);
    assert.deepEqual(order, ['Green', 'Flat', 'Red']);
    assert.equal(groupOf(evaluate(split, 1, 3.5).root, 'Flat').warp, undefined);
  });
});

/** No camera (the default view): a red layer facing the viewer, a green one through its middle turned 60 degrees. */
function crossingProject(): Buffer {
  return project(
    comp({
      id: 1,
      name: 'Cross',
      width: W,
      height: H,
      fps: FPS,
      duration: 4,
      layers: [
        solid3d(2, 50, 'Red', [200, 150, 0]),
        solid3d(3, 51, 'Green', [200, 150, 0], [['ADBE Rotate Y', prop({ value: [60] })]]),
      ],
    }),
    solidItem(50, 'Red Solid', 100, 100, [1, 0, 0]),
    solidItem(51, 'Green Solid', 100, 100, [0, 1, 0]),
  );
}

describe('motion 3D: layers crossing each other', () => {
  it('gathers them in one group drawn with a depth test per pixel', () => {
    const list = evaluate(decodeScene(crossingProject()), 1, 0);
    assert.equal(list.root.children.length, 1);
    const cross = list.root.children[0] as DisplayGroup;
    assert.equal(cross.intersect, true);
    assert.deepEqual(cross.children.map((n) => (n as DisplayGroup).layer).sort(), ['Green', 'Red']);
    assert.deepEqual(list.approximations, []);
  });
});

describe('motion 3D: a collapsed 3D precomposition', () => {
  it('places its layers with the outer camera, in the outer run of 3D layers, its opacity on each', () => {
    const inner = comp({
      id: 2,
      name: 'Inner',
      width: W,
      height: H,
      fps: FPS,
      duration: 4,
      layers: [solid3d(21, 51, 'Deep', [200, 150, 200]), solid3d(22, 52, 'Close', [200, 150, -100])],
    });
    const precomp = layer(layerData({ id: 3, source: 2, flags38: 0x04, flags39: 0x81, duration: 4 }), 'Inner', [
      ['ADBE Transform Group', group([['ADBE Opacity', prop({ value: [0.5] })]])],
    ]);
    const scene = decodeScene(
      project(
        comp({
          id: 1,
          name: 'Outer',
          width: W,
          height: H,
          fps: FPS,
          duration: 4,
          layers: [solid3d(2, 50, 'Mid', [200, 150, 0]), precomp],
        }),
        inner,
        solidItem(50, 'Red Solid', 100, 100, [1, 0, 0]),
        solidItem(51, 'Green Solid', 100, 100, [0, 1, 0]),
        solidItem(52, 'Blue Solid', 100, 100, [0, 0, 1]),
      ),
    );
    const list = evaluate(scene, 1, 0);
    const nodes = list.root.children as DisplayGroup[];
    assert.deepEqual(
      nodes.map((n) => n.layer),
      ['Deep', 'Mid', 'Close'],
    );
    assert.deepEqual(
      nodes.map((n) => n.opacity),
      [0.5, 1, 0.5],
    );
    // the default camera: zoom = 400 x 50/36, at (200, 150, -zoom); Close's corner (0, 0) is (150, 100, -100)
    const zoom = (W * 50) / 36;
    const [x, y] = placeOf(nodes[2], 0, 0);
    assert.ok(Math.abs(x - (200 + (zoom * -50) / (zoom - 100))) < 1e-6, `x ${x}`);
    assert.ok(Math.abs(y - (150 + (zoom * -50) / (zoom - 100))) < 1e-6, `y ${y}`);
    assert.deepEqual(list.approximations, []);
  });

  it('lists depth of field, which is not drawn', () => {
    const cam = layer(layerData({ id: 1, type: 2, flags38: 0x04, flags39: 1, duration: 4 }), 'Lens', [
      ['ADBE Camera Options Group', group([['ADBE Camera Depth of Field', prop({ value: [1] })]])],
    ]);
    const scene = decodeScene(
      project(
        comp({
          id: 1,
          name: 'Dof',
          width: W,
          height: H,
          fps: FPS,
          duration: 4,
          layers: [cam, solid3d(2, 50, 'Red', [200, 150, 0])],
        }),
        solidItem(50, 'Red Solid', 100, 100, [1, 0, 0]),
      ),
    );
    assert.deepEqual(
      evaluate(scene, 1, 0).approximations.map((a) => [a.layer, a.feature]),
      [['Lens', 'camera']],
    );
  });
});

describe('motion 3D: the drawn frame', () => {
  let t: TestService;
  let board: string;
  let projectId: string;
  before(async () => {
    t = await startService();
    board = await t.createBoard('preview-3d');
    const up = await t.upload(board, { name: 'orbit.aep', data: orbitProject() }, { addToBoard: true });
    assert.equal(up.status, 200, up.text);
    projectId = up.body.element.id;
  });
  after(() => t.close());

  for (const [k, deg] of [
    [1, 40],
    [2, 80],
  ]) {
    it(`draws the red layer's corners within the antialiased edge of the hand-computed ones (camera at ${deg} degrees)`, async () => {
      const res = await t.api('POST', '/api/motion/projects/preview', {
        board_id: board,
        element_id: projectId,
        composition: 'Orbit',
        time: k + 0.5,
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.approximations, []);
      const buf = Buffer.from(await (await fetch(t.baseUrl + res.body.url)).arrayBuffer());
      const { data, info } = await sharp(buf).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      const at = (x: number, y: number) => {
        const i = (Math.floor(y) * info.width + Math.floor(x)) * 3;
        return [data[i], data[i + 1], data[i + 2]];
      };
      const pts = redCorners.map((c) => byHand(deg, c.world));
      const centre = [pts.reduce((s, p) => s + p[0], 0) / 4, pts.reduce((s, p) => s + p[1], 0) / 4];
      for (const [x, y] of pts) {
        const d = Math.hypot(centre[0] - x, centre[1] - y);
        const step = (r: number) => [x + ((centre[0] - x) * r) / d, y + ((centre[1] - y) * r) / d];
        const inside = at(...(step(2) as [number, number]));
        const outside = at(...(step(-2) as [number, number]));
        assert.ok(inside[0] > 200 && inside[1] < 55, `2 px inside ${[x, y]}: ${inside}`);
        assert.ok(outside[0] < 55, `2 px outside ${[x, y]}: ${outside}`);
      }
      // the middle of each edge too: the perspective edge is straight where the hand computation puts it
      for (let e = 0; e < 4; e++) {
        const [a, b] = [pts[e], pts[(e + 1) % 4]];
        const m = [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
        const d = Math.hypot(centre[0] - m[0], centre[1] - m[1]);
        const go = (r: number) => at(m[0] + ((centre[0] - m[0]) * r) / d, m[1] + ((centre[1] - m[1]) * r) / d);
        assert.ok(go(1.5)[0] > 200, `1.5 px inside edge ${e}: ${go(1.5)}`);
        assert.ok(go(-1.5)[0] < 55, `1.5 px outside edge ${e}: ${go(-1.5)}`);
      }
    });
  }

  it('inspect lists, per composition, nothing for the orbit: the camera and the 3D layers are drawn', async () => {
    const res = await t.api('POST', '/api/motion/projects/inspect', { board_id: board, element_id: projectId });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.approximations, [{ composition_id: 1, composition: 'Orbit', approximations: [] }]);
  });

  it('cuts crossing layers where they meet: the green one behind the red on the left, in front on the right', async () => {
    const up = await t.upload(board, { name: 'cross.aep', data: crossingProject() }, { addToBoard: true });
    assert.equal(up.status, 200, up.text);
    const res = await t.api('POST', '/api/motion/projects/preview', {
      board_id: board,
      element_id: up.body.element.id,
      composition: 'Cross',
      time: 0,
    });
    assert.equal(res.status, 200, res.text);
    const buf = Buffer.from(await (await fetch(t.baseUrl + res.body.url)).arrayBuffer());
    const { data, info } = await sharp(buf).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const at = (x: number, y: number) => [...data.subarray((y * info.width + x) * 3, (y * info.width + x) * 3 + 3)];
    assert.deepEqual(at(190, 150), [255, 0, 0], 'left of the crossing: red in front');
    assert.deepEqual(at(210, 150), [0, 255, 0], 'right of the crossing: green in front');
    assert.deepEqual(at(240, 150), [255, 0, 0], 'past the green layer: red');
  });

  it('draws the same bytes twice', async () => {
    const body = { board_id: board, element_id: projectId, composition: 'Orbit', time: 1.5 };
    const a = await t.api('POST', '/api/motion/projects/preview', body);
    const b = await t.api('POST', '/api/motion/projects/preview', body);
    const get = async (u: string) => Buffer.from(await (await fetch(t.baseUrl + u)).arrayBuffer());
    assert.ok((await get(a.body.url)).equals(await get(b.body.url)));
  });
});

const CORPUS = path.resolve('../shared/fixtures/after-effects/corpus/KraftyFX__aex');
const haveCorpus = fs.existsSync(CORPUS);
if (!haveCorpus) console.log(`# motion 3D: ${CORPUS} is absent, its cameras and lights are not read`);

describe('motion 3D: cameras and lights of real projects', { skip: haveCorpus ? false : `${CORPUS} is absent` }, () => {
  const read = (name: string) => decodeScene(fs.readFileSync(path.join(CORPUS, name))).compositions[0].layers;

  it('tells a one-node camera from a two-node one (aex: "One-Node", "Two-Node" aiming at [100, 200, 300])', () => {
    const cams = read('cep__test__assets__layer_camera.aep');
    const one = cams.find((l) => l.name === 'One-Node')!;
    const two = cams.find((l) => l.name === 'Two-Node')!;
    assert.equal(one.camera?.twoNode, false);
    assert.equal(two.camera?.twoNode, true);
    assert.deepEqual(two.transform.anchor.value, [100, 200, 300]);
  });

  it("reads each light's type (the layers are named after theirs)", () => {
    const lights = read('cep__test__assets__layer_light.aep').filter((l) => l.light);
    assert.deepEqual(
      lights.map((l) => [l.name, l.light!.lightType]),
      [
        ['Parallel Light', 'parallel'],
        ['Spot Light', 'spot'],
        ['Point Light', 'point'],
        ['Ambient Light', 'ambient'],
      ],
    );
  });
});
