import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startService, type TestService } from '../helpers/service.js';

const B = '/api/terminal-bridge';

describe('terminal bridge: long-poll queues', () => {
  let svc: TestService;
  let board: string;
  before(async () => {
    svc = await startService();
    board = await svc.createBoard();
  });
  after(() => svc.close());

  /** Arms and links a fresh bot so it is active. */
  const activate = async (bot: string) => {
    await svc.api('POST', `${B}/session`, { session_id: `pty-${bot}`, board_id: board, enabled: true, bot_id: bot });
    await svc.api('POST', `${B}/chat`, { chat_id: 1, enabled: true, bot_id: bot });
  };
  const say = (bot: string, text: string) => svc.api('POST', `${B}/to-messenger`, { kind: 'text', text, bot_id: bot });
  const poll = (bot: string, wait: number, dir = 'to-messenger') =>
    svc.api('GET', `${B}/${dir}?wait=${wait}&bot_id=${bot}`);
  const texts = (items: { text: string }[]) => items.map((i) => i.text);

  it('wakes a waiting poll as soon as an item is queued', async () => {
    await activate('wake');
    const started = Date.now();
    const waiting = poll('wake', 20);
    await new Promise((r) => setTimeout(r, 200));
    const queued = await say('wake', 'ping');
    const res = await waiting;
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(res.body.items.length, 1);
    assert.deepEqual(res.body.items[0], queued.body.item);
    assert.ok(Date.now() - started < 10_000, 'answered long before the 20 s wait ran out');
  });

  it('wakes a waiting to-terminal poll too, with the item shape documented', async () => {
    await activate('wake2');
    const waiting = poll('wake2', 20, 'to-terminal');
    await new Promise((r) => setTimeout(r, 100));
    await svc.api('POST', `${B}/to-terminal`, { kind: 'text', text: 'ls -la', bot_id: 'wake2' });
    const [item] = (await waiting).body.items;
    assert.equal(item.kind, 'text');
    assert.equal(item.text, 'ls -la');
    assert.match(item.id, /^bi_/);
    assert.ok(!Number.isNaN(Date.parse(item.created_at)));
    assert.deepEqual(Object.keys(item).sort(), ['created_at', 'id', 'kind', 'text']);
  });

  it('answers {items: []} when the wait runs out, and at once for wait=0', async () => {
    await activate('idle');
    const t0 = Date.now();
    const timedOut = await poll('idle', 1);
    assert.deepEqual(timedOut.body, { items: [] });
    assert.ok(Date.now() - t0 >= 900, 'waited for about a second');
    const t1 = Date.now();
    assert.deepEqual((await poll('idle', 0)).body, { items: [] });
    assert.ok(Date.now() - t1 < 10_000, 'wait=0 answers at once, not after the 25 s default wait');
  });

  it('delivers every item once, in order, and batches at most 100 per answer', async () => {
    await activate('order');
    for (let i = 0; i < 150; i++) await say('order', `line ${i}`);
    const first = await poll('order', 0);
    const second = await poll('order', 0);
    const third = await poll('order', 0);
    assert.equal(first.body.items.length, 100);
    assert.equal(second.body.items.length, 50);
    assert.deepEqual(third.body.items, []);
    assert.deepEqual(
      texts([...first.body.items, ...second.body.items]),
      Array.from({ length: 150 }, (_, i) => `line ${i}`),
    );
  });

  it('keeps at most 1000 items per queue, dropping the oldest', async () => {
    await activate('full');
    for (let i = 0; i < 1003; i++) await say('full', `n${i}`);
    const got: string[] = [];
    for (let batch = (await poll('full', 0)).body.items; batch.length > 0; batch = (await poll('full', 0)).body.items)
      got.push(...texts(batch));
    assert.equal(got.length, 1000);
    assert.equal(got[0], 'n3');
    assert.equal(got.at(-1), 'n1002');
  });

  it('gives an item to only one of two concurrent polls', async () => {
    await activate('two');
    const a = poll('two', 2);
    const b = poll('two', 2);
    await new Promise((r) => setTimeout(r, 100));
    await say('two', 'only once');
    const got = [...(await a).body.items, ...(await b).body.items];
    assert.deepEqual(texts(got), ['only once']);
  });

  it('loses nothing when a client disconnects while waiting', async () => {
    await activate('gone');
    const controller = new AbortController();
    const abandoned = fetch(`${svc.baseUrl}${B}/to-messenger?wait=20&bot_id=gone`, { signal: controller.signal }).catch(
      (e: Error) => e,
    );
    await new Promise((r) => setTimeout(r, 150));
    controller.abort();
    assert.ok((await abandoned) instanceof Error);
    await new Promise((r) => setTimeout(r, 100));
    await say('gone', 'still here');
    assert.deepEqual(texts((await poll('gone', 0)).body.items), ['still here']);
  });

  it('hands items to a later waiter when an earlier one disconnected', async () => {
    await activate('handoff');
    const controller = new AbortController();
    const abandoned = fetch(`${svc.baseUrl}${B}/to-messenger?wait=20&bot_id=handoff`, {
      signal: controller.signal,
    }).catch((e: Error) => e);
    await new Promise((r) => setTimeout(r, 100));
    const patient = poll('handoff', 20);
    await new Promise((r) => setTimeout(r, 100));
    controller.abort();
    await abandoned;
    await new Promise((r) => setTimeout(r, 100));
    await say('handoff', 'for the patient one');
    assert.deepEqual(texts((await patient).body.items), ['for the patient one']);
  });

  it('strips escape sequences and stray controls from to-messenger text', async () => {
    await activate('ansi');
    const raw =
      '\x1b]0;my window title\x07\x1b[1;31mred\x1b[0m and \x1b[38;5;208mcolour\x1b[m\r\n' +
      '\x1b(Bplain\x1b7 saved\x1b8\tTAB\x07\x08\x00\r\n' +
      '\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\ \x1bP1$r0m\x1b\\done\x9b2Jx\x1b[?25l\x1b[2K\rprogress';
    const res = await say('ansi', raw);
    assert.equal(res.body.item.text, 'red and colour\nplain saved\tTAB\nlink donex\nprogress');
    assert.equal(
      (await svc.api('POST', `${B}/to-messenger`, { text: '\x1b[2J\x1b[H  \r\n', bot_id: 'ansi' })).body.reason,
      'empty',
    );
    assert.deepEqual(texts((await poll('ansi', 0)).body.items), [
      'red and colour\nplain saved\tTAB\nlink donex\nprogress',
    ]);
  });

  it('removes control characters from chat text typed into the terminal', async () => {
    await activate('typed');
    const res = await svc.api('POST', `${B}/to-terminal`, {
      kind: 'text',
      text: 'echo hi\x03\x1b[A\nsecond',
      bot_id: 'typed',
    });
    assert.equal(res.body.item.text, 'echo hi\nsecond');
  });
});

describe('terminal bridge: shutdown', () => {
  it('answers waiting polls with no items when the service stops', async () => {
    const svc = await startService();
    const waiting = svc.api('GET', `${B}/to-terminal?wait=60&bot_id=stop`);
    await new Promise((r) => setTimeout(r, 150));
    await svc.close();
    const res = await waiting;
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { items: [] });
  });
});
