import { ALLOWED_CHATS_ENV, ChatAllowlist } from './allowed-chats.js';
import { BridgeClient } from './bridge-client.js';
import { ChatBot } from './chat-bot.js';
import { command, commonOptions, parseFlags, UsageError } from './cli-options.js';

const HELP = `Usage: npm run bot -- [--bot-id ID] [--url SERVICE_URL] [--allowed-chats LIST]

Runs one Telegram bot for the terminal bridge. Environment:
  TELEGRAM_BOT_TOKEN      the bot's token (required; one process per token)
  ${ALLOWED_CHATS_ENV}  the only chats the bot obeys: comma-separated chat ids and/or @usernames
                          (--allowed-chats overrides). When empty, every chat is refused and told its id.
  BOT_ID                  bridge bot id (default "default"; --bot-id overrides)
  SERVICE_URL             service base URL (default http://127.0.0.1:$PORT, PORT defaults to 4100; --url overrides)
  API_TOKEN               bearer token, when the service requires one
  TELEGRAM_API_ROOT       Bot API root (default https://api.telegram.org)
In an allowed chat: /link, /unlink, /status.
`;

/** `bot` subcommand: runs until SIGINT/SIGTERM. */
async function runBot(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { flags, rest } = parseFlags(args, ['bot-id', 'url', 'allowed-chats']);
  if (flags.has('help')) {
    process.stdout.write(HELP);
    return;
  }
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"\n${HELP}`);
  const token = env.TELEGRAM_BOT_TOKEN;
  if (!token) throw new UsageError(`TELEGRAM_BOT_TOKEN is not set\n${HELP}`);
  const allowedChats = ChatAllowlist.parse(flags.get('allowed-chats') ?? env[ALLOWED_CHATS_ENV]);
  const common = commonOptions(flags, env);
  const bridge = new BridgeClient(common);
  const bot = new ChatBot({ token, bridge, allowedChats, apiRoot: env.TELEGRAM_API_ROOT || undefined });
  await bot.start();
  process.stderr.write(`[bot ${common.botId}] @${bot.bot.botInfo.username} is running against ${common.serviceUrl}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await bot.stop();
  bridge.close();
}

export const botCommand = command((args) => runBot(args));
