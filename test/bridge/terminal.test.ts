import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startService, type TestService } from '../helpers/service.js';
import { BridgeClient } from '../../src/bridge/clients/bridge-client.js';
import { pathKeystrokes, SESSION_ENV, TerminalSession } from '../../src/bridge/clients/terminal-session.js';

const B = '/api/terminal-bridge';

/** A tiny line-oriented program: answers each line, redraws a progress line on `spin`, exits on `exit`. */
const ECHO_PROGRAM = `
const rl = require('node:readline').createInterface({ input: process.stdin });
console.log('\\x1b[1;32mready\\x1b[0m session=' + process.env.${SESSION_ENV});
rl.on('line', (l) => {
  if (l === 'exit') process.exit(3);
  if (l === 'spin') {
    for (let i = 1; i <= 4; i++) process.stdout.write('\\rstep ' + i);
    process.stdout.write('\\rstep 5 done\\n');
    return;
  }
  console.log('got: ' + l);
});`;

describe('terminal side end to end (node-pty, real service)', () => {
  let svc: TestService;
  let board: string;
  before(async () => {
    svc = await startService();
    board = await svc.createBoard('Terminal board');
  });
  after(() => svc.close());

  /** Everything the terminal has sent to the chat so far, as one transcript. */
  const transcript: Record<string, string[]> = {};
  const collect = async (bot: string, until: (all: string) => boolean, what: string) => {
    const deadline = Date.now() + 20_000;
    transcript[bot] ??= [];
    for (;;) {
      const all = transcript[bot].join('\n');
      if (until(all)) return all;
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}; transcript: ${JSON.stringify(transcript[bot])}`);
      const items = (await svc.api('GET', `${B}/to-messenger?wait=2&bot_id=${bot}`)).body.items as { text: string }[];
      transcript[bot].push(...items.map((i) => i.text));
    }
  };
  const start = async (bot: string, o: { idleMs?: number; maxDelayMs?: number; args?: string[] } = {}) => {
    await svc.api('POST', `${B}/chat`, { chat_id: 1, enabled: true, bot_id: bot });
    const session = new TerminalSession({
      bridge: new BridgeClient({ serviceUrl: svc.baseUrl, botId: bot }),
      boardId: board,
      command: process.execPath,
      args: o.args ?? ['-e', ECHO_PROGRAM],
      cols: 80,
      rows: 24,
      idleMs: o.idleMs ?? 150,
      maxDelayMs: o.maxDelayMs ?? 1000,
      pollWaitSeconds: 2,
      submitDelayMs: 20,
    });
    await session.start();
    return session;
  };

  it('arms the bridge, relays output and input both ways, and disarms on exit', async () => {
    const session = await start('term');
    assert.match(session.sessionId, /^pty-[A-Za-z0-9_-]+$/);
    const armed = (await svc.api('GET', `${B}/status?bot_id=term`)).body;
    assert.equal(armed.session_id, session.sessionId);
    assert.equal(armed.board_id, board);
    assert.equal(armed.active, true);

    const first = await collect('term', (t) => t.includes('ready'), 'the greeting');
    assert.ok(
      first.includes(`ready session=${session.sessionId}`),
      'colours rendered away, session id passed in the environment',
    );
    assert.doesNotMatch(first, /\x1b/);

    await svc.api('POST', `${B}/to-terminal`, { kind: 'text', text: 'hello bridge', bot_id: 'term' });
    await collect('term', (t) => t.includes('got: hello bridge'), 'the echo');

    const up = await svc.upload(board, { name: 'pic.png', data: 'not really a png' });
    await svc.api('POST', `${B}/to-terminal`, { kind: 'path', url: up.body.url, bot_id: 'term' });
    await svc.api('POST', `${B}/to-terminal`, { kind: 'text', text: 'is attached', bot_id: 'term' });
    const expectedPath = path.join(svc.dataDir, 'media', 'admin', board, 'pic.png');
    await collect('term', (t) => t.includes(`got: ${expectedPath} is attached`), 'the typed path');

    await svc.api('POST', `${B}/to-terminal`, { kind: 'text', text: 'spin', bot_id: 'term' });
    const all = await collect('term', (t) => t.includes('step 5 done'), 'the progress line');
    assert.doesNotMatch(all, /step [1-4]/, 'intermediate redraws are not sent, only the screen as it settled');
    assert.equal(all.match(/ready session/g)?.length, 1, 'lines already sent are not sent again');
    assert.equal(all.match(/got: hello bridge/g)?.length, 1);

    await svc.api('POST', `${B}/to-terminal`, { kind: 'text', text: 'exit', bot_id: 'term' });
    assert.equal(await session.exited, 3);
    const after = (await svc.api('GET', `${B}/status?bot_id=term`)).body;
    assert.equal(after.session_enabled, false);
    assert.equal(after.chat_linked, true);
  });

  it('sends output within the maximum delay even while the program never goes quiet', async () => {
    const chatty = `let i = 0; const t = setInterval(() => { console.log('tick ' + i++); if (i > 200) process.exit(0); }, 50);`;
    const session = await start('chatty', { idleMs: 60_000, maxDelayMs: 400, args: ['-e', chatty] });
    let exited = false;
    void session.exited.then(() => (exited = true));
    await collect('chatty', (t) => t.includes('tick 3'), 'ticks');
    assert.equal(
      exited,
      false,
      'output arrived while the program was still talking (the 60 s idle batch never closed)',
    );
    session.kill();
    await session.exited;
    assert.equal((await svc.api('GET', `${B}/status?bot_id=chatty`)).body.session_enabled, false);
  });

  it('does not start the command when the bridge cannot be armed', async () => {
    const session = new TerminalSession({
      bridge: new BridgeClient({ serviceUrl: svc.baseUrl, botId: 'nope' }),
      boardId: 'bd_missing',
      command: process.execPath,
      args: ['-e', 'require("fs").writeFileSync("/tmp/should-not-run", "x")'],
    });
    await assert.rejects(session.start(), /404/);
  });
});

describe('terminal side: how a path item is typed', () => {
  it('types a plain path shell-quoted, followed by a space', () => {
    assert.equal(pathKeystrokes('/data/board/pic.png'), '/data/board/pic.png ');
    assert.equal(pathKeystrokes("/data/my board/it's (1).png"), `"/data/my board/it's (1).png" `);
  });

  it('refuses a path with control characters, which quoting cannot make safe to type', () => {
    for (const p of [
      '/d/esc-\x1b[31m.png',
      '/d/cr-\rrm -rf ~',
      '/d/lf-\nwhoami',
      '/d/c1-\x9b31m',
      '/d/tab-\tx',
      '/d/nul-\x00',
    ]) {
      assert.equal(pathKeystrokes(p), null, JSON.stringify(p));
    }
  });
});
