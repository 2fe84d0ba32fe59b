import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startService, eventually, type TestService } from '../helpers/service.js';

const B = '/api/terminal-bridge';

/** In-memory bot state must only come from writes that create state (arm, link), never from reads or waits. */
describe('terminal bridge: memory per bot id', () => {
  let svc: TestService;
  let board: string;
  let bots: () => number;
  before(async () => {
    svc = await startService();
    board = await svc.createBoard('Memory board');
    const bridge = svc.service.features.bridge;
    assert.ok(bridge, 'the bridge feature is registered');
    bots = () => bridge.botCount;
  });
  after(() => svc.close());

  it('leaves nothing behind for polls, status reads and refused writes naming new bot ids', async () => {
    const before = bots();
    for (let i = 0; i < 200; i++) {
      const id = `probe-${i}`;
      const answers = await Promise.all([
        svc.api('GET', `${B}/to-messenger?wait=0&bot_id=${id}`),
        svc.api('GET', `${B}/to-terminal?wait=0&bot_id=${id}`),
        svc.api('GET', `${B}/status?bot_id=${id}`),
        svc.api('POST', `${B}/to-terminal`, { kind: 'text', text: 'hi', bot_id: id }),
        svc.api('POST', `${B}/to-messenger`, { text: 'hi', bot_id: id }),
        svc.api('POST', `${B}/session`, { enabled: false, bot_id: id }),
        svc.api('POST', `${B}/chat`, { enabled: false, bot_id: id }),
      ]);
      for (const a of answers) assert.equal(a.status, 200);
    }
    assert.equal(bots(), before);
  });

  it('holds an entry only while a poll waits, and drops it when the wait times out or the client goes away', async () => {
    const before = bots();
    const waits = Array.from({ length: 20 }, (_, i) => svc.api('GET', `${B}/to-messenger?wait=0.5&bot_id=waiter-${i}`));
    await eventually(() => (bots() === before + 20 ? true : undefined), 5_000, 'the 20 waiting polls');
    for (const w of await Promise.all(waits)) assert.deepEqual(w.body, { items: [] });
    assert.equal(bots(), before);

    const gone = new AbortController();
    const poll = fetch(`${svc.baseUrl}${B}/to-terminal?wait=30&bot_id=leaver`, { signal: gone.signal }).catch(
      () => undefined,
    );
    await eventually(() => (bots() === before + 1 ? true : undefined), 5_000, 'the waiting poll');
    gone.abort();
    await poll;
    await eventually(
      () => (bots() === before ? true : undefined),
      5_000,
      'the entry of the poll that went away to be dropped',
    );
  });

  it('a poll that waits for a bot that has no state yet still gets the items once the bot becomes active', async () => {
    const before = bots();
    const poll = svc.api('GET', `${B}/to-messenger?wait=10&bot_id=early`);
    await eventually(() => (bots() === before + 1 ? true : undefined), 5_000, 'the waiting poll');
    await svc.api('POST', `${B}/session`, { session_id: 'pty-early', board_id: board, enabled: true, bot_id: 'early' });
    await svc.api('POST', `${B}/chat`, { chat_id: 9, enabled: true, bot_id: 'early' });
    await svc.api('POST', `${B}/to-messenger`, { text: 'for the early poll', bot_id: 'early' });
    const answer = await poll;
    assert.deepEqual(
      answer.body.items.map((i: { text: string }) => i.text),
      ['for the early poll'],
    );
    assert.equal(bots(), before + 1, 'an armed and linked bot stays in memory');
  });

  it('keeps a bot that holds state and drops it once it holds none', async () => {
    const before = bots();
    await svc.api('POST', `${B}/chat`, { chat_id: 5, enabled: true, bot_id: 'linked-only' });
    await svc.api('POST', `${B}/session`, {
      session_id: 'pty-armed',
      board_id: board,
      enabled: true,
      bot_id: 'armed-only',
    });
    assert.equal(bots(), before + 2, 'a linked chat or an armed session is state to keep');
    await svc.api('POST', `${B}/chat`, { chat_id: 5, enabled: false, bot_id: 'linked-only' });
    await svc.api('POST', `${B}/session`, { session_id: 'pty-armed', enabled: false, bot_id: 'armed-only' });
    assert.equal(bots(), before);

    const doomed = await svc.createBoard('Doomed');
    await svc.api('POST', `${B}/session`, {
      session_id: 'pty-doomed',
      board_id: doomed,
      enabled: true,
      bot_id: 'on-doomed',
    });
    assert.equal(bots(), before + 1);
    assert.equal((await svc.api('DELETE', `/api/moodboards/${doomed}`)).status, 204);
    assert.equal(bots(), before, 'a bot disarmed by its board’s deletion is dropped');
  });
});
