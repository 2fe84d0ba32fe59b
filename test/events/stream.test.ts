import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../helpers/fixtures.js';
import { eventually, logCapture, startService, type TestService } from '../helpers/service.js';
import { EventStream, type WireEvent } from './stream.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const types = (events: WireEvent[]) => events.map((e) => `${e.event}:${e.data.board_id ?? ''}`);

describe('the event stream: filters, replay, resync, heartbeats, shutdown, validation', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService({ EVENTS_HISTORY: '5', EVENTS_HEARTBEAT_MS: '100' });
  });
  after(() => svc.close());

  const addText = async (board: string) =>
    (await svc.api('POST', `/api/moodboards/${board}/elements`, { type: 'text', name: 't' })).body.id as string;

  it('?board_id= follows one board, ?types= some types, both together', async () => {
    const [a, b] = [await svc.createBoard('A'), await svc.createBoard('B')];
    const onA = await EventStream.open(svc.baseUrl, `?board_id=${a}`);
    const typed = await EventStream.open(svc.baseUrl, '?types=element.added,board.deleted');
    const both = await EventStream.open(svc.baseUrl, `?board_id=${a}&types=element.added,%20board.deleted`);
    try {
      const elA = await addText(a);
      await addText(b);
      await svc.api('PATCH', `/api/moodboards/${a}/elements/${elA}`, { x: 3 });
      await svc.api('DELETE', `/api/moodboards/${b}`);
      await svc.api('DELETE', `/api/moodboards/${a}`);
      for (const s of [onA, typed, both]) await s.next((e) => e.event === 'board.deleted' && e.data.board_id === a);
      assert.deepEqual(types(onA.events), [`element.added:${a}`, `element.updated:${a}`, `board.deleted:${a}`]);
      assert.deepEqual(types(typed.events), [
        `element.added:${a}`,
        `element.added:${b}`,
        `board.deleted:${b}`,
        `board.deleted:${a}`,
      ]);
      assert.deepEqual(types(both.events), [`element.added:${a}`, `board.deleted:${a}`]);
    } finally {
      for (const s of [onA, typed, both]) s.close();
    }
  });

  it('Last-Event-ID (header or ?last_event_id=) replays what was missed, filtered; an older gap gets one resync', async () => {
    const board = await svc.createBoard('Replay');
    const first = await EventStream.open(svc.baseUrl);
    const el = await addText(board);
    const seen = await first.expect('element.added');
    first.close();
    // Missed while away: three changes.
    for (const x of [1, 2, 3]) await svc.api('PATCH', `/api/moodboards/${board}/elements/${el}`, { x });

    const back = await EventStream.open(svc.baseUrl, '', { 'last-event-id': seen.id! });
    try {
      const missed = [await back.expect('element.updated'), await back.expect('element.updated')];
      missed.push(await back.expect('element.updated'));
      assert.deepEqual(
        missed.map((e) => e.data.data.element.x),
        [1, 2, 3],
      );
      assert.deepEqual(
        missed.map((e) => e.data.id),
        [1, 2, 3].map((n) => Number(seen.id) + n),
        'ids follow on from the one given',
      );
      // ... and then the stream goes on live.
      await svc.api('PATCH', `/api/moodboards/${board}/elements/${el}`, { x: 4 });
      assert.equal((await back.expect('element.updated')).data.data.element.x, 4);
    } finally {
      back.close();
    }

    const query = await EventStream.open(svc.baseUrl, `?last_event_id=${Number(seen.id) + 2}&types=element.updated`);
    try {
      assert.deepEqual(
        [
          (await query.expect('element.updated')).data.data.element.x,
          (await query.expect('element.updated')).data.data.element.x,
        ],
        [3, 4],
        '?last_event_id= for clients that cannot set the header',
      );
    } finally {
      query.close();
    }

    // The history holds 5 events (EVENTS_HISTORY): after 6 more, the first id is too old.
    for (let x = 10; x < 16; x++) await svc.api('PATCH', `/api/moodboards/${board}/elements/${el}`, { x });
    const probe = await EventStream.open(svc.baseUrl);
    await svc.api('PATCH', `/api/moodboards/${board}/elements/${el}`, { x: 16 });
    const newest = await probe.expect('element.updated');
    probe.close();
    const late = await EventStream.open(svc.baseUrl, '', { 'last-event-id': seen.id! });
    try {
      const resync = await late.expect('resync');
      assert.equal(resync.data.data.reason, 'history_passed');
      assert.equal(resync.data.data.last_event_id, seen.id);
      assert.equal(resync.id, newest.id, 'its id is the newest, so the next reconnect continues from there');
      await svc.api('PATCH', `/api/moodboards/${board}/elements/${el}`, { x: 17 });
      assert.equal((await late.expect('element.updated')).data.data.element.x, 17, 'then live events, nothing else');
    } finally {
      late.close();
    }
    // Just inside the history: replayed, no resync.
    const edge = await EventStream.open(svc.baseUrl, '', { 'last-event-id': String(Number(newest.id) - 4) });
    try {
      assert.deepEqual(
        [await edge.expect('element.updated'), await edge.expect('element.updated')].map((e) => e.data.data.element.x),
        [13, 14],
      );
    } finally {
      edge.close();
    }

    const future = await EventStream.open(svc.baseUrl, '', { 'last-event-id': String(Number(newest.id) + 1000) });
    try {
      assert.equal((await future.expect('resync')).data.data.reason, 'unknown_id');
    } finally {
      future.close();
    }
  });

  it('heartbeat comments keep an idle stream busy', async () => {
    const s = await EventStream.open(svc.baseUrl, '?board_id=bd_nothinghere');
    try {
      await eventually(() => (s.comments.filter((c) => c === 'heartbeat').length >= 3 ? true : undefined), 5000);
      assert.equal(s.events.length, 0);
      assert.match(s.raw, /^retry: \d+\n: stream open\n\n/, 'the stream opens with its reconnect delay');
    } finally {
      s.close();
    }
  });

  it('requests it cannot serve are refused before the stream opens', async () => {
    const cases: [string, Record<string, string>, string][] = [
      ['?types=element.added,nope', {}, 'invalid_request'],
      ['?types=resync', {}, 'invalid_request'],
      ['?last_event_id=12ab', {}, 'invalid_request'],
      ['?board_id=', {}, 'invalid_request'],
      ['?other=1', {}, 'invalid_request'],
      ['', { 'last-event-id': 'yesterday' }, 'invalid_request'],
    ];
    for (const [query, headers, code] of cases) {
      const s = await EventStream.open(svc.baseUrl, query, headers);
      assert.equal(s.status, 400, query);
      assert.equal(s.body.error.code, code, `${query}: ${JSON.stringify(s.body)}`);
    }
  });

  it('ids keep increasing across a restart; an id from the last run gets a resync; shutdown ends open streams', async () => {
    const dataDir = await tempDir('bms-events-restart-');
    try {
      const one = await startService({}, { dataDir });
      const s = await EventStream.open(one.baseUrl);
      await one.createBoard('before');
      const old = await s.expect('board.created');
      await one.close();
      await eventually(() => (s.ended ? true : undefined), 5000, 'the stream to end with the service');

      const two = await startService({}, { dataDir });
      try {
        const again = await EventStream.open(two.baseUrl, '', { 'last-event-id': old.id! });
        assert.equal((await again.expect('resync')).data.data.reason, 'history_passed');
        await two.createBoard('after');
        const next = await again.expect('board.created');
        assert.ok(Number(next.id) > Number(old.id), `${next.id} > ${old.id}`);
        again.close();
      } finally {
        await two.close();
      }
    } finally {
      await fsp.rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a slow client is dropped, never buffered without bound', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService({ EVENTS_MAX_BUFFER_BYTES: '65536', EVENTS_HISTORY_BYTES: '4194304' });
  });
  after(() => svc.close());

  /** A client that asks for the stream and then reads nothing until told to (its socket stops taking bytes). */
  const stalledStream = (port: number) => {
    let text = '';
    let res: http.IncomingMessage | undefined;
    const closed = new Promise<void>((resolve) => {
      const req = http.get({ port, host: '127.0.0.1', path: '/api/events' }, (r) => {
        res = r;
        r.pause();
        r.on('close', () => resolve());
        r.on('error', () => undefined); // cut off: the test looks at what arrived
      });
      req.on('error', () => resolve());
    });
    return {
      closed,
      complete: () => res!.complete,
      read: () => {
        res!.setEncoding('utf8');
        res!.on('data', (chunk: string) => (text += chunk));
        res!.resume();
        return closed.then(() => text);
      },
    };
  };

  it('past EVENTS_MAX_BUFFER_BYTES a client that does not read gets `dropped` and is closed; readers go on', async () => {
    const hub = svc.service.features.events.hub;
    const board = await svc.createBoard('Big');
    const el = (await svc.api('POST', `/api/moodboards/${board}/elements`, { type: 'text' })).body.id as string;
    const reader = await EventStream.open(svc.baseUrl);
    const stalled = stalledStream(svc.port);
    const silent = stalledStream(svc.port);
    await eventually(() => (hub.clients === 3 ? true : undefined), 5000, 'three streams');
    // 512 KiB events until the kernel's socket buffers are full and the service's own buffer passes the bound.
    const blob = 'x'.repeat(512 * 1024);
    let patches = 0;
    while (hub.clients > 1) {
      assert.ok(patches < 400, `still ${hub.clients} clients after ${patches} events of 512 KiB`);
      await svc.api('PATCH', `/api/moodboards/${board}/elements/${el}`, { data: { blob, n: patches++ } });
    }

    assert.equal(hub.clients, 1, 'both stalled clients are dropped; the reader stays');

    // The stalled one reads again: everything before the drop, then the `dropped` event, then the end.
    const text = await stalled.read();
    const lastBlock = text.trimEnd().split('\n\n').at(-1)!;
    assert.match(lastBlock, /^id: \d+\nevent: dropped\ndata: /);
    const dropped = JSON.parse(lastBlock.split('\ndata: ')[1]);
    assert.equal(dropped.data.reason, 'slow_client');
    assert.ok(dropped.data.buffered_bytes > 65536);
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => m[1]);
    assert.equal(ids.at(-1), ids.at(-2), '`dropped` carries the id of the last event before it, to reconnect from');

    // The one that never reads is cut off after the grace period (5 s): when it reads again, its stream stops short
    // of its end (what the service still held for it was thrown away).
    await sleep(5500);
    const cut = await silent.read();
    assert.ok(!cut.includes('event: dropped'), 'the service did not wait for it to take its last event');
    assert.equal(silent.complete(), false);

    // The reader got every event, in order.
    await svc.api('PATCH', `/api/moodboards/${board}/elements/${el}`, { data: { blob: null, n: patches } });
    const last = await reader.next((e) => e.event === 'element.updated' && e.data.data.element.data.n === patches);
    assert.equal(reader.events.filter((e) => e.event === 'element.updated').length, patches + 1);
    assert.equal(last.data.data.element.data.blob, undefined);
    reader.close();
  });
});

describe('the guard: token, ?token= and Origin, as on every endpoint', () => {
  const token = 'events-token-0123456789abcdef';
  let svc: TestService;
  const log = logCapture();
  before(async () => {
    svc = await startService(
      { API_TOKEN: token, ALLOWED_ORIGINS: 'http://app.example', LOG_LEVEL: 'info' },
      { logStream: log.stream },
    );
  });
  after(() => svc.close());

  it('no token or a wrong one: 401; the header or ?token= opens the stream; a foreign Origin: 403', async () => {
    const none = await EventStream.open(svc.baseUrl);
    assert.equal(none.status, 401);
    assert.equal(none.body.error.code, 'unauthorized');
    assert.equal((await EventStream.open(svc.baseUrl, '?token=wrong-token-000000000')).status, 401);

    const viaQuery = await EventStream.open(svc.baseUrl, `?token=${token}`);
    const viaHeader = await EventStream.open(svc.baseUrl, '', { authorization: `Bearer ${token}` });
    try {
      assert.equal(viaQuery.status, 200);
      assert.equal(viaHeader.status, 200);
      await svc.createBoard('Guarded');
      assert.equal((await viaQuery.expect('board.created')).data.data.board.name, 'Guarded');
      assert.equal((await viaHeader.expect('board.created')).data.data.board.name, 'Guarded');
    } finally {
      viaQuery.close();
      viaHeader.close();
    }

    const foreign = await EventStream.open(svc.baseUrl, `?token=${token}`, { origin: 'http://evil.example' });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.body.error.code, 'forbidden_origin');
    const crossSite = await EventStream.open(svc.baseUrl, `?token=${token}`, { 'sec-fetch-site': 'cross-site' });
    assert.equal(crossSite.status, 403);

    const allowed = await EventStream.open(svc.baseUrl, `?token=${token}`, { origin: 'http://app.example' });
    try {
      assert.equal(allowed.status, 200);
      assert.equal(allowed.res.headers['access-control-allow-origin'], 'http://app.example');
    } finally {
      allowed.close();
    }
    // EventSource sends Last-Event-ID when it reconnects: a preflight for it is allowed.
    const preflight = await fetch(`${svc.baseUrl}/api/events`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://app.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'last-event-id',
      },
    });
    assert.equal(preflight.status, 204);
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Last-Event-ID/);

    // ?token= is for the stream (and /media) only.
    assert.equal(
      (await svc.api('GET', `/api/moodboards?token=${token}`, undefined, { authorization: '' })).status,
      401,
    );
    await sleep(50);
    const urls = log
      .lines()
      .map((l) => (l.req as { url?: string } | undefined)?.url)
      .filter(Boolean);
    assert.ok(urls.includes('/api/events?token=[redacted]'), JSON.stringify(urls));
    assert.ok(!JSON.stringify(log.lines()).includes(token), 'the token never reaches the log');
  });
});
