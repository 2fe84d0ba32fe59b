import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { eventually, startService, type TestService } from '../helpers/service.js';
import { ffmpeg, makeAudio, makeImage, tempDir } from '../helpers/fixtures.js';

interface Match {
  board_id: string;
  element_id: string;
  url: string;
  name: string;
  distance: number;
  score: number;
}

let t: TestService;
let boardA: string;
let boardB: string;
let fx: string;
let dataDir: string;
const ids: Record<string, string> = {};

async function add(board: string, key: string, file: string): Promise<void> {
  const res = await t.upload(board, file, { addToBoard: true });
  assert.equal(res.status, 200, res.text);
  ids[key] = res.body.element.id;
}

async function similar(board: string, id: string): Promise<Match[]> {
  const res = await t.api('POST', '/api/find-similar', { board_id: board, element_id: id });
  assert.equal(res.status, 200, res.text);
  return res.body.matches;
}

before(async () => {
  dataDir = await tempDir('bms-similar-');
  t = await startService({}, { dataDir });
  boardA = await t.createBoard('originals');
  boardB = await t.createBoard('copies');
  fx = await tempDir();
  const original = await makeImage(path.join(fx, 'original.png'), { width: 400, height: 300 });
  await sharp(original).resize(200).png().toFile(path.join(fx, 'small.png'));
  await sharp(original).jpeg({ quality: 40 }).toFile(path.join(fx, 'compressed.jpg'));
  await sharp(original)
    .extract({ left: 12, top: 9, width: 376, height: 282 })
    .png()
    .toFile(path.join(fx, 'cropped.png'));
  await makeImage(path.join(fx, 'unrelated.png'), { width: 400, height: 300, source: 'mandelbrot' });
  await ffmpeg([
    '-loop',
    '1',
    '-i',
    original,
    '-t',
    '1',
    '-r',
    '10',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    path.join(fx, 'still.mp4'),
  ]);
  await add(boardA, 'original', original);
  for (const key of ['small', 'compressed', 'cropped', 'unrelated']) {
    await add(boardB, key, path.join(fx, key === 'compressed' ? 'compressed.jpg' : `${key}.png`));
  }
  await add(boardB, 'video', path.join(fx, 'still.mp4'));
  await add(boardB, 'audio', await makeAudio(path.join(fx, 'tone.mp3'), { duration: 1 }));
});

after(async () => {
  await t?.close();
  for (const dir of [fx, dataDir]) if (dir) await fsp.rm(dir, { recursive: true, force: true });
});

describe('find-similar', () => {
  it('finds resized, re-compressed, cropped copies and video frames across boards, best first', async () => {
    const wanted = [ids.small, ids.compressed, ids.cropped, ids.video];
    // Copies are hashed in the background after probing; wait until all are indexed.
    const matches = await eventually(
      async () => {
        const m = await similar(boardA, ids.original);
        return wanted.every((id) => m.some((x) => x.element_id === id)) ? m : undefined;
      },
      30_000,
      'all copies indexed',
    );
    assert.ok(!matches.some((m) => m.element_id === ids.original), 'the query element itself is excluded');
    const distances = matches.map((m) => m.distance);
    assert.deepEqual(
      distances,
      [...distances].sort((a, b) => a - b),
    );
    const copy = matches.find((m) => m.element_id === ids.small)!;
    assert.equal(copy.board_id, boardB);
    assert.equal(copy.url, `/media/${boardB}/small.png`);
    assert.equal(copy.name, 'small.png');
    assert.ok(copy.score > 0.9 && copy.score <= 1, `score ${copy.score}`);
    const worstCopy = Math.max(...matches.filter((m) => wanted.includes(m.element_id)).map((m) => m.distance));
    const unrelated = matches.find((m) => m.element_id === ids.unrelated);
    assert.ok(!unrelated || unrelated.distance > worstCopy, 'the unrelated image is not ranked above a copy');
    assert.ok(matches.length <= 50);
  });

  it('keeps the index across a restart', async () => {
    await t.close();
    t = await startService({}, { dataDir });
    const matches = await similar(boardA, ids.original);
    assert.ok(matches.some((m) => m.element_id === ids.compressed));
    assert.ok(matches.some((m) => m.element_id === ids.video));
  });

  it('answers for a copy too, and right after an element is added (hashed on demand if not yet indexed)', async () => {
    const fromCopy = await similar(boardB, ids.cropped);
    assert.ok(fromCopy.some((m) => m.element_id === ids.original));
    const extra = await sharp(path.join(fx, 'original.png')).resize(300).webp().toBuffer();
    const up = await t.upload(boardA, { name: 'lazy.webp', data: extra });
    const el = await t.api('POST', `/api/moodboards/${boardA}/elements`, { type: 'image', url: up.body.url });
    assert.equal(el.status, 201, el.text);
    const lazy = await similar(boardA, el.body.id);
    assert.ok(lazy.some((m) => m.element_id === ids.original));
  });

  it('forgets deleted elements and deleted boards', async () => {
    const del = await t.api('DELETE', `/api/moodboards/${boardB}/elements/${ids.small}`);
    assert.equal(del.status, 204);
    let matches = await similar(boardA, ids.original);
    assert.ok(!matches.some((m) => m.element_id === ids.small));
    assert.ok(matches.some((m) => m.element_id === ids.compressed));
    assert.equal((await t.api('DELETE', `/api/moodboards/${boardB}`)).status, 204);
    matches = await similar(boardA, ids.original);
    assert.ok(!matches.some((m) => m.board_id === boardB));
  });

  it('is 400 for audio and 404 for an unknown element', async () => {
    const board = await t.createBoard('audio');
    const up = await t.upload(board, path.join(fx, 'tone.mp3'), { addToBoard: true });
    const res = await t.api('POST', '/api/find-similar', { board_id: board, element_id: up.body.element.id });
    assert.equal(res.status, 400);
    const missing = await t.api('POST', '/api/find-similar', { board_id: board, element_id: 'el_missing' });
    assert.equal(missing.status, 404);
  });
});
