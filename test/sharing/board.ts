import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { makeImage, makeVideo, tempDir } from '../helpers/fixtures.js';
import { eventually, type TestService } from '../helpers/service.js';

export interface SampleBoard {
  board: string;
  ids: Record<'red' | 'blue' | 'video' | 'card' | 'note' | 'blob', string>;
  /** Bytes of the file element (larger than one multipart part when `blobBytes` is). */
  blob: Buffer;
}

export const TOKEN = 'test-share-token-0123456789';

/**
 * A board with one element of each kind the page shows, laid out in a 2 x 3 grid of 200 x 150 cells: two solid-colour
 * images (red, blue), a video, an html card (green, rendered), a text note and a file of random bytes.
 */
export async function sampleBoard(s: TestService, o: { blobBytes?: number; name?: string } = {}): Promise<SampleBoard> {
  const dir = await tempDir();
  const board = await s.createBoard(o.name ?? 'Shared board');
  const add = async (body: Record<string, unknown>) => {
    const res = await s.api('POST', `/api/moodboards/${board}/elements`, body);
    if (res.status !== 201) throw new Error(`add element: ${res.status} ${res.text}`);
    return res.body.id as string;
  };
  const upload = async (file: string) => {
    const res = await s.upload(board, file);
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    return res.body.url as string;
  };
  const cell = (i: number) => ({ x: (i % 3) * 220, y: Math.floor(i / 3) * 170, width: 200, height: 150 });
  const red = await add({
    type: 'image',
    url: await upload(await makeImage(path.join(dir, 'red.png'), { width: 800, height: 600, source: 'color=c=red' })),
    name: 'Red',
    ...cell(0),
  });
  const blue = await add({
    type: 'image',
    url: await upload(await makeImage(path.join(dir, 'blue.jpg'), { width: 400, height: 300, source: 'color=c=blue' })),
    name: 'Blue',
    ...cell(1),
  });
  const video = await add({
    type: 'video',
    url: await upload(await makeVideo(path.join(dir, 'clip.mp4'), { width: 320, height: 240, duration: 1 })),
    name: 'Clip',
    ...cell(2),
  });
  const card = await add({ type: 'html', name: 'Card', data: { duration: 0.2 }, ...cell(3) });
  const put = await s.api('PUT', `/api/moodboards/${board}/elements/${card}/html`, {
    html: '<!doctype html><body style="margin:0;background:rgb(0,200,0)"><h1>card</h1></body>',
  });
  if (put.status !== 200) throw new Error(`card html: ${put.status} ${put.text}`);
  const note = await add({ type: 'text', name: 'Note', data: { text: 'A note on the board' }, ...cell(4) });
  const blob = crypto.randomBytes(o.blobBytes ?? 4096);
  const blobUrl = await upload(
    await fsp.writeFile(path.join(dir, 'data.bin'), blob).then(() => path.join(dir, 'data.bin')),
  );
  const blobId = await add({ type: 'file', url: blobUrl, name: 'Data', ...cell(5) });
  // Posters and sizes come from the probe.
  await eventually(
    async () => {
      const els = (await s.api('GET', `/api/moodboards/${board}/elements`)).body as {
        data: { probe_status?: string };
      }[];
      return els.every((e) => e.data.probe_status !== 'pending') ? true : undefined;
    },
    30_000,
    'probes',
  );
  await fsp.rm(dir, { recursive: true, force: true });
  return { board, ids: { red, blue, video, card, note, blob: blobId }, blob };
}
