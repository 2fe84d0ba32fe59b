import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  BoardMediaError,
  createBoardMediaClient,
  type BoardMediaClient,
  type LiveEvent,
  type UploadProgress,
} from '../../client/src/index.js';
import { startOpenAIDouble, type OpenAIDouble } from '../helpers/ai-doubles/openai.js';
import { tempDir } from '../helpers/fixtures.js';
import { eventually, startService, type TestService } from '../helpers/service.js';

const OPENAI_KEY = 'sk-test-client-0123';
const CARD = '<!doctype html><html><body style="margin:0;background:#0080ff"></body></html>';

/** Resolves once `check` holds (events arrive on their own time). */
const until = (check: () => boolean, what: string) => eventually(() => (check() ? true : undefined), 20_000, what);

/** A fetch that lets a test cut the event stream's connection and hold the next one back until it says so. */
function controlledFetch() {
  const eventRequests: Headers[] = [];
  const jobAnswers: { url: string; status: string }[] = [];
  let cut: (() => void) | undefined;
  let gate: Promise<void> | undefined;
  let open: () => void = () => undefined;
  const f: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.pathname === '/api/events') {
      await gate;
      eventRequests.push(new Headers(init?.headers));
      const res = await fetch(input, init);
      let fail!: () => void;
      const body = res.body!.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          start: (c) => void (fail = () => c.error(new TypeError('connection reset'))),
        }),
      );
      cut = fail;
      return new Response(body, { status: res.status, headers: res.headers });
    }
    const res = await fetch(input, init);
    if (url.pathname.startsWith('/api/jobs/'))
      jobAnswers.push({ url: url.pathname, status: ((await res.clone().json()) as { status: string }).status });
    return res;
  };
  return {
    fetch: f,
    eventRequests,
    jobAnswers,
    /** Breaks the open stream as a network failure would; its reconnect waits for `release`. */
    cut() {
      gate = new Promise((resolve) => (open = resolve));
      cut?.();
    },
    release: () => open(),
  };
}

describe('client: the typed client against a real service', () => {
  let s: TestService;
  let openai: OpenAIDouble;
  let client: BoardMediaClient;
  let dir: string;
  let board: string;

  before(async () => {
    openai = await startOpenAIDouble({ apiKey: OPENAI_KEY });
    s = await startService({
      OPENAI_API_KEY: OPENAI_KEY,
      OPENAI_BASE_URL: `${openai.url}/v1`,
      ANTHROPIC_API_KEY: '',
      GOOGLE_GENERATIVE_AI_API_KEY: '',
      REPLICATE_API_TOKEN: '',
      FAL_KEY: '',
      OPENAI_COMPATIBLE_BASE_URL: '',
      JOB_CONCURRENCY: '1',
    });
    client = createBoardMediaClient({ baseUrl: s.baseUrl });
    dir = await tempDir('bms-client-');
    const { data, error } = await client.api.POST('/api/moodboards', { body: { name: 'Client' } });
    assert.equal(error, undefined);
    board = data!.id;
  });
  after(async () => {
    await s.close();
    await openai.close();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it('calls typed endpoints and answers their error body', async () => {
    const { data, response } = await client.api.GET('/api/moodboards/{id}', { params: { path: { id: board } } });
    assert.equal(response.status, 200);
    assert.equal(data?.name, 'Client');
    assert.deepEqual(data?.elements, []);
    const missing = await client.api.GET('/api/moodboards/{id}', { params: { path: { id: 'bd_missing00000' } } });
    assert.equal(missing.response.status, 404);
    assert.equal(missing.error?.error.code, 'not_found');
  });

  it('uploads a file from disk as a stream, reporting progress up to the whole body, and the bytes arrive', async () => {
    const bytes = crypto.randomBytes(6 * 1024 * 1024 + 17);
    const file = path.join(dir, 'noise.bin');
    await fsp.writeFile(file, bytes);
    const progress: UploadProgress[] = [];
    const answer = await client.upload({
      boardId: board,
      file: await fs.openAsBlob(file),
      filename: 'bruit ü.bin',
      addToBoard: true,
      data: { source: 'client test' },
      onProgress: (p) => progress.push(p),
    });
    assert.equal(answer.filename, 'bruit ü.bin', 'the name went as UTF-8');
    assert.equal(answer.element?.data.source, 'client test');
    assert.ok(progress.length > 2, `${progress.length} progress reports`);
    const total = progress[0].total;
    assert.ok(total > bytes.length && total < bytes.length + 1024, `total ${total}: the file and the form around it`);
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i].loaded > progress[i - 1].loaded);
    assert.ok(
      progress.some((p) => p.loaded < total / 2),
      'progress was reported while the body was being sent',
    );
    assert.equal(progress.at(-1)?.loaded, total);
    const served = Buffer.from(await (await fetch(s.baseUrl + answer.url)).arrayBuffer());
    assert.ok(served.equals(bytes), 'the served file is the uploaded one');
  });

  it('rejects an upload the service refuses with its error code, and honours an abort', async () => {
    const file = new Blob(['hello'], { type: 'text/plain' });
    await assert.rejects(
      client.upload({ boardId: 'bd_missing00000', file, filename: 'a.txt' }),
      (err: BoardMediaError) => err instanceof BoardMediaError && err.status === 404 && err.code === 'not_found',
    );
    await assert.rejects(
      client.upload({ boardId: board, file, filename: 'a.txt', signal: AbortSignal.abort() }),
      (err: Error) => err.name === 'AbortError',
    );
  });

  it('follows the event stream across a cut connection with Last-Event-ID, missing nothing', async () => {
    const control = controlledFetch();
    const c = createBoardMediaClient({ baseUrl: s.baseUrl, fetch: control.fetch });
    const seen: LiveEvent[] = [];
    const states: string[] = [];
    const stream = c.events({
      boardId: board,
      types: ['element.added'],
      onEvent: (e) => seen.push(e),
      onState: (state) => states.push(state),
    });
    await stream.ready;
    const add = async (text: string) => {
      const { response } = await c.api.POST('/api/moodboards/{id}/elements', {
        params: { path: { id: board } },
        body: { type: 'text', name: text, data: { text } },
      });
      assert.equal(response.status, 201);
    };
    const arrived = (n: number) => until(() => seen.length >= n, `${n} events`);
    await add('one');
    await arrived(1);
    const before = stream.lastEventId;
    assert.equal(before, String(seen[0].id));
    control.cut();
    await until(() => states.includes('reconnecting'), 'the cut noticed');
    await add('two');
    await add('three');
    control.release();
    await arrived(3);
    stream.close();
    await stream.closed;
    assert.deepEqual(
      seen.map((e) => (e.type === 'element.added' ? e.data.element.name : e.type)),
      ['one', 'two', 'three'],
      'in order, each once',
    );
    assert.equal(control.eventRequests.length, 2);
    assert.equal(control.eventRequests[1].get('last-event-id'), before);
    assert.deepEqual(states, ['connecting', 'open', 'reconnecting', 'open', 'closed']);
  });

  it('asks to resync when the missed events are no longer kept', async () => {
    const small = await startService({ EVENTS_HISTORY: '1' });
    try {
      const control = controlledFetch();
      const c = createBoardMediaClient({ baseUrl: small.baseUrl, fetch: control.fetch });
      const seen: string[] = [];
      const resyncs: string[] = [];
      const stream = c.events({
        types: ['board.created'],
        onEvent: (e) => seen.push(e.type),
        onResync: (e) => resyncs.push(e.data.reason),
      });
      await stream.ready;
      await small.createBoard('seen');
      await until(() => seen.length === 1, 'the first event');
      control.cut();
      await small.createBoard('missed 1');
      await small.createBoard('missed 2');
      control.release();
      await until(() => resyncs.length === 1, 'resync');
      assert.deepEqual(resyncs, ['history_passed']);
      assert.deepEqual(seen, ['board.created'], 'nothing replayed: the client refetches instead');
      stream.close();
      await stream.closed;
    } finally {
      await small.close();
    }
  });

  it('sends API_TOKEN on every call it makes: typed calls, uploads, the event stream', async () => {
    const token = 'client-test-token-0123456789';
    const guarded = await startService({ API_TOKEN: token });
    try {
      const stranger = createBoardMediaClient({ baseUrl: guarded.baseUrl });
      assert.equal((await stranger.api.GET('/api/moodboards')).response.status, 401);
      const refused = stranger.events({ onEvent: () => undefined });
      await assert.rejects(refused.ready, (err: BoardMediaError) => err.status === 401);
      await refused.closed;

      const owner = createBoardMediaClient({ baseUrl: guarded.baseUrl, token });
      const seen: string[] = [];
      const stream = owner.events({ types: ['element.added'], onEvent: (e) => seen.push(e.type) });
      await stream.ready;
      const { data: made } = await owner.api.POST('/api/moodboards', { body: { name: 'Guarded' } });
      const up = await owner.upload({
        boardId: made!.id,
        file: new Blob(['hi']),
        filename: 'hi.txt',
        addToBoard: true,
      });
      assert.equal(up.filename, 'hi.txt');
      await until(() => seen.length === 1, 'the upload as an event');
      stream.close();
      await stream.closed;
    } finally {
      await guarded.close();
    }
  });

  it('closes for good on a 4xx answer, which asking again would not change', async () => {
    const bad = client.events({ types: ['nope' as 'board.created'], onEvent: () => undefined });
    await assert.rejects(bad.ready, (err: BoardMediaError) => err.status === 400 && /nope/.test(err.message));
    await bad.closed;
  });

  it('waits for a job through the event stream: progress, completion, cancellation', async () => {
    const control = controlledFetch();
    const c = createBoardMediaClient({ baseUrl: s.baseUrl, fetch: control.fetch });
    // startJob: typed by its path, the 202 answer ({job_id, kind, status}) whose kind types waitForJob's result.
    const render = (duration: number, title: string) =>
      c.startJob('/api/html/render', {
        body: { html: CARD, width: 64, height: 64, fps: 10, duration, title, board_id: board, async: true },
      });
    // One job at a time: the long one holds the short one queued until it is cancelled, after the client looked.
    const blocker = await render(20, 'blocker');
    const job = await render(0.5, 'card');
    const progress: string[] = [];
    let looked!: () => void;
    const lookedAtQueued = new Promise<void>((resolve) => (looked = resolve));
    const waiting = c.waitForJob(job, {
      pollIntervalMs: 3_600_000, // no polling while the stream is open: the end can only come through it
      onProgress: (j) => {
        progress.push(j.status);
        if (j.status === 'queued') looked();
      },
    });
    const cancelled = c.waitForJob(blocker);
    await lookedAtQueued;
    const stop = await c.api.POST('/api/jobs/{job_id}/cancel', { params: { path: { job_id: blocker.job_id } } });
    assert.equal(stop.response.status, 200);
    await assert.rejects(
      cancelled,
      (err: BoardMediaError) => err.code === 'cancelled' && err.job?.id === blocker.job_id,
    );
    const done = await waiting;
    assert.equal(done.status, 'complete');
    assert.equal(done.kind, 'html.render');
    assert.equal(done.result.url, done.output_url, 'the result is typed: html.render answers its url');
    assert.equal(done.result.element.type, 'video');
    assert.equal(control.eventRequests.length, 1, 'two waits, one event stream');
    assert.match(done.output_url ?? '', /^\/media\/bd_\w+\/card.*\.mp4$/);
    assert.equal((await fetch(s.baseUrl + done.output_url)).status, 200);
    assert.ok(progress.includes('running'), `progress seen: ${progress.join(', ')}`);
    const gets = control.jobAnswers.filter((a) => a.url === `/api/jobs/${job.job_id}`);
    assert.deepEqual(
      gets.map((a) => a.status),
      ['queued'],
      'one look when the stream opened; the rest came as events',
    );
  });

  it('waits for a job by polling where the service has no event stream', async () => {
    const noEvents: typeof fetch = async (input, init) =>
      new URL(input instanceof Request ? input.url : String(input)).pathname === '/api/events'
        ? new Response('{"error":{"code":"not_found","message":"no such route"}}', { status: 404 })
        : fetch(input, init);
    const c = createBoardMediaClient({ baseUrl: s.baseUrl, fetch: noEvents });
    const { data } = await c.api.POST('/api/html/render', {
      body: {
        html: CARD,
        width: 64,
        height: 64,
        fps: 10,
        duration: 0.3,
        title: 'polled',
        board_id: board,
        async: true,
      },
    });
    const done = await c.waitForJob((data as unknown as { job_id: string }).job_id, { pollIntervalMs: 50 });
    assert.equal(done.status, 'complete');
    await assert.rejects(c.waitForJob('job_missing00000'), (err: BoardMediaError) => err.status === 404);
  });

  it("streams an agent's chat: deltas, the card, then the whole turn", async () => {
    const { data: session } = await client.api.POST('/api/agents/session', {
      body: { board_id: board, agent_type: 'board-helper', model: 'gpt-4.1' },
    });
    assert.ok(session);
    openai.chat.push({ chunks: ['Hel', 'lo '], toolCalls: [{ name: 'add_text', input: { text: 'A note' } }] });
    openai.chat.push({ text: 'Apply it when you like.' });
    const deltas: string[] = [];
    const cards: string[] = [];
    const turn = await client.chat(
      { session_id: session.session_id, messages: [{ role: 'user', content: 'Add a note' }] },
      { onDelta: (d) => deltas.push(d), onAction: (card) => cards.push(`${card.type}:${card.status}`) },
    );
    assert.deepEqual(deltas.slice(0, 2), ['Hel', 'lo ']);
    assert.ok(turn.message.startsWith('Hello'), turn.message);
    assert.ok(turn.message.endsWith('Apply it when you like.'), 'the text of every step');
    assert.deepEqual(cards, ['add_text:proposed']);
    assert.deepEqual(
      turn.actions.map((a) => a.type),
      ['add_text'],
    );
    await assert.rejects(
      client.chat({ session_id: 'ags_missing', messages: [{ role: 'user', content: 'hi' }] }),
      (err: BoardMediaError) => err.status === 404 && err.code === 'session_not_found',
    );
  });
});
