import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { startService, type TestService } from '../helpers/service.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';

const B = '/api/terminal-bridge';

let image: string;
before(async () => {
  image = await makeImage(path.join(await tempDir(), 'shot.png'), { width: 64, height: 48 });
});

function helpers(svc: () => TestService) {
  return {
    arm: (bot: string, board: string, enabled = true) =>
      svc().api('POST', `${B}/session`, { session_id: `pty-${bot}`, board_id: board, enabled, bot_id: bot }),
    link: (bot: string, chatId = 1, enabled = true) =>
      svc().api('POST', `${B}/chat`, { chat_id: chatId, enabled, bot_id: bot }),
    send: (body: Record<string, unknown>) => svc().api('POST', `${B}/send-media`, body),
    drain: async (bot: string, dir = 'to-messenger') =>
      (await svc().api('GET', `${B}/${dir}?wait=0&bot_id=${bot}`)).body.items as Record<string, string>[],
  };
}

describe('terminal bridge: send-media routing', () => {
  let svc: TestService;
  let board: string;
  let url: string;
  const { arm, link, send, drain } = helpers(() => svc);
  before(async () => {
    svc = await startService();
    board = await svc.createBoard();
    url = (await svc.upload(board, image)).body.url;
  });
  after(() => svc.close());

  it('routes by session, by bot, or to the only live bot, and answers 409 otherwise', async () => {
    const none = await send({ url });
    assert.equal(none.status, 409);
    assert.equal(none.body.error.code, 'no_live_bridge');
    assert.match(none.body.error.message, /No bot is live/);

    const unknown = await send({ url, session_id: 'pty-nobody' });
    assert.equal(unknown.status, 409);
    assert.equal(unknown.body.error.code, 'terminal_not_connected');
    assert.match(unknown.body.error.message, /pty-nobody is not connected to any bot/);

    await arm('a', board);
    const noChat = await send({ url, session_id: 'pty-a' });
    assert.equal(noChat.status, 409);
    assert.match(noChat.body.error.message, /no chat is linked/);

    await link('a');
    const only = await send({ url, caption: 'the only one' });
    assert.equal(only.status, 200);
    assert.equal(only.body.queued, true);
    assert.equal(only.body.bot_id, 'a');
    assert.equal(only.body.item.kind, 'media');
    assert.equal(only.body.item.url, url);
    assert.equal(only.body.item.caption, 'the only one');

    await arm('b', board);
    await link('b', 2);
    const several = await send({ url });
    assert.equal(several.status, 409);
    assert.equal(several.body.error.code, 'ambiguous_bridge');
    assert.deepEqual(several.body.error.info.bot_ids.sort(), ['a', 'b']);

    const toB = await send({ url, session_id: 'pty-b' });
    assert.equal(toB.body.bot_id, 'b');
    const toA = await send({ url: url.replace('/media/', '/media/admin/'), bot_id: 'a' });
    assert.equal(toA.body.bot_id, 'a');
    assert.equal(toA.body.item.url, url, 'the long /media/admin/ form is stored in its short form');
    const mismatch = await send({ url, session_id: 'pty-b', bot_id: 'a' });
    assert.equal(mismatch.status, 409);
    const dormantBot = await send({ url, bot_id: 'c' });
    assert.equal(dormantBot.status, 409);
    assert.match(dormantBot.body.error.message, /no terminal session is armed/);

    // Never broadcast: each bot saw only what was routed to it.
    assert.deepEqual(
      (await drain('a')).map((i) => i.caption ?? null),
      ['the only one', null],
    );
    assert.equal((await drain('b')).length, 1);
  });

  it('routes a session armed for several bots to the live one, and refuses to guess between live ones', async () => {
    const shared = { session_id: 'pty-shared', board_id: board, enabled: true };
    assert.equal((await svc.api('POST', `${B}/session`, { ...shared, bot_id: 'first' })).status, 200);
    assert.equal((await svc.api('POST', `${B}/session`, { ...shared, bot_id: 'second' })).status, 200);
    assert.equal((await link('second', 22)).status, 200);
    const toLive = await send({ url, session_id: 'pty-shared', caption: 'to the live one' });
    assert.equal(toLive.status, 200);
    assert.equal(toLive.body.bot_id, 'second');
    assert.equal((await drain('second')).length, 1);
    assert.equal((await drain('first')).length, 0);

    assert.equal((await link('first', 11)).status, 200);
    const both = await send({ url, session_id: 'pty-shared' });
    assert.equal(both.status, 409);
    assert.equal(both.body.error.code, 'ambiguous_bridge');
    assert.deepEqual([...both.body.error.info.bot_ids].sort(), ['first', 'second']);
    const named = await send({ url, session_id: 'pty-shared', bot_id: 'first' });
    assert.equal(named.status, 200);
    assert.equal((await drain('first')).length, 1);
    assert.equal((await drain('second')).length, 0);
    for (const bot of ['first', 'second'])
      await svc.api('POST', `${B}/session`, { ...shared, enabled: false, bot_id: bot });
  });

  it('refuses urls that do not name a file inside the media root', async () => {
    assert.equal((await send({ url: `/media/${board}/missing.png` })).status, 404);
    assert.equal((await send({ url: '/etc/passwd' })).status, 400);
    assert.equal((await send({ url: `/media/${board}/..%2F..%2Fboard-media.sqlite` })).status, 400);
    assert.equal((await send({ url: '/media/admin/../board-media.sqlite' })).status, 400);
    assert.equal((await send({ url, caption: 'x'.repeat(1025) })).status, 400);
  });

  it('resolves to-terminal path items to the absolute file path, 404 when missing', async () => {
    const res = await svc.api('POST', `${B}/to-terminal`, { kind: 'path', url, bot_id: 'a' });
    assert.equal(res.status, 200);
    const expected = await fsp.realpath(path.join(svc.dataDir, 'media', 'admin', board, path.basename(url)));
    assert.equal(res.body.item.kind, 'path');
    assert.equal(res.body.item.path, expected);
    assert.equal(res.body.item.url, url);
    assert.ok(path.isAbsolute(res.body.item.path));
    assert.deepEqual(
      (await drain('a', 'to-terminal')).map((i) => i.path),
      [expected],
    );

    const missing = await svc.api('POST', `${B}/to-terminal`, {
      kind: 'path',
      url: `/media/${board}/nope.png`,
      bot_id: 'a',
    });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'not_found');
    const outside = await svc.api('POST', `${B}/to-terminal`, {
      kind: 'path',
      url: '/media/../../etc/passwd',
      bot_id: 'a',
    });
    assert.equal(outside.status, 400);
    const dormant = await svc.api('POST', `${B}/to-terminal`, { kind: 'path', url, bot_id: 'c' });
    assert.deepEqual(dormant.body, { queued: false, bot_id: 'c', reason: 'inactive' });
  });

  it('refuses path items whose path holds control characters (a file in a connected folder may be named so)', async () => {
    const folder = await tempDir();
    const connected = await svc.createBoard('Connected');
    assert.equal((await svc.api('PATCH', `/api/moodboards/${connected}`, { connected_folder: folder })).status, 200);
    await arm('ctl', connected);
    await link('ctl');
    const names = [
      'esc-\x1b[31mred.png',
      'cr-\rrm -rf ~.png',
      'lf-\nwhoami.png',
      'c1-\x9b31m.png',
      'tab-\tx.png',
      'del-\x7f.png',
    ];
    for (const name of names) {
      await fsp.writeFile(path.join(folder, name), 'x');
      const res = await svc.api('POST', `${B}/to-terminal`, {
        kind: 'path',
        url: `/media/${connected}/${encodeURIComponent(name)}`,
        bot_id: 'ctl',
      });
      assert.equal(res.status, 400, JSON.stringify(name));
      assert.equal(res.body.error.code, 'unsafe_path');
      assert.match(res.body.error.message, /control characters/);
    }
    assert.deepEqual(await drain('ctl', 'to-terminal'), [], 'nothing was queued for the terminal');

    await fsp.writeFile(path.join(folder, 'plain name (1).png'), 'x');
    const ok = await svc.api('POST', `${B}/to-terminal`, {
      kind: 'path',
      url: `/media/${connected}/plain%20name%20(1).png`,
      bot_id: 'ctl',
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.item.path, path.join(await fsp.realpath(folder), 'plain name (1).png'));
  });
});

describe('terminal bridge: board media hook', () => {
  let svc: TestService;
  let board: string;
  let other: string;
  const { arm, link, drain } = helpers(() => svc);
  before(async () => {
    svc = await startService();
    board = await svc.createBoard('Main');
    other = await svc.createBoard('Other');
    await arm('hook', board);
    await link('hook');
    await arm('elsewhere', other);
    await link('elsewhere');
    await arm('armedonly', board);
  });
  after(() => svc.close());

  const mediaUrls = async (bot: string) => (await drain(bot)).filter((i) => i.kind === 'media').map((i) => i.url);
  const addElement = (url: string, type = 'image') =>
    svc.api('POST', `/api/moodboards/${board}/elements`, { type, url });

  it('sends media added to the board of an active bot, to that bot only', async () => {
    const up = await svc.upload(board, image, { addToBoard: true });
    assert.equal(up.status, 200);
    assert.deepEqual(await mediaUrls('hook'), [up.body.url]);
    assert.deepEqual(await mediaUrls('elsewhere'), []);
    assert.deepEqual(await mediaUrls('armedonly'), []);
    // A plain upload without an element is not a board element: nothing is sent.
    await svc.upload(board, image);
    assert.deepEqual(await mediaUrls('hook'), []);
  });

  it('skips media that came from the chat (loop guard)', async () => {
    const up = await svc.upload(board, image, { addToBoard: true, data: { bridge_origin: 'messenger' } });
    assert.equal(up.body.element.data.bridge_origin, 'messenger');
    assert.deepEqual(await mediaUrls('hook'), []);
    // The chat already has that file, so a second element for it is not echoed either.
    assert.equal((await addElement(up.body.url)).status, 201);
    assert.deepEqual(await mediaUrls('hook'), []);
  });

  it('never sends the same file twice to the same bot, until the conversation restarts', async () => {
    const up = await svc.upload(board, image, { addToBoard: true });
    assert.deepEqual(await mediaUrls('hook'), [up.body.url]);
    await addElement(up.body.url);
    await addElement(up.body.url.replace('/media/', '/media/admin/'));
    assert.deepEqual(await mediaUrls('hook'), []);
    // A file the agent sent explicitly is not repeated by the hook either.
    const plain = await svc.upload(board, image);
    assert.equal(
      (await svc.api('POST', `${B}/send-media`, { url: plain.body.url, session_id: 'pty-hook' })).status,
      200,
    );
    await addElement(plain.body.url);
    assert.deepEqual(await mediaUrls('hook'), [plain.body.url]);
    // Unlink + relink drains and starts a new conversation: the file may be sent again.
    await link('hook', 1, false);
    await link('hook');
    await addElement(up.body.url);
    assert.deepEqual(await mediaUrls('hook'), [up.body.url]);
  });

  it('ignores elements that are not image, video or audio', async () => {
    const html = await svc.upload(board, { name: 'card.html', data: '<p>hi</p>' }, { addToBoard: true });
    assert.equal(html.status, 200);
    const text = await svc.api('POST', `/api/moodboards/${board}/elements`, { type: 'text', name: 'note' });
    assert.equal(text.status, 201);
    assert.deepEqual(await drain('hook'), []);
  });
});
