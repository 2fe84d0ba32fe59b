import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { startService, type TestService } from '../helpers/service.js';
import { makeImage, makeVideo, tempDir } from '../helpers/fixtures.js';
import { BridgeClient } from '../../src/clients/bridge-client.js';
import { ChatBot } from '../../src/clients/chat-bot.js';
import { FakeTelegram, type Sent } from './fake-telegram.js';

const B = '/api/terminal-bridge';
const TOKEN = '123456:TEST-token_abc';
const CHAT = 555;
const STRANGER = 777;

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
    const apiRoot = await telegram.start();
    chatBot = new ChatBot({
      token: TOKEN,
      apiRoot,
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

  it('registers its commands and links the chat with /link, answering with the board name', async () => {
    assert.ok(telegram.calls.includes('getMe'));
    assert.ok(telegram.calls.includes('setMyCommands'));
    const n = sentCount();
    telegram.userSendsText(CHAT, '/link');
    const reply = await telegram.waitForSent((s) => s.chat_id === CHAT && /Linked to board "Chat board"/.test(s.text ?? ''), 15_000, 'the /link answer');
    assert.ok(reply);
    assert.equal(sentSince(n).length, 1);
    const s = await status();
    assert.equal(s.chat_linked, true);
    assert.equal(s.chat_id, CHAT);
    assert.equal(s.active, true);
  });

  it('answers /status and politely refuses other chats', async () => {
    telegram.userSendsText(CHAT, '/status');
    await telegram.waitForSent((s) => s.chat_id === CHAT && /Active: yes/.test(s.text ?? ''), 15_000, '/status');
    telegram.userSendsText(STRANGER, 'rm -rf /');
    telegram.userSendsText(STRANGER, '/link');
    const refusal = await telegram.waitForSent((s) => s.chat_id === STRANGER, 15_000, 'a refusal');
    assert.match(refusal.text!, /linked to another chat/);
    await telegram.waitForSent((s) => s.chat_id === STRANGER && s !== refusal, 15_000, 'a second refusal');
    assert.equal((await status()).chat_id, CHAT, 'the stranger did not take over the link');
    assert.deepEqual((await svc.api('GET', `${B}/to-terminal?wait=0&bot_id=tg`)).body.items, []);
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
    const short = await telegram.waitForSent((s) => telegram.sent.indexOf(s) >= n && s.method === 'sendMessage', 15_000, 'short text');
    assert.equal(short.chat_id, CHAT);
    assert.equal(short.text, '$ ls\nREADME.md');

    const code = Array.from({ length: 400 }, (_, i) => `    print("row ${i}")  # ${'-'.repeat(20)}`);
    const long = ['Output:', '```python', ...code, '```', 'end of output'].join('\n');
    assert.ok(long.length > 8192);
    const m = sentCount();
    await svc.api('POST', `${B}/to-messenger`, { text: long, bot_id: 'tg' });
    await telegram.waitForSent((s) => telegram.sent.indexOf(s) >= m && (s.text ?? '').endsWith('end of output'), 15_000, 'the last chunk');
    const chunks = sentSince(m).map((s: Sent) => s.text!);
    assert.ok(chunks.length >= 3, `${chunks.length} chunks`);
    for (const c of chunks) {
      assert.ok(c.length < 4096);
      assert.equal(c.split('\n').filter((l) => l.startsWith('```')).length % 2, 0, 'fences balanced in every chunk');
    }
    for (const c of chunks.slice(1)) assert.ok(c.startsWith('```python\n'), 'the fence is reopened with its language');
    const rows = chunks.join('\n').split('\n').filter((l) => l.includes('print('));
    assert.deepEqual(rows, code, 'every code line arrives once, in order');
  });

  it('delivers media as photo, video or document, with caption', async () => {
    const photoUp = await svc.upload(board, png);
    const res = await svc.api('POST', `${B}/send-media`, { url: photoUp.body.url, caption: 'the chart', session_id: 'pty-bot' });
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

    const elements = (await svc.api('GET', `/api/moodboards/${board}`)).body.elements as { data: Record<string, unknown>; url: string }[];
    const fromChat = elements.slice(before);
    assert.equal(fromChat.length, 3);
    for (const el of fromChat) assert.equal(el.data.bridge_origin, 'messenger');

    // Loop guard: a marker sent after the uploads arrives with nothing before it.
    await svc.api('POST', `${B}/to-messenger`, { text: 'marker', bot_id: 'tg' });
    await telegram.waitForSent((s) => s.text === 'marker', 15_000, 'the marker');
    assert.deepEqual(sentSince(n).map((s) => s.method + ':' + (s.text ?? '')), ['sendMessage:marker']);
  });

  it('unlinks with /unlink, after which nothing is queued', async () => {
    telegram.userSendsText(CHAT, '/unlink');
    await telegram.waitForSent((s) => /Unlinked/.test(s.text ?? ''), 15_000, '/unlink answer');
    const s = await status();
    assert.equal(s.chat_linked, false);
    assert.equal(s.active, false);
    assert.equal((await svc.api('POST', `${B}/to-messenger`, { text: 'nobody listens', bot_id: 'tg' })).body.queued, false);
    telegram.userSendsText(CHAT, 'hello?');
    await telegram.waitForSent((s) => /not linked/.test(s.text ?? ''), 15_000, 'the not-linked hint');
    assert.deepEqual(logs, []);
  });
});
