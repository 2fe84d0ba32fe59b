import { Type, type Static } from 'typebox';
import { DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS } from './long-poll.js';

/** Longest text one item carries (a batch of terminal output or one chat message). */
const MAX_TEXT = 100_000;

export const ItemSchema = Type.Object(
  {
    id: Type.String({ description: 'unique item id, `bi_...`' }),
    kind: Type.Enum(['text', 'media', 'path']),
    text: Type.Optional(
      Type.String({ description: 'kind text: plain text (to-messenger text has no escape sequences)' }),
    ),
    url: Type.Optional(Type.String({ description: 'kind media and path: the `/media/...` url of the file' })),
    caption: Type.Optional(Type.String({ description: 'kind media: optional caption' })),
    path: Type.Optional(Type.String({ description: 'kind path: absolute local path of the file' })),
    created_at: Type.String({ description: 'ISO 8601 UTC time the item was queued' }),
  },
  { description: 'One queued bridge item. Fields that do not apply to the kind are absent.' },
);
const BotId = Type.String({
  pattern: '^[A-Za-z0-9_.-]{1,64}$',
  description: 'which bot; letters, digits, `_`, `.`, `-`, at most 64; default `default`',
});
/** Telegram chat ids have at most 52 significant bits (negative for groups and channels): any safe integer. */
const ChatId = Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER });
export const BotQuery = Type.Object({ bot_id: Type.Optional(BotId) });
export const PollQuery = Type.Object({
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

export const StatusSchema = Type.Object({
  bot_id: Type.String(),
  session_enabled: Type.Boolean(),
  chat_linked: Type.Boolean(),
  board_id: Type.Union([Type.String(), Type.Null()], {
    description: 'board of the armed session, null when not armed',
  }),
  active: Type.Boolean({ description: 'session_enabled AND chat_linked' }),
  session_id: Type.Union([Type.String(), Type.Null()]),
  chat_id: Type.Union([Type.Integer(), Type.Null()]),
});
export const ChatStatusSchema = Type.Object({
  ...StatusSchema.properties,
  board_name: Type.Union([Type.String(), Type.Null()], {
    description: 'name of the armed board, null when no session is armed',
  }),
});
export const QueueResultSchema = Type.Object({
  queued: Type.Boolean({ description: 'false when the bot is not active (nothing is stored) or the text was empty' }),
  bot_id: Type.String(),
  item: Type.Optional(ItemSchema),
  reason: Type.Optional(Type.Enum(['inactive', 'empty'])),
});
export const ItemsSchema = Type.Object({
  items: Type.Array(ItemSchema, { description: 'in queue order; empty on timeout' }),
});

export type BridgeStatus = Static<typeof StatusSchema>;

export const SessionBody = Type.Object(
  {
    session_id: Type.Optional(Type.String({ pattern: '^pty-[A-Za-z0-9_.-]{1,100}$', description: 'form `pty-...`' })),
    board_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    enabled: Type.Boolean(),
    bot_id: Type.Optional(BotId),
  },
  { additionalProperties: false },
);

export const ChatBody = Type.Object(
  { chat_id: Type.Optional(ChatId), enabled: Type.Boolean(), bot_id: Type.Optional(BotId) },
  { additionalProperties: false },
);

export const ToMessengerBody = Type.Object(
  {
    kind: Type.Optional(Type.Enum(['text'])),
    text: Type.String({ maxLength: MAX_TEXT }),
    bot_id: Type.Optional(BotId),
  },
  { additionalProperties: false },
);

export const SendMediaBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 4096, description: '/media/... url of a file inside the media root' }),
    caption: Type.Optional(
      Type.String({ maxLength: 1024, description: 'at most 1024 characters (Telegram’s caption limit)' }),
    ),
    session_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    bot_id: Type.Optional(BotId),
  },
  { additionalProperties: false },
);

export const ToTerminalBody = Type.Object(
  {
    kind: Type.Enum(['text', 'path']),
    text: Type.Optional(Type.String({ maxLength: MAX_TEXT })),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    bot_id: Type.Optional(BotId),
  },
  { additionalProperties: false },
);
