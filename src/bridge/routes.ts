import type { App, AppContext } from '../context.js';
import { badRequest } from '../http/errors.js';
import { ErrorBody, errorResponses } from '../http/schemas.js';
import { DEFAULT_WAIT_SECONDS, longPoll } from './long-poll.js';
import {
  BotQuery,
  ChatBody,
  ChatStatusSchema,
  ItemsSchema,
  PollQuery,
  QueueResultSchema,
  SendMediaBody,
  SessionBody,
  StatusSchema,
  ToMessengerBody,
  ToTerminalBody,
} from './schemas.js';
import { abortOnDisconnect } from '../http/client-abort.js';
import { BridgeService } from './service.js';
import { BridgeStore } from './store.js';

const tags = ['terminal-bridge'];
const BASE = '/api/terminal-bridge';
const DEFAULT_BOT = 'default';

/** Body field first, then query parameter, then `default`. */
const botIdOf = (body: { bot_id?: string } | undefined, query: { bot_id?: string }): string =>
  body?.bot_id ?? query.bot_id ?? DEFAULT_BOT;

/**
 * The terminal bridge between an agent terminal and a chat bot (spec "Terminal bridge"); see docs/bridge.md.
 * Answers the bridge, which agents use to reach a live terminal.
 */
export const registerBridge = (app: App, ctx: AppContext): BridgeService => {
  const bridge = new BridgeService(new BridgeStore(ctx.db), ctx.boards, ctx.media, ctx.log, ctx.events);
  const shutdown = new AbortController();

  const onAdded = (...args: Parameters<BridgeService['onElementAdded']>) => bridge.onElementAdded(...args);
  const onBoardDeleted = (...args: Parameters<BridgeService['onBoardDeleted']>) => bridge.onBoardDeleted(...args);
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
        body: SessionBody,
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
        description:
          'Linking needs `chat_id`. Unlinking drains the bot’s queues; an unlink naming another chat than the linked one changes nothing.',
        querystring: BotQuery,
        body: ChatBody,
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
    {
      schema: {
        tags,
        summary: 'Bridge status of one bot',
        querystring: BotQuery,
        response: { 200: StatusSchema, ...errorResponses },
      },
    },
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
        body: ToMessengerBody,
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
        body: SendMediaBody,
        response: { 200: QueueResultSchema, ...errorResponses, 409: ErrorBody },
      },
    },
    async (req) =>
      bridge.sendMedia({
        url: req.body.url,
        caption: req.body.caption,
        sessionId: req.body.session_id,
        botId: req.body.bot_id ?? req.query.bot_id,
      }),
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
        body: ToTerminalBody,
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
  return bridge;
};
