import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startService, type TestService } from '../helpers/service.js';
import { AgentService, MAX_LIVE_SESSIONS } from '../../src/agents/sessions.js';

// Sizes no real client sends: each is refused with a 4xx that names the field and the limit, before any work, and
// the service keeps answering meanwhile. The service runs in this process, so the monitor sees its event loop; the
// timings themselves are in bench/hostile.bench.ts.

let svc: TestService;
let board: string;
const loop = monitorEventLoopDelay({ resolution: 10 });
before(async () => {
  svc = await startService();
  board = await svc.createBoard();
  loop.enable();
});
after(async () => {
  loop.disable();
  // For the reader, not asserted (timings go to bench/hostile.bench.ts): the loop's delay over this whole file.
  console.log(
    `event-loop delay over the file: max ${(loop.max / 1e6).toFixed(0)} ms, p99 ${(loop.percentile(99) / 1e6).toFixed(0)} ms`,
  );
  await svc.close();
});

/** Sends `/api/health` every 20 ms while `work` runs; every answer must be a 200. */
async function withHealthChecks<T>(work: () => Promise<T>): Promise<{ result: T; health: number[] }> {
  const health: Promise<number>[] = [];
  const timer = setInterval(() => health.push(fetch(`${svc.baseUrl}/api/health`).then((r) => r.status)), 20);
  try {
    const result = await work();
    return { result, health: await Promise.all(health) };
  } finally {
    clearInterval(timer);
  }
}

const tmpFiles = () => fs.readdirSync(path.join(svc.dataDir, 'tmp'));
const boardFiles = () => fs.readdirSync(path.join(svc.dataDir, 'media', 'admin', board));

test('a 100 KB upload filename is a 400 naming the field and the limit; nothing is written', async () => {
  const form = new FormData();
  form.set('board_id', board);
  form.set('file', new Blob(['pixels']), `${'A'.repeat(102_400)}.png`);
  const { result, health } = await withHealthChecks(() =>
    fetch(`${svc.baseUrl}/api/upload`, { method: 'POST', body: form }),
  );
  const body = (await result.json()) as any;
  assert.equal(result.status, 400, JSON.stringify(body).slice(0, 300));
  assert.equal(body.error.details[0].field, 'file.filename');
  assert.match(body.error.message, /1024 characters/);
  assert.ok(health.every((s) => s === 200));
  assert.deepEqual(boardFiles(), []);
  assert.deepEqual(tmpFiles(), []);
  // The element data sent with an upload has the JSON limits of a body.
  const many = await svc.upload(
    board,
    { name: 'a.png', data: 'pixels' },
    { addToBoard: true, data: { list: Array(100_000).fill(0) } },
  );
  assert.equal(many.status, 400, many.text.slice(0, 300));
  assert.equal(many.body.error.code, 'too_many_values');
  assert.deepEqual(boardFiles(), []);
  assert.deepEqual(tmpFiles(), []);
  // A name at the limit is still a file: cut to 180 bytes.
  const ok = await svc.upload(board, { name: `${'B'.repeat(1020)}.png`, data: 'pixels' });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.body.filename, `${'B'.repeat(176)}.png`);
});

test('a 32 MB JSON body is a 413 naming the limit, refused before it is parsed', async () => {
  const before = await svc.api('GET', `/api/moodboards/${board}`);
  const json = `{"name":"${'x'.repeat(32 * 1000 * 1000)}"}`;
  const { result, health } = await withHealthChecks(() =>
    svc.api('PATCH', `/api/moodboards/${board}`, json, { 'content-type': 'application/json' }),
  );
  assert.equal(result.status, 413, result.text.slice(0, 300));
  assert.equal(result.body.error.code, 'payload_too_large');
  assert.match(result.body.error.message, /1048576 bytes, the limit of PATCH \/api\/moodboards\/:id/);
  assert.equal(result.body.error.details[0].field, 'body');
  assert.ok(health.every((s) => s === 200));
  assert.deepEqual((await svc.api('GET', `/api/moodboards/${board}`)).body, before.body);
});

test('a 100,000-item video project is a 400 naming the items and the limit; the saved project is unchanged', async () => {
  const project = (await svc.api('POST', `/api/moodboards/${board}/video-projects`, { name: 'p' })).body;
  const url = `/api/moodboards/${board}/video-projects/${project.id}`;
  const items = Array.from({ length: 100_000 }, () => ({ clipId: 'c', trimEnd: 1 }));
  const data = { clips: [{ id: 'c', url: '/media/x.png', mediaType: 'image' }], channels: [{ id: 'ch', items }] };
  const { result, health } = await withHealthChecks(() => svc.api('PUT', url, { data }));
  assert.equal(result.status, 400, result.text.slice(0, 300));
  assert.equal(result.body.error.details[0].field, 'body.data.channels[].items');
  assert.match(result.body.error.message, /100000 items in all; a project may have at most 10000/);
  assert.ok(health.every((s) => s === 200));
  assert.deepEqual((await svc.api('GET', url)).body.data, project.data);
  assert.equal((await svc.api('POST', `${url}/render`, {})).status, 400, 'the empty project renders nothing');
});

test('video projects: counts, an absurd length and oversized JSON are refused by name', async () => {
  const project = (await svc.api('POST', `/api/moodboards/${board}/video-projects`, { name: 'limits' })).body;
  const url = `/api/moodboards/${board}/video-projects/${project.id}`;
  const clip = { id: 'c', url: '/media/x.png', mediaType: 'image' };
  const put = (data: unknown) => svc.api('PUT', url, { data });

  const channels = await put({ channels: Array.from({ length: 1001 }, (_, i) => ({ id: `ch${i}` })) });
  assert.equal(channels.status, 400);
  assert.equal(channels.body.error.details[0].field, 'body.data.channels');
  assert.match(channels.body.error.message, /at most 1000/);

  const clips = await put({ clips: Array.from({ length: 10_001 }, (_, i) => ({ id: `c${i}` })) });
  assert.equal(clips.status, 400);
  assert.equal(clips.body.error.details[0].field, 'body.data.clips');

  const keys = Array.from({ length: 100_001 }, () => ({ position: 0, value: 1 }));
  const keyframes = await put({ channels: [{ items: [{ propertyKeyframes: { zoom: keys } }] }] });
  assert.equal(keyframes.status, 400);
  assert.match(keyframes.body.error.message, /100001 keyframes in all; a project may have at most 100000/);

  for (const trimEnd of [1e6, 1e308]) {
    const long = await put({ clips: [clip], channels: [{ id: 'ch', items: [{ clipId: 'c', trimEnd }] }] });
    assert.equal(long.status, 400, `trimEnd ${trimEnd}`);
    assert.equal(long.body.error.details[0].field, 'body.data.channels[0].items[0]');
    assert.match(long.body.error.message, /at most 43200 s/);
  }
  // Hidden channels count as well: they are one click from being rendered.
  const hidden = await put({
    clips: [clip],
    channels: [{ visible: false, items: [{ clipId: 'c', start: 43_000, trimEnd: 201 }] }],
  });
  assert.equal(hidden.status, 400);

  const big = await put({ clips: [clip], notes: 'n'.repeat(8 * 1024 * 1024) });
  assert.equal(big.status, 400, big.text.slice(0, 300));
  assert.equal(big.body.error.details[0].field, 'body.data');
  assert.match(big.body.error.message, /at most 8388608 bytes/);

  const tooBig = await put({ notes: 'n'.repeat(9 * 1024 * 1024) });
  assert.equal(tooBig.status, 413);

  // Bytes are not the whole cost: 8 MiB of `[0]` is 4 million values, refused before they are parsed.
  const values = await svc.api('PUT', url, `{"data":{"notes":[${Array(2_000_000).fill('[0]').join(',')}]}}`);
  assert.equal(values.status, 400);
  assert.equal(values.body.error.code, 'too_many_values');
  assert.match(values.body.error.message, /holds 4000003 JSON values; at most 500000 are accepted/);
  const small = await svc.api('PATCH', `/api/moodboards/${board}`, `[${Array(100_001).fill('0').join(',')}]`);
  assert.equal(small.status, 400, 'other routes take 100,000 values');
  assert.equal(small.body.error.code, 'too_many_values');

  const many = await put({
    clips: [clip],
    channels: [{ id: 'ch', items: Array.from({ length: 501 }, () => ({ clipId: 'c', trimEnd: 1 })) }],
  });
  assert.equal(many.status, 200, 'saved: 501 items are a project');
  const render = await svc.api('POST', `${url}/render`, {});
  assert.equal(render.status, 400, 'but more layers than one render composes');
  assert.match(render.body.error.message, /501 items on visible channels; a render composes at most 500/);

  // At the limits a project saves: twelve hours of still image.
  const fine = await put({ clips: [clip], channels: [{ id: 'ch', items: [{ clipId: 'c', trimEnd: 43_200 }] }] });
  assert.equal(fine.status, 200, fine.text);
  assert.equal(fine.body.duration, 43_200);
});

test('stored states are bounded: element data, mockup projects, generation params, camera presets', async () => {
  const el = (await svc.api('POST', `/api/moodboards/${board}/elements`, { type: 'text', data: { a: 1 } })).body;
  const elementUrl = `/api/moodboards/${board}/elements/${el.id}`;
  const half = 'h'.repeat(600 * 1024);
  assert.equal((await svc.api('PATCH', elementUrl, { data: { one: half } })).status, 200);
  const merged = await svc.api('PATCH', elementUrl, { data: { two: half } });
  assert.equal(merged.status, 400, 'two merges past 1 MiB');
  assert.equal(merged.body.error.details[0].field, 'body.data');
  assert.match(merged.body.error.message, /at most 1048576 bytes/);
  const now = (await svc.api('GET', `/api/moodboards/${board}`)).body.elements.find((e: any) => e.id === el.id);
  assert.deepEqual(Object.keys(now.data).sort(), ['a', 'one'], 'the refused merge stored nothing');

  const mockup = (await svc.api('POST', `/api/moodboards/${board}/mockup-projects`, { name: 'm', device: 'iphone' }))
    .body;
  const mockupUrl = `/api/moodboards/${board}/mockup-projects/${mockup.id}`;
  const { id: _id, created_at: _c, updated_at: _u, ...state } = mockup;
  const huge = await svc.api('PUT', mockupUrl, { ...state, extra: Array.from({ length: 100_000 }, () => [0, 0]) });
  assert.equal(huge.status, 400, huge.text.slice(0, 300));
  assert.equal(huge.body.error.details[0].field, 'body');
  assert.deepEqual((await svc.api('GET', mockupUrl)).body, mockup);

  const params = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`p${i}`, 'v'.repeat(2000)]));
  const generation = await svc.api('POST', '/api/ai/generate', {
    board_id: board,
    model: 'no/such-model',
    prompt: 'a cat',
    aspect_ratio: '1:1',
    params,
  });
  assert.equal(generation.status, 400, generation.text.slice(0, 300));
  assert.equal(generation.body.error.details[0].field, 'body.params');
  assert.match(generation.body.error.message, /at most 65536 bytes/);

  const props = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`p${i}`, '1']));
  const preset = await svc.api('POST', '/api/camera-presets', {
    name: 'many',
    keyframes: [{ position: 0, properties: props }],
  });
  assert.equal(preset.status, 400);
  assert.match(preset.body.error.details[0].field, /^body\.keyframes\.0\.properties/);
});

test('agent sessions held in memory are bounded: the session past the limit is a 409', () => {
  const sessions = new AgentService(60_000, () => {});
  const input = { boardId: 'bd_x', agentType: 'board-helper' as const, model: 'm' };
  for (let i = 0; i < MAX_LIVE_SESSIONS; i++) sessions.create(input);
  assert.throws(() => sessions.create(input), { code: 'too_many_sessions' });
  assert.equal(sessions.size, MAX_LIVE_SESSIONS);
});
