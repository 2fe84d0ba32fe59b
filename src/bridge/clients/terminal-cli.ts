import { BridgeClient, BridgeHttpError } from './bridge-client.js';
import { command, commonOptions, parseFlags, positiveInt, UsageError } from './cli-options.js';
import { SESSION_ENV, TerminalSession } from './terminal-session.js';

const HELP = `Usage: npm run terminal -- --board BOARD_ID [--bot-id ID] [--url SERVICE_URL]
                             [--idle-ms 1500] [--max-delay-ms 5000] [--] [command [args...]]

Runs a command (default: your shell) in a pseudo-terminal bridged to a chat bot: its screen goes to the chat,
the chat's messages are typed into it. The bridge is armed for the board and bot, and disarmed when the command
exits. The command sees its session id in $${SESSION_ENV} (for send-media). Environment: BOARD_ID, BOT_ID,
SERVICE_URL, API_TOKEN (as for the bot).
`;

/** `terminal` subcommand: exits with the command's exit code. */
async function runTerminal(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { flags, rest } = parseFlags(args, ['board', 'bot-id', 'url', 'idle-ms', 'max-delay-ms']);
  if (flags.has('help')) {
    process.stdout.write(HELP);
    return;
  }
  const boardId = flags.get('board') ?? env.BOARD_ID;
  if (!boardId) throw new UsageError(`--board (or BOARD_ID) is required\n${HELP}`);
  const common = commonOptions(flags, env);
  const [command = env.SHELL ?? (process.platform === 'win32' ? 'powershell.exe' : '/bin/sh'), ...commandArgs] = rest;
  const bridge = new BridgeClient(common);
  const stdin = process.stdin;
  const stdout = process.stdout;
  const session = new TerminalSession({
    bridge,
    boardId,
    command,
    args: commandArgs,
    cols: stdout.columns ?? 120,
    rows: stdout.rows ?? 40,
    idleMs: positiveInt(flags, 'idle-ms', 1500),
    maxDelayMs: positiveInt(flags, 'max-delay-ms', 5000),
    onOutput: (data) => stdout.write(data),
  });
  try {
    await session.start();
  } catch (err) {
    bridge.close();
    if (err instanceof BridgeHttpError) throw new UsageError(`the service refused to arm the bridge: ${err.message}`);
    throw err;
  }

  // The local user keeps using the terminal as usual: raw keystrokes in, the program's own output out.
  if (stdin.isTTY) stdin.setRawMode(true);
  stdin.on('data', (d: Buffer) => session.write(d.toString('utf8')));
  stdin.resume();
  const onResize = () => session.resize(stdout.columns, stdout.rows);
  stdout.on('resize', onResize);
  const hangUp = () => session.kill();
  process.on('SIGTERM', hangUp);
  process.on('SIGHUP', hangUp);
  if (!stdin.isTTY) process.on('SIGINT', hangUp);

  const code = await session.exited;
  if (stdin.isTTY) stdin.setRawMode(false);
  stdin.pause();
  stdout.off('resize', onResize);
  bridge.close();
  process.exitCode = code;
}

export const terminalCommand = command((args) => runTerminal(args));
