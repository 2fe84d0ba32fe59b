import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startOpenAIDouble, type OpenAIDouble } from '../helpers/ai-doubles/openai.js';
import { eventually, startService, type TestService } from '../helpers/service.js';
import { postSse } from './sse.js';

const KEY = 'sk-test-agents-sessions-99';
const A = '/api/agents';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

describe('agents: sessions, expiry, end-session, disconnects, memory', () => {
  let openai: OpenAIDouble;
  const env = () => ({
    OPENAI_API_KEY: KEY,
    OPENAI_BASE_URL: `${openai.url}/v1`,
    ANTHROPIC_API_KEY: '',
    GOOGLE_GENERATIVE_AI_API_KEY: '',
    REPLICATE_API_TOKEN: '',
    FAL_KEY: '',
    OPENAI_COMPATIBLE_BASE_URL: '',
  });
  let s: TestService;
  let board: string;

  before(async () => {
    openai = await startOpenAIDouble({ apiKey: KEY });
    s = await startService(env());
    board = await s.createBoard('Sessions');
  });
  after(async () => {
    await s.close();
    await openai.close();
  });

  const start = async (svc: TestService, boardId: string) => {
    const res = await svc.api('POST', `${A}/session`, {
      board_id: boardId,
      agent_type: 'board-helper',
      model: 'gpt-4.1',
    });
    assert.equal(res.status, 200, res.text);
    return res.body.session_id as string;
  };
  const hangNextChat = () => openai.script('POST /v1/chat/completions', { hang: true });
  const waitForModelCall = (count: number) =>
    eventually(() => (openai.chatRequests.length >= count ? true : undefined), 10_000, 'the model call');

  it('reads AGENT_SESSION_IDLE_SECONDS: one hour by default, a bad value stops the service at start', () => {
    assert.equal(loadConfig({}).agents.sessionIdleMs, 3600_000);
    assert.equal(loadConfig({ AGENT_SESSION_IDLE_SECONDS: '90' }).agents.sessionIdleMs, 90_000);
    for (const bad of ['0', 'soon', '-5', '9999999']) {
      assert.throws(
        () => loadConfig({ AGENT_SESSION_IDLE_SECONDS: bad }),
        (e: unknown) => e instanceof ConfigError && /AGENT_SESSION_IDLE_SECONDS/.test(e.message),
      );
    }
  });

  it('checks the board, agent type and model; lists the actions of the agent type', async () => {
    const ok = await s.api('POST', `${A}/session`, {
      board_id: board,
      agent_type: 'prompt-suggestor',
      model: 'gpt-4.1-mini',
    });
    assert.equal(ok.status, 200, ok.text);
    assert.match(ok.body.session_id, /^ags_/);
    assert.ok(!Number.isNaN(Date.parse(ok.body.started_at)));
    assert.deepEqual(ok.body.actions, ['generate_image', 'add_text']);
    const cases: [unknown, number, string][] = [
      [{ board_id: board, agent_type: 'janitor', model: 'gpt-4.1' }, 400, 'invalid_request'],
      [{ board_id: board, agent_type: 'terminal', model: 'no-such-model' }, 400, 'unknown_model'],
      [{ board_id: board, agent_type: 'terminal', model: 'gpt-image-1' }, 400, 'unknown_model'],
      [{ board_id: board, agent_type: 'terminal', model: 'claude-sonnet-4-5' }, 400, 'provider_not_configured'],
      [{ board_id: 'bd_nope', agent_type: 'terminal', model: 'gpt-4.1' }, 404, 'not_found'],
      [{ board_id: board, agent_type: 'terminal', model: 'gpt-4.1', extra: 1 }, 400, 'invalid_request'],
    ];
    for (const [body, status, code] of cases) {
      const res = await s.api('POST', `${A}/session`, body);
      assert.equal(res.status, status, `${JSON.stringify(body)} -> ${res.text}`);
      assert.equal(res.body.error.code, code);
    }
    const badChat = await s.api('POST', `${A}/chat`, {
      session_id: ok.body.session_id,
      messages: [{ role: 'system', content: 'obey' }],
    });
    assert.equal(badChat.status, 400);
    assert.match(badChat.body.error.message, /body\.messages\.0\.role/);
    const paths = Object.keys((await s.api('GET', '/api/openapi.json')).body.paths).filter((p) => p.startsWith(A));
    assert.deepEqual(
      paths.sort(),
      ['apply-action', 'auto-apply', 'chat', 'end-session', 'reject-action', 'session'].map((p) => `${A}/${p}`),
    );
    const unknown = await s.api('POST', `${A}/chat`, {
      session_id: 'ags_unknown',
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'session_not_found');
  });

  it('a client that disconnects aborts the model call', async () => {
    const sid = await start(s, board);
    hangNextChat();
    const seen = openai.chatRequests.length;
    const hangUp = new AbortController();
    const pending = postSse(
      s.baseUrl,
      `${A}/chat`,
      { session_id: sid, messages: [{ role: 'user', content: 'take your time' }] },
      { signal: hangUp.signal },
    ).catch((err: Error) => err);
    await waitForModelCall(seen + 1);
    const session = s.service.features.agents.require(sid);
    assert.ok(session.turn, 'the chat is in flight');
    hangUp.abort();
    await pending;
    // The double never answers: the turn can only end because the model call was aborted.
    await eventually(() => (session.turn === undefined ? true : undefined), 10_000, 'the aborted turn');
    openai.chat.push({ text: 'back' });
    const next = await s.api(
      'POST',
      `${A}/chat`,
      { session_id: sid, messages: [{ role: 'user', content: 'again' }] },
      { accept: 'application/json' },
    );
    assert.equal(next.status, 200, next.text);
    assert.equal(next.body.message, 'back');
  });

  it('end-session aborts a chat in flight, frees the session, and is idempotent', async () => {
    const sid = await start(s, board);
    hangNextChat();
    const seen = openai.chatRequests.length;
    const streamed = postSse(s.baseUrl, `${A}/chat`, {
      session_id: sid,
      messages: [{ role: 'user', content: 'long task' }],
    });
    await waitForModelCall(seen + 1);
    const busy = await s.api('POST', `${A}/chat`, {
      session_id: sid,
      messages: [{ role: 'user', content: 'meanwhile' }],
    });
    assert.equal(busy.status, 409);
    assert.equal(busy.body.error.code, 'chat_in_progress');
    const end = await s.api('POST', `${A}/end-session`, { session_id: sid });
    assert.deepEqual(end.body, { session_id: sid, ended: true });
    const answer = await streamed;
    assert.equal(answer.events.at(-1)?.event, 'error');
    assert.equal(answer.events.at(-1)?.data.error.code, 'session_ended');
    assert.equal((await s.api('POST', `${A}/end-session`, { session_id: sid })).status, 200, 'ending twice is fine');
    const later = await s.api('POST', `${A}/auto-apply`, { session_id: sid, enabled: true });
    assert.equal(later.status, 404);
    assert.equal(later.body.error.code, 'session_not_found');
    assert.match(later.body.error.message, /was ended/);
    assert.equal((await s.api('POST', `${A}/end-session`, { session_id: 'ags_never' })).status, 404);

    const doomed = await s.createBoard('Doomed');
    const onDoomed = await start(s, doomed);
    await s.api('DELETE', `/api/moodboards/${doomed}`);
    const afterDelete = await s.api('POST', `${A}/auto-apply`, { session_id: onDoomed, enabled: true });
    assert.equal(afterDelete.body.error.code, 'session_not_found', 'deleting its board ends a session');
  });

  it('expires an idle session: its id then answers 404 session_expired', async () => {
    const t = await startService({ ...env(), AGENT_SESSION_IDLE_SECONDS: '1' });
    try {
      const b = await t.createBoard('Idle');
      const sid = await start(t, b);
      const registry = t.service.features.agents;
      assert.equal(registry.size, 1);
      await eventually(() => (registry.size === 0 ? true : undefined), 10_000, 'the expiry');
      for (const [path, body] of [
        ['chat', { session_id: sid, messages: [{ role: 'user', content: 'hello?' }] }],
        ['apply-action', { session_id: sid, action_id: 'act_x' }],
        ['auto-apply', { session_id: sid, enabled: true }],
      ] as const) {
        const res = await t.api('POST', `${A}/${path}`, body);
        assert.equal(res.status, 404, path);
        assert.equal(res.body.error.code, 'session_expired', path);
      }
      assert.equal((await t.api('POST', `${A}/end-session`, { session_id: sid })).status, 200);
      const other = await t.api('POST', `${A}/auto-apply`, { session_id: 'ags_other', enabled: true });
      assert.equal(other.body.error.code, 'session_not_found');
    } finally {
      await t.close();
    }
  });

  it('a service that stops ends its sessions: a chat in flight gets service_stopping', async () => {
    const t = await startService(env());
    const sid = await start(t, await t.createBoard('Stopping'));
    hangNextChat();
    const seen = openai.chatRequests.length;
    const streamed = postSse(t.baseUrl, `${A}/chat`, {
      session_id: sid,
      messages: [{ role: 'user', content: 'long task' }],
    });
    await waitForModelCall(seen + 1);
    await t.close();
    const answer = await streamed;
    assert.equal(answer.events.at(-1)?.data.error.code, 'service_stopping');
  });

  it('frees memory: 1,000 sessions created and ended (every tenth after a chat) leave the heap near where it began', async (t) => {
    const registry = s.service.features.agents;
    const open = registry.size;
    const note = 'x'.repeat(96 * 1024); // a chatting session holds this turn in its history until it ends
    const refs: WeakRef<object>[] = [];
    const round = async (count: number) => {
      for (let i = 0; i < count; i += 20) {
        await Promise.all(
          Array.from({ length: Math.min(20, count - i) }, async (_, k) => {
            const sid = await start(s, board);
            refs.push(new WeakRef(registry.require(sid)));
            if ((i + k) % 10 === 0) {
              const res = await s.api(
                'POST',
                `${A}/chat`,
                { session_id: sid, messages: [{ role: 'user', content: note }] },
                { accept: 'application/json' },
              );
              assert.equal(res.status, 200, res.text);
              assert.equal(registry.require(sid).history.length, 2);
            }
            assert.equal((await s.api('POST', `${A}/end-session`, { session_id: sid })).status, 200);
          }),
        );
      }
      openai.requests.splice(0); // the double's own log of requests is not the service's memory
    };
    const heap = () => {
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    await round(200); // warm up code paths and caches (the first few hundred sessions grow the heap by ~1.5 MiB once)
    const before = heap();
    await round(1000);
    const afterAll = heap();
    assert.equal(registry.size, open, 'every session of the rounds is gone');
    // A keep-alive connection may still reference its last request's objects (seen: the last one or two chats); a
    // session kept by the service itself would leave hundreds alive.
    const alive = refs.filter((r) => r.deref() !== undefined).length;
    assert.ok(alive <= 20, `${alive} ended sessions are still referenced`);
    const grown = afterAll - before;
    t.diagnostic(`heap growth over 1,000 sessions: ${(grown / 1024).toFixed(0)} KiB`);
    // Kept alive, the 100 chat histories alone would hold over 9 MiB; ended, 1,000 ids are remembered (~0.1 MiB), and
    // the first rounds of a process grow the heap by 1.5-3 MiB once (measured), hence the generous bound.
    assert.ok(grown < 8 * 1024 * 1024, `heap grew by ${(grown / 1024 / 1024).toFixed(1)} MiB`);
  });
});
