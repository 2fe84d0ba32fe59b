import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { startService, eventually, RUN_TS, type TestService } from '../helpers/service.js';
import { FakeTelegram } from './fake-telegram.js';

const B = '/api/terminal-bridge';
const TOKEN = '987654:CLI-token';

/** Every child started, so that a failed assertion never leaves one running (it would keep `npm test` from ending). */
const children = new Set<ChildProcess>();

/** Runs `src/main.ts <args>` as its own process, the way `npm run bot` / `npm run terminal` do. */
function runCli(args: string[], env: Record<string, string>): ChildProcess & { output: () => string } {
  const child = spawn(process.execPath, [...RUN_TS, 'src/main.ts', ...args], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  return Object.assign(child, { output: () => output });
}

describe('bot and terminal subcommands (separate processes)', () => {
  let svc: TestService;
  let board: string;
  before(async () => {
    svc = await startService();
    board = await svc.createBoard('CLI board');
  });
  after(async () => {
    for (const child of children) child.kill('SIGKILL');
    await svc.close();
  });

  const status = async (bot: string) => (await svc.api('GET', `${B}/status?bot_id=${bot}`)).body;

  it('terminal: arms, types chat text into the command, relays its output, disarms and exits with its code', async () => {
    await svc.api('POST', `${B}/chat`, { chat_id: 3, enabled: true, bot_id: 'cli' });
    const program = `require('node:readline').createInterface({ input: process.stdin }).on('line', (l) => { if (l === 'bye') process.exit(4); console.log('echo:' + l); });`;
    const child = runCli(
      [
        'terminal',
        '--board',
        board,
        '--bot-id',
        'cli',
        '--url',
        svc.baseUrl,
        '--idle-ms',
        '100',
        '--',
        process.execPath,
        '-e',
        program,
      ],
      {},
    );
    const exited = once(child, 'exit');
    await eventually(
      async () => ((await status('cli')).active ? true : undefined),
      60_000,
      `the terminal to arm; output: ${child.output()}`,
    );
    assert.match((await status('cli')).session_id, /^pty-/);
    await svc.api('POST', `${B}/to-terminal`, { kind: 'text', text: 'from chat', bot_id: 'cli' });
    const seen: string[] = [];
    await eventually(
      async () => {
        seen.push(
          ...(await svc.api('GET', `${B}/to-messenger?wait=1&bot_id=cli`)).body.items.map(
            (i: { text: string }) => i.text,
          ),
        );
        return seen.join('\n').includes('echo:from chat') ? true : undefined;
      },
      20_000,
      'the echo',
    );
    assert.match(child.output(), /echo:from chat/, 'the pty output is mirrored on the CLI’s own stdout');
    await svc.api('POST', `${B}/to-terminal`, { kind: 'text', text: 'bye', bot_id: 'cli' });
    const [code] = await exited;
    assert.equal(code, 4);
    assert.equal((await status('cli')).session_enabled, false);
  });

  it('terminal: refuses to start for an unknown board, with a readable message and status 2', async () => {
    const child = runCli(
      ['terminal', '--board', 'bd_nope', '--url', svc.baseUrl, '--', process.execPath, '-e', '0'],
      {},
    );
    const [code] = await once(child, 'exit');
    assert.equal(code, 2);
    assert.match(child.output(), /refused to arm the bridge: 404: Board bd_nope not found/);
  });

  it('bot: links an allowed chat through a Telegram API root from the environment and stops on SIGTERM', async () => {
    await svc.api('POST', `${B}/session`, {
      session_id: 'pty-clibot',
      board_id: board,
      enabled: true,
      bot_id: 'clibot',
    });
    const telegram = new FakeTelegram(TOKEN);
    const apiRoot = await telegram.start();
    try {
      const child = runCli(['bot', '--bot-id', 'clibot', '--allowed-chats', '12,31'], {
        TELEGRAM_BOT_TOKEN: TOKEN,
        TELEGRAM_API_ROOT: apiRoot,
        SERVICE_URL: svc.baseUrl,
        TELEGRAM_ALLOWED_CHATS: '',
      });
      const exited = once(child, 'exit');
      await eventually(
        () => (child.output().includes('is running') ? true : undefined),
        60_000,
        `the bot to start; output: ${child.output()}`,
      );
      telegram.userSendsText(31, '/link');
      await telegram.waitForSent((s) => /Linked to board "CLI board"/.test(s.text ?? ''), 15_000, 'the link answer');
      assert.equal((await status('clibot')).chat_id, 31);
      child.kill('SIGTERM');
      const [code] = await exited;
      assert.equal(code, 0);
    } finally {
      await telegram.stop();
    }
  });

  it('bot: without TELEGRAM_ALLOWED_CHATS, says how to allow a chat at start and refuses /link with the chat’s id', async () => {
    await svc.api('POST', `${B}/session`, {
      session_id: 'pty-closed',
      board_id: board,
      enabled: true,
      bot_id: 'closed',
    });
    const telegram = new FakeTelegram(TOKEN);
    const apiRoot = await telegram.start();
    try {
      const child = runCli(['bot', '--bot-id', 'closed'], {
        TELEGRAM_BOT_TOKEN: TOKEN,
        TELEGRAM_API_ROOT: apiRoot,
        SERVICE_URL: svc.baseUrl,
        TELEGRAM_ALLOWED_CHATS: '',
      });
      const exited = once(child, 'exit');
      await eventually(
        () => (child.output().includes('is running') ? true : undefined),
        60_000,
        `the bot to start; output: ${child.output()}`,
      );
      assert.match(child.output(), /no chat is allowed .*TELEGRAM_ALLOWED_CHATS=<id>/);
      telegram.userSendsText(46, '/link');
      const refusal = await telegram.waitForSent((s) => s.chat_id === 46, 15_000, 'the refusal');
      assert.match(refusal.text!, /start the bot with TELEGRAM_ALLOWED_CHATS=46\b/);
      assert.equal((await status('closed')).chat_linked, false);
      child.kill('SIGTERM');
      await exited;
      assert.match(child.output(), /refused chat 46: .*TELEGRAM_ALLOWED_CHATS=46/);
    } finally {
      await telegram.stop();
    }
  });

  it('bot: exits with status 2 and names the entry when TELEGRAM_ALLOWED_CHATS is malformed', async () => {
    const child = runCli(['bot'], { TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_ALLOWED_CHATS: '123, me' });
    const [code] = await once(child, 'exit');
    assert.equal(code, 2);
    assert.match(child.output(), /TELEGRAM_ALLOWED_CHATS: "me" is neither a chat id .* nor an @username/);
  });

  it('bot: exits with status 2 and says what is missing without a token', async () => {
    const child = runCli(['bot'], { TELEGRAM_BOT_TOKEN: '' });
    const [code] = await once(child, 'exit');
    assert.equal(code, 2);
    assert.match(child.output(), /TELEGRAM_BOT_TOKEN is not set/);
  });
});
