import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startService, type TestService } from '../helpers/service.js';
import { MAX_OBJECT_KEYS } from '../../src/http/json-body.js';

// Classes of defect the hostile-input probe (bench/probe.bench.ts) found, each checked over HTTP.

let svc: TestService;
let board: string;
before(async () => {
  svc = await startService();
  board = await svc.createBoard();
});
after(() => svc.close());

const wide = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

test('an object of more than MAX_OBJECT_KEYS fields is a 400 naming it, in any body; nothing is stored', async () => {
  const base = `/api/moodboards/${board}/video-projects`;
  const project = (await svc.api('POST', base, { name: 'Wide' })).body;
  const data = { clips: [], channels: [{ id: 'ch', items: [] }] };
  assert.equal((await svc.api('PUT', `${base}/${project.id}`, { data })).status, 200);
  // A project holding a channel of 100,000 fields blocked every later read of it for 1 to 3 s.
  const put = await svc.api('PUT', `${base}/${project.id}`, {
    data: { ...data, channels: [{ id: 'ch', items: [], ...wide(MAX_OBJECT_KEYS + 1) }] },
  });
  assert.equal(put.status, 400, put.text.slice(0, 300));
  assert.equal(put.body.error.code, 'too_many_fields');
  assert.equal(put.body.error.details[0].field, 'body.data.channels.0');
  // Decided on the text before it is parsed: the count stops one past the limit.
  assert.match(
    put.body.error.message,
    new RegExp(`has ${MAX_OBJECT_KEYS + 1} fields or more; .* at most ${MAX_OBJECT_KEYS}`),
  );
  assert.deepEqual((await svc.api('GET', `${base}/${project.id}`)).body.data.channels[0], {
    id: 'ch',
    items: [],
    visible: true,
  });
  // The path is decoded from the text, escapes included.
  const element = await svc.upload(board, { name: 'b.png', data: 'pixels' }, { addToBoard: true });
  const patch = await svc.api('PATCH', `/api/moodboards/${board}/elements/${element.body.element.id}`, {
    data: { 'say "hi"': [{}, wide(MAX_OBJECT_KEYS + 1)] },
  });
  assert.equal(patch.status, 400, patch.text.slice(0, 300));
  assert.equal(patch.body.error.details[0].field, 'body.data.say "hi".1');
  // Malformed text that looks wide (keys that are not strings) is refused as malformed, never a 500.
  const malformed = await svc.api('POST', '/api/moodboards', `{1:{${'1:2,'.repeat(MAX_OBJECT_KEYS + 1)}"a":1}}`);
  assert.equal(malformed.status, 400, malformed.text.slice(0, 300));
  // At the limit, the object is an ordinary one.
  const atLimit = await svc.api('PATCH', `/api/moodboards/${board}`, { name: 'Board', extra: wide(MAX_OBJECT_KEYS) });
  assert.notEqual(atLimit.body?.error?.code, 'too_many_fields', atLimit.text.slice(0, 300));
  // The same in an element's data sent with an upload (the multipart `data` field).
  const up = await svc.upload(board, { name: 'a.png', data: 'pixels' }, { addToBoard: true, data: wide(20_000) });
  assert.equal(up.status, 400, up.text.slice(0, 300));
  assert.equal(up.body.error.code, 'too_many_fields');
});
