import { Type } from 'typebox';
import type { App, AppContext, Feature } from '../context.js';
import { abortOnDisconnect } from '../http/client-abort.js';
import { badRequest, ErrorBody, errorResponses } from '../http/errors.js';
import { ItemSchema } from './items.js';
import { DEFAULT_WAIT_SECONDS, longPoll, MAX_WAIT_SECONDS } from './long-poll.js';
import { Bridge } from './state.js';
import { BridgeStore } from './store.js';

const tags = ['terminal-bridge'];
const BASE = '/api/terminal-bridge';
const DEFAULT_BOT = 'default';
/** Longest text one item carries (a batch of terminal output or one chat message). */
const MAX_TEXT = 100_000;

const BotId = Type.String({
  pattern: '^[A-Za-z0-9_.-]{1,64}$',
  description: 'which bot; letters, digits, `_`, `.`, `-`, at most 64; default `default`',
});
/** Telegram chat ids have at most 52 significant bits (negative for groups and channels): any safe integer. */
const ChatId = Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER });
const BotQuery = Type.Object({ bot_id: Type.Optional(BotId) });
const PollQuery = Type.Object({
  bot_id: Type.Optional(BotId),
  wait: Type.Optional(
    Type.Number({
      minimum: 0,
      // Above MAX_WAIT_SECONDS a wait only counts as that; the bound keeps the number a sane one.
      maximum: 86_400,
      description: `seconds to wait for an item (long poll); default ${DEFAULT_WAIT_SECONDS}, values above ${MAX_WAIT_SECONDS} count as ${MAX_WAIT_SECONDS}, 0 answers at once`,
    }),
  ),
});

const StatusSchema = Type.Object({
  bot_id: Type.String(),
  session_enabled: Type.Boolean(),
  chat_linked: Type.Boolean(),
  board_id: Type.Union([Type.String(), Type.Null()], { description: 'board of the armed session, null when not armed' }),
  active: Type.Boolean({ description: 'session_enabled AND chat_linked' }),
  session_id: Type.Union([Type.String(), Type.Null()]),
  chat_id: Type.Union([Type.Integer(), Type.Null()]),
});
const ChatStatusSchema = Type.Object({
  ...StatusSchema.properties,
  board_name: Type.Union([Type.String(), Type.Null()], { description: 'name of the armed board, null when no session is armed' }),
});
const QueueResultSchema = Type.Object({
  queued: Type.Boolean({ description: 'false when the bot is not active (nothing is stored) or the text was empty' }),
  bot_id: Type.String(),
  item: Type.Optional(ItemSchema),
  reason: Type.Optional(Type.Enum(['inactive', 'empty'])),
});
const ItemsSchema = Type.Object({ items: Type.Array(ItemSchema, { description: 'in queue order; empty on timeout' }) });

/** Each service's bridge, so tests can check its in-memory state; nothing else reaches it. */
const bridges = new WeakMap<AppContext, Bridge>();
export const bridgeOf = (ctx: AppContext): Bridge | undefined => bridges.get(ctx);

/** Body field first, then query parameter, then `default`. */
const botIdOf = (body: { bot_id?: string } | undefined, query: { bot_id?: string }): string => body?.bot_id ?? query.bot_id ?? DEFAULT_BOT;

/** The terminal bridge between an agent terminal and a chat bot (spec "Terminal bridge"); see docs/bridge.md. */
export const registerBridge: Feature = (app: App, ctx: AppContext) => {
  const bridge = new Bridge(new BridgeStore(ctx.db), ctx.boards, ctx.media, ctx.log);
  bridges.set(ctx, bridge);
  const shutdown = new AbortController();

  const onAdded = (...args: Parameters<Bridge['onElementAdded']>) => bridge.onElementAdded(...args);
  const onBoardDeleted = (...args: Parameters<Bridge['onBoardDeleted']>) => bridge.onBoardDeleted(...args);
  ctx.events.on('element-added', onAdded);
  ctx.events.on('board-deleted', onBoardDeleted);
  ctx.onClose(() => {
    ctx.events.off('element-added', onAdded);
    ctx.events.off('board-deleted', onBoardDeleted);
  });
  // Long polls answer before the server waits for open requests, so a stop is never held up by a 60 s wait.
  app.addHook('preClose', async () => {
    shutdown.abort();
    bridge.wakeAll();
  });

  app.post(
    `${BASE}/session`,
    {
      schema: {
        tags,
        summary: 'Arm (enabled=true) or disarm the bridge for a terminal session',
        description:
          'Arming needs `session_id` and `board_id`. Disarming drains the bot’s queues; a disarm naming another ' +
          'session than the armed one changes nothing.',
        querystring: BotQuery,
        body: Type.Object(
          {
            session_id: Type.Optional(Type.String({ pattern: '^pty-[A-Za-z0-9_.-]{1,100}$', description: 'form `pty-...`' })),
            board_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            enabled: Type.Boolean(),
            bot_id: Type.Optional(BotId),
          },
          { additionalProperties: false },
        ),
        response: { 200: StatusSchema, ...errorResponses },
      },
    },
    async (req) => {
      const botId = botIdOf(req.body, req.query);
      const { session_id, board_id, enabled } = req.body;
      if (!enabled) return bridge.disarm(botId, session_id);
      if (!session_id) throw badRequest('session_id is required to arm the bridge');
      if (!board_id) throw badRequest('board_id is required to arm the bridge');
      return bridge.arm(botId, session_id, board_id);
    },
  );

  app.post(
    `${BASE}/chat`,
    {
      schema: {
        tags,
        summary: 'Link (enabled=true) or unlink a chat to a bot',
        description: 'Linking needs `chat_id`. Unlinking drains the bot’s queues; an unlink naming another chat than the linked one changes nothing.',
        querystring: BotQuery,
        body: Type.Object(
          { chat_id: Type.Optional(ChatId), enabled: Type.Boolean(), bot_id: Type.Optional(BotId) },
          { additionalProperties: false },
        ),
        response: { 200: ChatStatusSchema, ...errorResponses },
      },
    },
    async (req) => {
      const botId = botIdOf(req.body, req.query);
      const { chat_id, enabled } = req.body;
      let status;
      if (enabled) {
        if (chat_id === undefined) throw badRequest('chat_id is required to link a chat');
        status = bridge.link(botId, chat_id);
      } else {
        status = bridge.unlink(botId, chat_id);
      }
      return { ...status, board_name: bridge.boardName(botId) };
    },
  );

  app.get(
    `${BASE}/status`,
    { schema: { tags, summary: 'Bridge status of one bot', querystring: BotQuery, response: { 200: StatusSchema, ...errorResponses } } },
    async (req) => bridge.status(botIdOf(undefined, req.query)),
  );

  app.post(
    `${BASE}/to-messenger`,
    {
      schema: {
        tags,
        summary: 'Queue terminal output for the chat (only while the bot is active)',
        description: 'Escape sequences and control characters are stripped before the text is stored.',
        querystring: BotQuery,
        body: Type.Object(
          { kind: Type.Optional(Type.Enum(['text'])), text: Type.String({ maxLength: MAX_TEXT }), bot_id: Type.Optional(BotId) },
          { additionalProperties: false },
        ),
        response: { 200: QueueResultSchema, ...errorResponses },
      },
    },
    async (req) => bridge.queueToMessenger(botIdOf(req.body, req.query), req.body.text),
  );

  app.post(
    `${BASE}/send-media`,
    {
      schema: {
        tags,
        summary: 'Send a board file to the chat of the bot connected to a terminal',
        description:
          'Routed to the bot whose armed session is `session_id`; without it to `bot_id` when given, else to the only live bot. ' +
          '409 when that terminal or bot is not live, or when zero or several bots are live and nothing says which.',
        querystring: BotQuery,
        body: Type.Object(
          {
            url: Type.String({ minLength: 1, maxLength: 4096, description: '/media/... url of a file inside the media root' }),
            caption: Type.Optional(Type.String({ maxLength: 1024, description: 'at most 1024 characters (Telegram’s caption limit)' })),
            session_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            bot_id: Type.Optional(BotId),
          },
          { additionalProperties: false },
        ),
        response: { 200: QueueResultSchema, ...errorResponses, 409: ErrorBody },
      },
    },
    async (req) =>
      bridge.sendMedia({ url: req.body.url, caption: req.body.caption, sessionId: req.body.session_id, botId: req.body.bot_id ?? req.query.bot_id }),
  );

  app.post(
    `${BASE}/to-terminal`,
    {
      schema: {
        tags,
        summary: 'Queue a chat message or a file path for the terminal (only while the bot is active)',
        description:
          '`{kind: "text", text}` is typed and submitted; `{kind: "path", url}` is resolved to the absolute path of the file ' +
          '(404 when missing) and typed. Control characters are removed from text.',
        querystring: BotQuery,
        body: Type.Object(
          {
            kind: Type.Enum(['text', 'path']),
            text: Type.Optional(Type.String({ maxLength: MAX_TEXT })),
            url: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
            bot_id: Type.Optional(BotId),
          },
          { additionalProperties: false },
        ),
        response: { 200: QueueResultSchema, ...errorResponses },
      },
    },
    async (req) => {
      const botId = botIdOf(req.body, req.query);
      if (req.body.kind === 'path') {
        if (req.body.url === undefined) throw badRequest('url is required for kind path');
        return bridge.queuePathToTerminal(botId, req.body.url);
      }
      if (req.body.text === undefined) throw badRequest('text is required for kind text');
      return bridge.queueTextToTerminal(botId, req.body.text);
    },
  );

  for (const direction of ['to-messenger', 'to-terminal'] as const) {
    app.get(
      `${BASE}/${direction}`,
      {
        schema: {
          tags,
          summary:
            direction === 'to-messenger'
              ? 'Long poll for items to deliver to the chat (used by the bot)'
              : 'Long poll for items to type into the terminal (used by the terminal side)',
          description: `Answers as soon as items are queued (up to 100 at once, in order, each delivered once), or \`{items: []}\` after \`wait\` seconds.`,
          querystring: PollQuery,
          response: { 200: ItemsSchema, ...errorResponses },
        },
      },
      async (req, reply) => {
        reply.header('cache-control', 'no-store');
        return bridge.poll(botIdOf(undefined, req.query), direction, (queue) =>
          longPoll(queue, req.query.wait ?? DEFAULT_WAIT_SECONDS, abortOnDisconnect(reply), shutdown.signal),
        );
      },
    );
  }
};
