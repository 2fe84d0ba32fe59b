import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DomainError } from '../../src/errors.js';
import { startOpenAIDouble, type OpenAIDouble } from '../helpers/ai-doubles/openai.js';
import { makeImage, makeVideo, tempDir } from '../helpers/fixtures.js';
import { startService, type TestService } from '../helpers/service.js';
import { EventStream, type WireEvent } from './stream.js';

declare module '../../src/jobs/kinds.js' {
  interface JobKinds {
    'events-test.step': { steps: number; fail?: boolean };
  }
}

const OPENAI_KEY = 'sk-test-events-openai-0123';

/**
 * Every kind of event arrives over HTTP, in the order of the writes, and when it arrives a GET already shows the
 * change: each check below reads the resource right after the event came and compares it with the event's data.
 */
describe('live events: every change reaches the stream after its write', () => {
  let svc: TestService;
  let openai: OpenAIDouble;
  let dir: string;
  /** Releases the test job waiting at its gate. */
  const gates = new Map<string, () => void>();

  before(async () => {
    openai = await startOpenAIDouble({ apiKey: OPENAI_KEY });
    svc = await startService({
      OPENAI_API_KEY: OPENAI_KEY,
      OPENAI_BASE_URL: `${openai.url}/v1`,
      GOOGLE_GENERATIVE_AI_API_KEY: '',
      ANTHROPIC_API_KEY: '',
      REPLICATE_API_TOKEN: '',
      FAL_KEY: '',
    });
    dir = await tempDir('bms-events-');
    // A job the test steers: it reports progress, then waits at its gate until released or cancelled.
    svc.service.ctx.jobs.define('events-test.step', async (job) => {
      for (let i = 1; i <= job.params.steps; i++) {
        job.progress(i / job.params.steps);
        await new Promise((r) => setTimeout(r, 5));
      }
      await new Promise<void>((resolve, reject) => {
        gates.set(job.id, resolve);
        job.signal.addEventListener('abort', () => reject(job.signal.reason as Error), { once: true });
      });
      if (job.params.fail) throw new DomainError('invalid_input', 'events_test_failed', 'The test job failed');
      return { result: { steps: job.params.steps } };
    });
  });
  after(async () => {
    await svc.close();
    await openai.close();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  const get = async (url: string) => {
    const res = await svc.api('GET', url);
    return res;
  };
  const envelopeOf = (e: WireEvent, type: string, boardId?: string) => {
    assert.equal(e.event, type, 'the SSE event name is the type');
    assert.equal(e.data.type, type);
    assert.equal(e.id, String(e.data.id), 'the SSE id is the envelope id');
    assert.ok(Number.isSafeInteger(e.data.id));
    assert.ok(!Number.isNaN(Date.parse(e.data.at)), 'at is a time');
    assert.equal(e.data.board_id, boardId);
    return e.data.data;
  };
  const increasing = (events: WireEvent[]) => {
    const ids = events.map((e) => e.data.id as number);
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], `ids increase: ${ids.join(', ')}`);
  };

  it('boards and elements: created, updated, added, moved, data merged, probed, html bumped, deleted', async () => {
    const s = await EventStream.open(svc.baseUrl);
    assert.equal(s.status, 200);
    assert.match(s.res.headers['content-type'] ?? '', /^text\/event-stream/);
    try {
      const board = await svc.createBoard('Live');
      let data = envelopeOf(await s.expect('board.created'), 'board.created', board);
      assert.equal(data.board.element_count, 0);
      const listed = (await get('/api/moodboards')).body.find((b: any) => b.id === board);
      assert.equal(listed.name, 'Live', 'the board is listed when its event arrives');

      await svc.api('PATCH', `/api/moodboards/${board}`, { name: 'Renamed' });
      data = envelopeOf(await s.expect('board.updated'), 'board.updated', board);
      assert.equal(data.board.name, 'Renamed');
      assert.equal((await get(`/api/moodboards/${board}`)).body.name, 'Renamed');

      const added = await svc.api('POST', `/api/moodboards/${board}/elements`, { type: 'text', name: 'note', x: 1 });
      const el = added.body.id as string;
      const elUrl = `/api/moodboards/${board}/elements/${el}`;
      data = envelopeOf(await s.expect('element.added'), 'element.added', board);
      assert.deepEqual(data.element, (await get(elUrl)).body, 'the event carries the element as GET answers it');

      await svc.api('PATCH', elUrl, { x: 40, y: 50, width: 200, name: 'moved', data: { colour: 'red' } });
      data = envelopeOf(await s.expect('element.updated'), 'element.updated', board);
      assert.deepEqual([data.element.x, data.element.y, data.element.width], [40, 50, 200]);
      assert.deepEqual(data.element, (await get(elUrl)).body);

      // Probe facts and the thumbnail are stored in the background: their element.updated is the only sign of them.
      const image = await makeImage(path.join(dir, 'photo.png'), { width: 64, height: 48 });
      const up = await svc.upload(board, image, { addToBoard: true });
      const photo = up.body.element.id as string;
      data = envelopeOf(await s.expect('element.added'), 'element.added', board);
      assert.equal(data.element.id, photo);
      assert.equal(data.element.data.probe_status, 'pending');
      data = envelopeOf(await s.expect('element.updated'), 'element.updated', board);
      assert.equal(data.element.data.probe_status, 'done');
      assert.equal(data.element.data.width, 64);
      assert.match(data.element.data.thumbnail_url, /^\/media\/thumbs\//);
      assert.deepEqual(data.element, (await get(`/api/moodboards/${board}/elements/${photo}`)).body);

      // An html card's next version.
      const card = (await svc.api('POST', `/api/moodboards/${board}/elements`, { type: 'html', name: 'card' })).body;
      await s.nextOf('element.added');
      const written = await svc.api('PUT', `/api/moodboards/${board}/elements/${card.id}/html`, { html: '<p>v2</p>' });
      assert.equal(written.status, 200, written.text);
      data = envelopeOf(
        await s.next((e) => e.event === 'element.updated' && e.data.data.element.data.htmlVersion === 2),
        'element.updated',
        board,
      );
      assert.deepEqual(data.element, (await get(`/api/moodboards/${board}/elements/${card.id}`)).body);

      await svc.api('DELETE', elUrl);
      data = envelopeOf(await s.nextOf('element.deleted'), 'element.deleted', board);
      assert.equal(data.element.id, el);
      assert.equal((await get(elUrl)).status, 404, 'gone when its event arrives');

      await svc.api('DELETE', `/api/moodboards/${board}`);
      data = envelopeOf(await s.nextOf('board.deleted'), 'board.deleted', board);
      assert.equal(data.board.id, board);
      assert.equal((await get(`/api/moodboards/${board}`)).status, 404);
      increasing(s.events);
    } finally {
      s.close();
    }
  });

  it('a render job: queued, progress, the output element, then completed with its url and element', async () => {
    const board = await svc.createBoard('Jobs');
    const video = await makeVideo(path.join(dir, 'clip.mp4'), { duration: 1 });
    const clip = (await svc.upload(board, video, { addToBoard: true })).body.element.id as string;
    const s = await EventStream.open(svc.baseUrl, `?board_id=${board}&types=job.queued,job.progress,job.completed`);
    const all = await EventStream.open(svc.baseUrl, `?board_id=${board}`);
    try {
      const res = await svc.api('POST', '/api/convert-video', {
        board_id: board,
        element_id: clip,
        format: 'webm',
        codec: 'vp9',
        async: true,
      });
      assert.equal(res.status, 202, res.text);
      const jobId = res.body.job_id as string;
      let data = envelopeOf(await s.expect('job.queued'), 'job.queued', board);
      assert.equal(data.job.id, jobId);
      assert.equal(data.job.status, 'queued');
      assert.equal(data.job.params, undefined, 'the public job view, as GET /api/jobs/{id} answers it');
      data = envelopeOf(await s.expect('job.progress'), 'job.progress', board);
      assert.equal(data.job.status, 'running');
      const done = await s.nextOf('job.completed', 60_000);
      data = envelopeOf(done, 'job.completed', board);
      assert.equal(data.job.status, 'complete');
      assert.deepEqual(data.job, (await get(`/api/jobs/${jobId}`)).body, 'the job view GET answers');
      assert.equal(data.element.url, data.job.output_url);
      assert.equal(data.element.id, data.job.result.element.id);
      assert.deepEqual(
        data.element,
        (await get(`/api/moodboards/${board}/elements/${data.element.id}`)).body,
        'the output element is on the board when the event arrives',
      );
      // On the unfiltered stream the output's element.added comes before the job's completion.
      const output = await all.next((e) => e.event === 'element.added' && e.data.data.element.id === data.element.id);
      const completed = await all.nextOf('job.completed');
      assert.ok(output.data.id < completed.data.id);
    } finally {
      s.close();
      all.close();
    }
  });

  it('jobs that fail or are cancelled (queued and running); progress is throttled with the latest value kept', async () => {
    const s = await EventStream.open(
      svc.baseUrl,
      '?types=job.queued,job.progress,job.failed,job.cancelled,job.completed',
    );
    try {
      const jobs = svc.service.ctx.jobs;
      const running = jobs.enqueue('events-test.step', { steps: 200 });
      const waiting = jobs.enqueue('events-test.step', { steps: 1 });
      assert.equal((await s.expect('job.queued')).data.data.job.id, running.id);
      assert.equal((await s.expect('job.queued')).data.data.job.id, waiting.id);
      // 200 progress reports over a second or more: at most 4 events a second reach the stream, the last one too.
      const started = Date.now();
      assert.equal((await s.expect('job.progress')).data.data.job.id, running.id);
      while (!gates.has(running.id)) await new Promise((r) => setTimeout(r, 10));
      const seconds = (Date.now() - started) / 1000;
      await new Promise((r) => setTimeout(r, 600)); // any progress still held back is sent by now
      const progress = s.events.filter((e) => e.event === 'job.progress');
      assert.ok(progress.length >= 2, 'progress events arrive while the job runs');
      assert.ok(progress.length <= Math.ceil(seconds * 4) + 2, `${progress.length} progress events in ${seconds} s`);
      assert.ok(progress.every((e) => e.data.data.job.id === running.id));
      assert.equal(
        progress.at(-1)!.data.data.job.progress,
        (await get(`/api/jobs/${running.id}`)).body.progress,
        'the latest progress is not held back',
      );
      // A render worker's reports arrive through the runner as fast as its queue sends them: a burst of 100 still
      // makes at most two events (one now, the latest after the interval).
      const before = progress.length;
      for (let i = 1; i <= 100; i++) jobs.remoteProgress(running.id, 0.5 + i / 250);
      await new Promise((r) => setTimeout(r, 600));
      const burst = s.events.filter((e) => e.event === 'job.progress').slice(before);
      assert.ok(burst.length >= 1 && burst.length <= 2, `${burst.length} events for a burst of 100 reports`);
      assert.equal(burst.at(-1)!.data.data.job.progress, 0.9);
      assert.equal((await get(`/api/jobs/${running.id}`)).body.progress, 0.9);

      const cancelQueued = await svc.api('POST', `/api/jobs/${waiting.id}/cancel`);
      assert.equal(cancelQueued.status, 200);
      let data = envelopeOf(await s.nextOf('job.cancelled'), 'job.cancelled');
      assert.equal(data.job.id, waiting.id);
      assert.equal(data.job.status, 'cancelled');
      assert.deepEqual(data.job, (await get(`/api/jobs/${waiting.id}`)).body);

      await svc.api('POST', `/api/jobs/${running.id}/cancel`);
      data = envelopeOf(await s.nextOf('job.cancelled'), 'job.cancelled');
      assert.equal(data.job.id, running.id);
      assert.equal(data.job.error_code, 'cancelled');
      assert.deepEqual(data.job, (await get(`/api/jobs/${running.id}`)).body);

      const failing = jobs.enqueue('events-test.step', { steps: 1, fail: true });
      await s.nextOf('job.queued');
      await s.nextOf('job.progress');
      while (!gates.has(failing.id)) await new Promise((r) => setTimeout(r, 10));
      gates.get(failing.id)!();
      data = envelopeOf(await s.nextOf('job.failed'), 'job.failed');
      assert.equal(data.job.id, failing.id);
      assert.equal(data.job.error_code, 'events_test_failed');
      assert.deepEqual(data.job, (await get(`/api/jobs/${failing.id}`)).body);
      increasing(s.events);
    } finally {
      s.close();
    }
  });

  it('a share, a bot of the bridge, agent cards and a generation announce each change', async () => {
    const board = await svc.createBoard('Features');
    const s = await EventStream.open(svc.baseUrl, `?board_id=${board}`);
    try {
      const share = await svc.api('POST', `/api/moodboards/${board}/share`, { kind: 'archive' });
      assert.equal(share.status, 200, share.text);
      let data = envelopeOf(await s.nextOf('share.updated'), 'share.updated', board);
      assert.equal(data.share.share_id, share.body.share_id);
      assert.equal(data.share.state, 'complete');
      assert.equal(data.share.download_url, share.body.download_url);
      assert.equal((await fetch(svc.baseUrl + data.share.download_url)).status, 200);

      const B = '/api/terminal-bridge';
      await svc.api('POST', `${B}/session`, { session_id: 'pty-events', board_id: board, enabled: true });
      data = envelopeOf(await s.nextOf('bridge.status'), 'bridge.status', board);
      assert.equal(data.status.session_enabled, true);
      assert.deepEqual(data.status, (await get(`${B}/status`)).body);
      await svc.api('POST', `${B}/session`, { session_id: 'pty-events', enabled: false });
      data = envelopeOf(await s.nextOf('bridge.status'), 'bridge.status', board);
      assert.equal(data.status.session_enabled, false, 'a follower of the board sees its session leave');
      assert.equal(data.status.board_id, null);

      const el = (await svc.api('POST', `/api/moodboards/${board}/elements`, { type: 'text', name: 'n', x: 1, y: 2 }))
        .body;
      const session = await svc.api('POST', '/api/agents/session', {
        board_id: board,
        agent_type: 'board-helper',
        model: 'gpt-4.1',
      });
      assert.equal(session.status, 200, session.text);
      const sid = session.body.session_id as string;
      openai.chat.push({
        toolCalls: [
          { name: 'add_text', input: { text: 'from the agent', x: 5, y: 6 } },
          { name: 'move_element', input: { element_id: el.id, x: 300, y: 400 } },
        ],
      });
      openai.chat.push({ text: 'Two ideas.' });
      const chat = await svc.api(
        'POST',
        '/api/agents/chat',
        { session_id: sid, messages: [{ role: 'user', content: 'Tidy up' }] },
        { accept: 'application/json' },
      );
      assert.equal(chat.status, 200, chat.text);
      const [text, move] = chat.body.actions;
      for (const card of [text, move]) {
        data = envelopeOf(await s.nextOf('agent.card'), 'agent.card', board);
        assert.equal(data.session_id, sid);
        assert.deepEqual(data.action, { ...card, status: 'proposed' });
      }
      const applied = await svc.api('POST', '/api/agents/apply-action', { session_id: sid, action_id: text.id });
      assert.equal(applied.status, 200, applied.text);
      const newText = await s.nextOf('element.added');
      data = envelopeOf(await s.nextOf('agent.card'), 'agent.card', board);
      assert.equal(data.action.status, 'applied');
      assert.ok(newText.data.id < s.events.at(-1)!.data.id, 'the element comes before the card that added it');
      await svc.api('POST', '/api/agents/reject-action', { session_id: sid, action_id: move.id });
      data = envelopeOf(await s.nextOf('agent.card'), 'agent.card', board);
      assert.deepEqual([data.action.id, data.action.status], [move.id, 'rejected']);

      const generated = await svc.api('POST', '/api/ai/generate', {
        board_id: board,
        model: 'gpt-image-1',
        prompt: 'A heron',
        aspect_ratio: '1:1',
      });
      assert.equal(generated.status, 200, generated.text);
      const entries = [];
      for (;;) {
        const e = await s.nextOf('generation.updated');
        entries.push(envelopeOf(e, 'generation.updated', board).entry);
        if (e.data.data.entry.status === 'complete') break;
      }
      assert.equal(entries[0].status, 'running', 'the request is announced when it is made');
      const history = (await get(`/api/ai/history?board_id=${board}`)).body.entries;
      assert.deepEqual(entries.at(-1), history[0]);
      assert.equal(entries.at(-1).element_id, generated.body.element.id);
      increasing(s.events);
      assert.ok(
        s.events.every((e) => e.data.board_id === board),
        'a board follower gets only that board',
      );
    } finally {
      s.close();
    }
  });
});
