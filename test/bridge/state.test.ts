import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startService, type TestService } from '../helpers/service.js';

const B = '/api/terminal-bridge';

describe('terminal bridge: per-bot state machine', () => {
  let svc: TestService;
  let board: string;
  before(async () => {
    svc = await startService();
    board = await svc.createBoard('Bridge board');
  });
  after(() => svc.close());

  const status = async (bot?: string) => (await svc.api('GET', `${B}/status${bot ? `?bot_id=${bot}` : ''}`)).body;
  const arm = (bot: string, session = 'pty-one', enabled = true, boardId = board) =>
    svc.api('POST', `${B}/session`, { session_id: session, board_id: boardId, enabled, bot_id: bot });
  const chat = (bot: string, chatId: number, enabled = true) =>
    svc.api('POST', `${B}/chat`, { chat_id: chatId, enabled, bot_id: bot });
  const say = (bot: string, text: string) => svc.api('POST', `${B}/to-messenger`, { kind: 'text', text, bot_id: bot });
  const drainNow = async (bot: string, dir = 'to-messenger') =>
    (await svc.api('GET', `${B}/${dir}?wait=0&bot_id=${bot}`)).body.items;

  it('starts dormant for any bot, with the default bot when bot_id is absent', async () => {
    assert.deepEqual(await status(), {
      bot_id: 'default',
      session_enabled: false,
      chat_linked: false,
      board_id: null,
      active: false,
      session_id: null,
      chat_id: null,
    });
    const res = await say('default', 'hello');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { queued: false, bot_id: 'default', reason: 'inactive' });
    assert.deepEqual(await drainNow('default'), []);
  });

  it('dormant + session enabled, no chat: stays dormant with session_enabled, nothing queued', async () => {
    const res = await arm('rowtwo');
    assert.equal(res.status, 200);
    assert.equal(res.body.session_enabled, true);
    assert.equal(res.body.chat_linked, false);
    assert.equal(res.body.active, false);
    assert.equal(res.body.board_id, board);
    assert.equal((await say('rowtwo', 'x')).body.queued, false);
    assert.equal(
      (await svc.api('POST', `${B}/to-terminal`, { kind: 'text', text: 'x', bot_id: 'rowtwo' })).body.queued,
      false,
    );
    assert.deepEqual(await drainNow('rowtwo'), []);
    assert.deepEqual(await drainNow('rowtwo', 'to-terminal'), []);
  });

  it('dormant + chat linked, then session enabled: becomes active and items queue', async () => {
    const linked = await chat('rowone', 42);
    assert.equal(linked.body.chat_linked, true);
    assert.equal(linked.body.active, false);
    assert.equal(linked.body.board_name, null);
    assert.equal((await say('rowone', 'early')).body.queued, false);
    const armed = await arm('rowone');
    assert.equal(armed.body.active, true);
    const q = await say('rowone', 'now');
    assert.equal(q.body.queued, true);
    assert.equal(q.body.item.kind, 'text');
    assert.equal(q.body.item.text, 'now');
    assert.deepEqual(
      (await drainNow('rowone')).map((i: { text: string }) => i.text),
      ['now'],
    );
  });

  it('dormant with session armed + chat enabled: becomes active; the link answer names the board', async () => {
    await arm('rowthree', 'pty-three');
    const linked = await chat('rowthree', 7);
    assert.equal(linked.status, 200);
    assert.equal(linked.body.active, true);
    assert.equal(linked.body.board_name, 'Bridge board');
    assert.equal(linked.body.board_id, board);
    assert.equal(linked.body.chat_id, 7);
    assert.equal((await status('rowthree')).active, true);
  });

  it('active + session disabled: dormant, both queues drained', async () => {
    await arm('rowfour', 'pty-four');
    await chat('rowfour', 8);
    await say('rowfour', 'lost 1');
    await svc.api('POST', `${B}/to-terminal`, { kind: 'text', text: 'lost 2', bot_id: 'rowfour' });
    const res = await arm('rowfour', 'pty-four', false);
    assert.equal(res.body.active, false);
    assert.equal(res.body.session_enabled, false);
    assert.equal(res.body.chat_linked, true);
    assert.equal(res.body.board_id, null);
    // Re-arming must not bring the drained items back.
    await arm('rowfour', 'pty-four');
    assert.deepEqual(await drainNow('rowfour'), []);
    assert.deepEqual(await drainNow('rowfour', 'to-terminal'), []);
  });

  it('active + chat disabled: dormant, chat unlinked, queues drained', async () => {
    await arm('rowfive', 'pty-five');
    await chat('rowfive', 9);
    await say('rowfive', 'lost');
    await svc.api('POST', `${B}/to-terminal`, { kind: 'text', text: 'lost', bot_id: 'rowfive' });
    const res = await chat('rowfive', 9, false);
    assert.equal(res.body.active, false);
    assert.equal(res.body.chat_linked, false);
    assert.equal(res.body.session_enabled, true);
    assert.equal(res.body.board_name, 'Bridge board');
    await chat('rowfive', 9);
    assert.deepEqual(await drainNow('rowfive'), []);
    assert.deepEqual(await drainNow('rowfive', 'to-terminal'), []);
  });

  it('a disarm naming another session, or an unlink naming another chat, changes nothing', async () => {
    await arm('stale', 'pty-new');
    await chat('stale', 10);
    const d = await arm('stale', 'pty-old', false);
    assert.equal(d.body.active, true);
    assert.equal(d.body.session_id, 'pty-new');
    const u = await chat('stale', 11, false);
    assert.equal(u.body.active, true);
    assert.equal(u.body.chat_id, 10);
  });

  it('keeps bots apart when their calls interleave', async () => {
    await arm('alpha', 'pty-alpha');
    await arm('beta', 'pty-beta');
    await chat('alpha', 100);
    await chat('beta', 200);
    await say('alpha', 'a1');
    await say('beta', 'b1');
    await say('alpha', 'a2');
    await svc.api('POST', `${B}/to-terminal?bot_id=beta`, { kind: 'text', text: 'to beta' });
    await say('beta', 'b2');
    assert.deepEqual(
      (await drainNow('alpha')).map((i: { text: string }) => i.text),
      ['a1', 'a2'],
    );
    assert.deepEqual(
      (await drainNow('beta')).map((i: { text: string }) => i.text),
      ['b1', 'b2'],
    );
    assert.deepEqual(await drainNow('alpha', 'to-terminal'), []);
    assert.deepEqual(
      (await drainNow('beta', 'to-terminal')).map((i: { text: string }) => i.text),
      ['to beta'],
    );
    // Unlinking alpha leaves beta active and its queue intact.
    await say('beta', 'b3');
    await chat('alpha', 100, false);
    assert.equal((await status('alpha')).active, false);
    assert.equal((await status('beta')).active, true);
    assert.deepEqual(
      (await drainNow('beta')).map((i: { text: string }) => i.text),
      ['b3'],
    );
  });

  it('takes bot_id from the query when the body has none', async () => {
    await svc.api('POST', `${B}/session?bot_id=viaquery`, { session_id: 'pty-q', board_id: board, enabled: true });
    assert.equal((await status('viaquery')).session_enabled, true);
    assert.equal((await status('default')).session_enabled, false);
  });

  it('validates its input', async () => {
    const bad = [
      await svc.api('GET', `${B}/status?bot_id=${encodeURIComponent('no spaces')}`),
      await svc.api('GET', `${B}/status?bot_id=${'x'.repeat(65)}`),
      await svc.api('POST', `${B}/session`, { session_id: 'not-pty', board_id: board, enabled: true }),
      await svc.api('POST', `${B}/session`, { session_id: 'pty-x', enabled: true }),
      await svc.api('POST', `${B}/session`, { session_id: 'pty-x', board_id: board }),
      await svc.api('POST', `${B}/chat`, { chat_id: 'abc', enabled: true }),
      await svc.api('POST', `${B}/chat`, { enabled: true }),
      await svc.api('POST', `${B}/to-messenger`, { kind: 'media', text: 'x' }),
      await svc.api('POST', `${B}/to-terminal`, { kind: 'text' }),
      await svc.api('POST', `${B}/to-terminal`, { kind: 'path' }),
      await svc.api('GET', `${B}/to-messenger?wait=-1`),
    ];
    for (const res of bad) {
      assert.equal(res.status, 400, res.text);
      assert.equal(typeof res.body.error.message, 'string');
    }
    const unknownBoard = await svc.api('POST', `${B}/session`, {
      session_id: 'pty-x',
      board_id: 'bd_missing',
      enabled: true,
    });
    assert.equal(unknownBoard.status, 404);
  });

  it('disarms the bots armed on a board that is deleted', async () => {
    const doomed = await svc.createBoard('Doomed');
    await arm('doomed', 'pty-doomed', true, doomed);
    await chat('doomed', 5);
    assert.equal((await status('doomed')).active, true);
    assert.equal((await svc.api('DELETE', `/api/moodboards/${doomed}`)).status < 300, true);
    const s = await status('doomed');
    assert.equal(s.session_enabled, false);
    assert.equal(s.chat_linked, true);
  });
});

describe('terminal bridge: restart persistence', () => {
  it('keeps armed sessions and chat links across a restart; queued items are dropped', async () => {
    const first = await startService();
    const dataDir = first.dataDir;
    const board = await first.createBoard('Kept');
    await first.api('POST', `${B}/session`, { session_id: 'pty-kept', board_id: board, enabled: true, bot_id: 'kept' });
    await first.api('POST', `${B}/chat`, { chat_id: 99, enabled: true, bot_id: 'kept' });
    await first.api('POST', `${B}/chat`, { chat_id: 98, enabled: true, bot_id: 'halfway' });
    assert.equal(
      (await first.api('POST', `${B}/to-messenger`, { text: 'before restart', bot_id: 'kept' })).body.queued,
      true,
    );
    await first.service.close();

    const second = await startService({}, { dataDir });
    try {
      const s = (await second.api('GET', `${B}/status?bot_id=kept`)).body;
      assert.deepEqual(s, {
        bot_id: 'kept',
        session_enabled: true,
        chat_linked: true,
        board_id: board,
        active: true,
        session_id: 'pty-kept',
        chat_id: 99,
      });
      const h = (await second.api('GET', `${B}/status?bot_id=halfway`)).body;
      assert.equal(h.chat_linked, true);
      assert.equal(h.active, false);
      assert.deepEqual((await second.api('GET', `${B}/to-messenger?wait=0&bot_id=kept`)).body.items, []);
      assert.equal(
        (await second.api('POST', `${B}/to-messenger`, { text: 'after restart', bot_id: 'kept' })).body.queued,
        true,
      );
      // Disarming after the restart is persisted too.
      await second.api('POST', `${B}/session`, { session_id: 'pty-kept', enabled: false, bot_id: 'kept' });
    } finally {
      await second.service.close();
    }
    const third = await startService({}, { dataDir });
    try {
      assert.equal((await third.api('GET', `${B}/status?bot_id=kept`)).body.session_enabled, false);
    } finally {
      await third.close();
    }
  });
});
