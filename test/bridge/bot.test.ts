import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { eventually, startService, type TestService } from '../helpers/service.js';
import { makeImage, makeVideo, tempDir } from '../helpers/fixtures.js';
import { BridgeClient } from '../../src/bridge/clients/bridge-client.js';
import { ChatAllowlist } from '../../src/bridge/clients/allowed-chats.js';
import { ChatBot } from '../../src/bridge/clients/chat-bot.js';
import { FakeTelegram, type Sent } from './fake-telegram.js';

const B = '/api/terminal-bridge';
const TOKEN = '123456:TEST-token_abc';
const CHAT = 555;
const STRANGER = 777;
/** Allowed by its @username rather than its id. */
const FRIEND = 888;

describe('chat bot end to end (fake Telegram, real service)', () => {
  let svc: TestService;
  let telegram: FakeTelegram;
  let chatBot: ChatBot;
  let board: string;
  let jpg: Buffer;
  let png: string;
  let mp4: string;
  const logs: string[] = [];

  before(async () => {
    const dir = await tempDir();
    [png, mp4] = await Promise.all([
      makeImage(path.join(dir, 'chart.png'), { width: 64, height: 48 }),
      makeVideo(path.join(dir, 'clip.mp4'), { width: 160, height: 120, duration: 1 }),
    ]);
    jpg = await fsp.readFile(await makeImage(path.join(dir, 'from-chat.jpg'), { width: 64, height: 48 }));
    svc = await startService();
    board = await svc.createBoard('Chat board');
    await svc.api('POST', `${B}/session`, { session_id: 'pty-bot', board_id: board, enabled: true, bot_id: 'tg' });
    telegram = new FakeTelegram(TOKEN);
    telegram.usernames.set(FRIEND, 'Trusted_Friend');
    const apiRoot = await telegram.start();
    chatBot = new ChatBot({
      token: TOKEN,
      apiRoot,
      allowedChats: ChatAllowlist.parse(`${CHAT}, @trusted_friend`),
      bridge: new BridgeClient({ serviceUrl: svc.baseUrl, botId: 'tg' }),
      pollWaitSeconds: 5,
      log: (m, err) => logs.push(`${m} ${err ?? ''}`),
    });
    await chatBot.start();
  });
  after(async () => {
    await chatBot.stop();
    await telegram.stop();
    await svc.close();
  });

  const status = async () => (await svc.api('GET', `${B}/status?bot_id=tg`)).body;
  const sentCount = () => telegram.sent.length;
  const sentSince = (n: number) => telegram.sent.slice(n);
  /** Collects to-terminal items until `count` arrived. */
  const terminalItems = async (count: number) => {
    const items: Record<string, string>[] = [];
    const deadline = Date.now() + 15_000;
    while (items.length < count && Date.now() < deadline) {
      items.push(...(await svc.api('GET', `${B}/to-terminal?wait=2&bot_id=tg`)).body.items);
    }
    return items;
  };

  it('refuses a chat that is not allowed: it cannot /link, and nothing it sends reaches the terminal', async () => {
    telegram.userSendsText(STRANGER, '/link');
    telegram.userSendsText(STRANGER, 'rm -rf ~');
    await telegram.waitForSent(
      (s) => s.chat_id === STRANGER && telegram.sent.filter((x) => x.chat_id === STRANGER).length === 2,
      15_000,
      'two refusals',
    );
    for (const refusal of telegram.sent.filter((s) => s.chat_id === STRANGER)) {
      assert.match(refusal.text!, /This chat \(id 777\) is not allowed/);
      assert.match(refusal.text!, /add 777 to TELEGRAM_ALLOWED_CHATS/);
    }
    const s = await status();
    assert.equal(s.chat_linked, false, 'the stranger did not link');
    assert.equal(s.chat_id, null);
    assert.ok(logs.some((l) => l.startsWith('refused chat 777')));
  });

  it('registers its commands and links the chat with /link, answering with the board name', async () => {
    assert.ok(telegram.calls.includes('getMe'));
    assert.ok(telegram.calls.includes('setMyCommands'));
    const n = sentCount();
    telegram.userSendsText(CHAT, '/link');
    const reply = await telegram.waitForSent(
      (s) => s.chat_id === CHAT && /Linked to board "Chat board"/.test(s.text ?? ''),
      15_000,
      'the /link answer',
    );
    assert.ok(reply);
    assert.equal(sentSince(n).length, 1);
    const s = await status();
    assert.equal(s.chat_linked, true);
    assert.equal(s.chat_id, CHAT);
    assert.equal(s.active, true);
  });

  it('answers /status and refuses other chats, allowed or not, while one is linked', async () => {
    telegram.userSendsText(CHAT, '/status');
    await telegram.waitForSent((s) => s.chat_id === CHAT && /Active: yes/.test(s.text ?? ''), 15_000, '/status');
    const n = sentCount();
    telegram.userSendsText(STRANGER, 'rm -rf /');
    telegram.userSendsText(STRANGER, '/link');
    telegram.userSendsText(FRIEND, 'echo hi');
    telegram.userSendsText(FRIEND, '/link');
    await telegram.waitForSent(() => sentSince(n).length === 4, 15_000, 'four refusals');
    for (const s of sentSince(n).filter((x) => x.chat_id === STRANGER)) assert.match(s.text!, /not allowed/);
    // The friend is allowed (by @username, in any case) but the link belongs to another chat.
    for (const s of sentSince(n).filter((x) => x.chat_id === FRIEND)) assert.match(s.text!, /linked to another chat/);
    assert.equal((await status()).chat_id, CHAT, 'nobody took over the link');
    assert.deepEqual((await svc.api('GET', `${B}/to-terminal?wait=0&bot_id=tg`)).body.items, [], 'nothing was typed');
  });

  it('sends chat text to the terminal', async () => {
    telegram.userSendsText(CHAT, 'please list the files');
    const [item] = await terminalItems(1);
    assert.equal(item.kind, 'text');
    assert.equal(item.text, 'please list the files');
  });

  it('delivers terminal text to the chat, splitting a long text without breaking code fences', async () => {
    const n = sentCount();
    await svc.api('POST', `${B}/to-messenger`, { text: '\x1b[32m$ ls\x1b[0m\r\nREADME.md', bot_id: 'tg' });
    const short = await telegram.waitForSent(
      (s) => telegram.sent.indexOf(s) >= n && s.method === 'sendMessage',
      15_000,
      'short text',
    );
    assert.equal(short.chat_id, CHAT);
    assert.equal(short.text, '$ ls\nREADME.md');

    const code = Array.from({ length: 400 }, (_, i) => `    print("row ${i}")  # ${'-'.repeat(20)}`);
    const long = ['Output:', '```python', ...code, '```', 'end of output'].join('\n');
    assert.ok(long.length > 8192);
    const m = sentCount();
    await svc.api('POST', `${B}/to-messenger`, { text: long, bot_id: 'tg' });
    await telegram.waitForSent(
      (s) => telegram.sent.indexOf(s) >= m && (s.text ?? '').endsWith('end of output'),
      15_000,
      'the last chunk',
    );
    const chunks = sentSince(m).map((s: Sent) => s.text!);
    assert.ok(chunks.length >= 3, `${chunks.length} chunks`);
    for (const c of chunks) {
      assert.ok(c.length < 4096);
      assert.equal(c.split('\n').filter((l) => l.startsWith('```')).length % 2, 0, 'fences balanced in every chunk');
    }
    for (const c of chunks.slice(1)) assert.ok(c.startsWith('```python\n'), 'the fence is reopened with its language');
    const rows = chunks
      .join('\n')
      .split('\n')
      .filter((l) => l.includes('print('));
    assert.deepEqual(rows, code, 'every code line arrives once, in order');
  });

  it('delivers media as photo, video or document, with caption', async () => {
    const photoUp = await svc.upload(board, png);
    const res = await svc.api('POST', `${B}/send-media`, {
      url: photoUp.body.url,
      caption: 'the chart',
      session_id: 'pty-bot',
    });
    assert.equal(res.status, 200);
    const photo = await telegram.waitForSent((s) => s.method === 'sendPhoto', 15_000, 'sendPhoto');
    assert.equal(photo.chat_id, CHAT);
    assert.equal(photo.caption, 'the chart');
    assert.equal(photo.file!.filename, path.basename(photoUp.body.url));
    assert.ok(photo.file!.bytes.equals(await fsp.readFile(png)));

    // A video added to the board reaches the chat through the media hook.
    const videoUp = await svc.upload(board, mp4, { addToBoard: true });
    const video = await telegram.waitForSent((s) => s.method === 'sendVideo', 15_000, 'sendVideo');
    assert.equal(video.file!.filename, path.basename(videoUp.body.url));
    assert.ok(video.file!.bytes.equals(await fsp.readFile(mp4)));

    const textUp = await svc.upload(board, { name: 'notes.txt', data: 'some notes' });
    await svc.api('POST', `${B}/send-media`, { url: textUp.body.url, bot_id: 'tg' });
    const doc = await telegram.waitForSent((s) => s.method === 'sendDocument', 15_000, 'sendDocument');
    assert.equal(doc.file!.bytes.toString(), 'some notes');
    assert.equal(doc.caption, undefined);
  });

  it('puts chat photos, videos and documents on the board and hands their paths to the terminal, without echoing them', async () => {
    const before = (await svc.api('GET', `/api/moodboards/${board}`)).body.elements.length;
    const n = sentCount();
    telegram.userSendsPhoto(CHAT, jpg, 'what is in this picture?');
    const [pathItem, captionItem] = await terminalItems(2);
    assert.equal(pathItem.kind, 'path');
    assert.ok(path.isAbsolute(pathItem.path));
    assert.ok((await fsp.readFile(pathItem.path)).equals(jpg));
    assert.equal(captionItem.kind, 'text');
    assert.equal(captionItem.text, 'what is in this picture?');

    telegram.userSendsVideo(CHAT, await fsp.readFile(mp4));
    telegram.userSendsDocument(CHAT, Buffer.from('%PDF-1.4 fake'), 'report.pdf');
    const [videoItem, docItem] = await terminalItems(2);
    assert.equal(videoItem.kind, 'path');
    assert.ok(videoItem.path.endsWith('.mp4'));
    assert.equal(docItem.kind, 'path');
    assert.equal(path.basename(docItem.path), 'report.pdf');

    const elements = (await svc.api('GET', `/api/moodboards/${board}`)).body.elements as {
      data: Record<string, unknown>;
      url: string;
    }[];
    const fromChat = elements.slice(before);
    assert.equal(fromChat.length, 3);
    for (const el of fromChat) assert.equal(el.data.bridge_origin, 'messenger');

    // Loop guard: a marker sent after the uploads arrives with nothing before it.
    await svc.api('POST', `${B}/to-messenger`, { text: 'marker', bot_id: 'tg' });
    await telegram.waitForSent((s) => s.text === 'marker', 15_000, 'the marker');
    assert.deepEqual(
      sentSince(n).map((s) => s.method + ':' + (s.text ?? '')),
      ['sendMessage:marker'],
    );
  });

  it('tells the chat when the service refuses to type a file path that holds control characters', async () => {
    // The terminal moves to a board connected to a folder whose name holds ESC: every file path in it does.
    const folder = path.join(await tempDir(), 'odd-\x1b[31m-folder');
    await fsp.mkdir(folder);
    const odd = await svc.createBoard('Odd folder');
    assert.equal((await svc.api('PATCH', `/api/moodboards/${odd}`, { connected_folder: folder })).status, 200);
    await svc.api('POST', `${B}/session`, { session_id: 'pty-odd', board_id: odd, enabled: true, bot_id: 'tg' });
    telegram.userSendsDocument(CHAT, Buffer.from('plain text'), 'notes.txt', 'read this');
    const reply = await telegram.waitForSent(
      (s) => s.chat_id === CHAT && /not typed into the terminal/.test(s.text ?? ''),
      15_000,
      'the refusal',
    );
    assert.match(reply.text!, /control characters/);
    assert.deepEqual(await fsp.readdir(folder), ['notes.txt'], 'the file is on the board');
    assert.deepEqual(
      (await svc.api('GET', `${B}/to-terminal?wait=0.5&bot_id=tg`)).body.items,
      [],
      'neither the path nor the caption was typed',
    );
    await svc.api('POST', `${B}/session`, { session_id: 'pty-bot', board_id: board, enabled: true, bot_id: 'tg' });
  });

  it('unlinks with /unlink, after which nothing is queued', async () => {
    telegram.userSendsText(CHAT, '/unlink');
    await telegram.waitForSent((s) => /Unlinked/.test(s.text ?? ''), 15_000, '/unlink answer');
    const s = await status();
    assert.equal(s.chat_linked, false);
    assert.equal(s.active, false);
    assert.equal(
      (await svc.api('POST', `${B}/to-messenger`, { text: 'nobody listens', bot_id: 'tg' })).body.queued,
      false,
    );
    telegram.userSendsText(CHAT, 'hello?');
    await telegram.waitForSent((s) => /not linked/.test(s.text ?? ''), 15_000, 'the not-linked hint');
    assert.deepEqual(
      logs.filter((l) => !l.startsWith('refused chat')),
      [],
    );
  });
});

describe('chat bot allowlist at start (fake Telegram, real service)', () => {
  let svc: TestService;
  let board: string;
  const running: { bot: ChatBot; telegram: FakeTelegram }[] = [];
  before(async () => {
    svc = await startService();
    board = await svc.createBoard('Allowlist board');
  });
  after(async () => {
    for (const r of running) {
      await r.bot.stop();
      await r.telegram.stop();
    }
    await svc.close();
  });

  /** Arms a session for the bot, optionally links a chat as an earlier run might have, then starts the bot. */
  const startBot = async (
    botId: string,
    allowed: string,
    o: { linkedChat?: number; usernames?: [number, string][] } = {},
  ) => {
    await svc.api('POST', `${B}/session`, {
      session_id: `pty-${botId}`,
      board_id: board,
      enabled: true,
      bot_id: botId,
    });
    if (o.linkedChat !== undefined)
      await svc.api('POST', `${B}/chat`, { chat_id: o.linkedChat, enabled: true, bot_id: botId });
    const telegram = new FakeTelegram(TOKEN);
    for (const [id, name] of o.usernames ?? []) telegram.usernames.set(id, name);
    const logs: string[] = [];
    const bot = new ChatBot({
      token: TOKEN,
      apiRoot: await telegram.start(),
      allowedChats: ChatAllowlist.parse(allowed),
      bridge: new BridgeClient({ serviceUrl: svc.baseUrl, botId }),
      pollWaitSeconds: 2,
      log: (m) => logs.push(m),
    });
    await bot.start();
    running.push({ bot, telegram });
    return { telegram, logs, status: async () => (await svc.api('GET', `${B}/status?bot_id=${botId}`)).body };
  };

  it('without an allowlist: says so at start, unlinks a chat linked earlier, and refuses /link with the exact setting', async () => {
    const { telegram, logs, status } = await startBot('open', '', { linkedChat: 999 });
    assert.ok(
      logs.some((l) => /no chat is allowed/.test(l) && l.includes('TELEGRAM_ALLOWED_CHATS=<id>')),
      logs.join('\n'),
    );
    assert.ok(
      logs.some((l) => l.startsWith('unlinked chat 999')),
      logs.join('\n'),
    );
    assert.equal((await status()).chat_linked, false, 'a chat linked before the allowlist existed is unlinked');

    telegram.userSendsText(31, '/link');
    const refusal = await telegram.waitForSent((s) => s.chat_id === 31, 15_000, 'the refusal');
    assert.match(refusal.text!, /This chat \(id 31\) is not allowed/);
    assert.match(refusal.text!, /start the bot with TELEGRAM_ALLOWED_CHATS=31\b/);
    assert.ok(logs.some((l) => l.includes('refused chat 31') && l.includes('TELEGRAM_ALLOWED_CHATS=31')));
    assert.equal((await status()).chat_linked, false);

    // Even a chat linked behind the bot's back gets nothing from it.
    await svc.api('POST', `${B}/chat`, { chat_id: 31, enabled: true, bot_id: 'open' });
    await svc.api('POST', `${B}/to-messenger`, { text: 'secret output', bot_id: 'open' });
    await eventually(
      () => (logs.some((l) => l.includes('the linked chat 31 is not allowed')) ? true : undefined),
      15_000,
      'the drop',
    );
    assert.deepEqual(
      telegram.sent.filter((s) => s.text === 'secret output'),
      [],
    );
  });

  it('keeps a linked chat that the allowlist names by @username, and delivers to it', async () => {
    const { telegram, logs, status } = await startBot('named', '@owner_name', {
      linkedChat: 4321,
      usernames: [[4321, 'Owner_Name']],
    });
    assert.equal((await status()).chat_id, 4321);
    await svc.api('POST', `${B}/to-messenger`, { text: 'hello owner', bot_id: 'named' });
    const sent = await telegram.waitForSent((s) => s.text === 'hello owner', 15_000, 'the delivery');
    assert.equal(sent.chat_id, 4321);
    assert.deepEqual(logs, []);
  });
});
