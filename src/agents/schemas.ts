import { Type, type Static, type TSchema } from 'typebox';
import { ErrorBody, errorResponses, Id } from '../http/schemas.js';
import { BoardSchema, ElementSchema } from '../boards/schemas.js';
import { RENDER_LIMITS } from '../html/limits.js';
import { IMAGE_FORMATS } from '../media/convert-image.js';
import { VIDEO_CODECS, VIDEO_FORMATS } from '../media/convert-video.js';

// --- action cards: each type is offered to the model as a tool whose input schema is the card's `params` ---

const ElementId = Type.String({ minLength: 1, maxLength: 64, description: "id of an element on the session's board" });
const Coord = Type.Number({ minimum: -1e7, maximum: 1e7 });
const HtmlDocument = Type.String({
  minLength: 1,
  maxLength: RENDER_LIMITS.maxHtmlLength,
  description: 'a full HTML document (<!doctype html><html>...)',
});
const Seconds = Type.Number({ minimum: 0, maximum: 86_400 });

export const ACTION_PARAMS = {
  generate_image: Type.Object(
    {
      prompt: Type.String({ minLength: 1, maxLength: 4000, description: 'what the image shows' }),
      model: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 200,
          description: 'an image model id; default: the first configured image model',
        }),
      ),
      aspect_ratio: Type.Optional(
        Type.String({ pattern: '^[0-9]{1,2}:[0-9]{1,2}$', description: "like 16:9; default: the model's first" }),
      ),
    },
    { additionalProperties: false },
  ),
  update_element_html: Type.Object({ element_id: ElementId, html: HtmlDocument }, { additionalProperties: false }),
  create_html_card: Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 200 }),
      html: HtmlDocument,
      x: Type.Optional(Coord),
      y: Type.Optional(Coord),
    },
    { additionalProperties: false },
  ),
  add_text: Type.Object(
    { text: Type.String({ minLength: 1, maxLength: 10_000 }), x: Type.Optional(Coord), y: Type.Optional(Coord) },
    { additionalProperties: false },
  ),
  move_element: Type.Object({ element_id: ElementId, x: Coord, y: Coord }, { additionalProperties: false }),
  delete_element: Type.Object({ element_id: ElementId }, { additionalProperties: false }),
  trim_media: Type.Object(
    {
      element_id: ElementId,
      start_seconds: Seconds,
      end_seconds: Type.Number({ exclusiveMinimum: 0, maximum: 86_400 }),
    },
    { additionalProperties: false },
  ),
  convert_media: Type.Object(
    {
      element_id: ElementId,
      format: Type.Enum([...IMAGE_FORMATS, ...VIDEO_FORMATS], {
        description: 'png, jpg, webp, avif for images; mp4, webm, mov for videos',
      }),
      width: Type.Optional(Type.Integer({ minimum: 1, maximum: 16384, description: 'images only' })),
      height: Type.Optional(Type.Integer({ minimum: 1, maximum: 16384, description: 'images only' })),
      codec: Type.Optional(
        Type.Enum(VIDEO_CODECS, { description: 'videos only; default h264 for mp4/mov, vp9 for webm' }),
      ),
      bitrate: Type.Optional(Type.String({ maxLength: 16, description: 'videos only, like 2M or 800k' })),
    },
    { additionalProperties: false },
  ),
  send_to_terminal: Type.Object(
    {
      text: Type.String({
        minLength: 1,
        maxLength: 100_000,
        description: "typed into the board's agent terminal and submitted",
      }),
    },
    { additionalProperties: false },
  ),
} satisfies Record<string, TSchema>;

export type ActionType = keyof typeof ACTION_PARAMS;
export type ActionParamsOf<T extends ActionType> = Static<(typeof ACTION_PARAMS)[T]>;
export const ACTION_TYPES = Object.keys(ACTION_PARAMS) as ActionType[];

export const AGENT_TYPES = ['board-helper', 'prompt-suggestor', 'terminal'] as const;
export type AgentType = (typeof AGENT_TYPES)[number];

const BOARD_ACTIONS: ActionType[] = [
  'generate_image',
  'update_element_html',
  'create_html_card',
  'add_text',
  'move_element',
  'delete_element',
  'trim_media',
  'convert_media',
];

/** Which action types (tools) each agent type is offered; docs/agents.md explains the choice. */
export const AGENT_ACTIONS: Record<AgentType, ActionType[]> = {
  'board-helper': BOARD_ACTIONS,
  'prompt-suggestor': ['generate_image', 'add_text'],
  terminal: [...BOARD_ACTIONS, 'send_to_terminal'],
};

export const CARD_STATUSES = ['proposed', 'applied', 'rejected', 'failed'] as const;
export type CardStatus = (typeof CARD_STATUSES)[number];

export const ActionCardSchema = Type.Object(
  {
    id: Type.String({ description: 'act_...' }),
    type: Type.Enum(ACTION_TYPES),
    params: Type.Record(Type.String(), Type.Unknown(), {
      description: "the tool's arguments, as the schema of its type",
    }),
    preview: Type.Record(Type.String(), Type.Unknown(), {
      description: 'what the user sees before applying; shape per type in docs/agents.md',
    }),
    status: Type.Enum(CARD_STATUSES),
    error: Type.Optional(
      Type.Object(
        { code: Type.String(), message: Type.String() },
        { description: 'why the last execution failed (status failed)' },
      ),
    ),
  },
  { title: 'ActionCard' },
);
export type ActionCardView = Static<typeof ActionCardSchema>;

// --- routes ---

const SessionId = Type.String({ minLength: 1, maxLength: 64 });

export const SessionBody = Type.Object(
  {
    board_id: Id,
    agent_type: Type.Enum(AGENT_TYPES),
    model: Type.String({ minLength: 1, maxLength: 200, description: 'a chat model id from GET /api/ai/models' }),
  },
  { additionalProperties: false },
);
export const SessionAnswer = Type.Object({
  session_id: Type.String(),
  started_at: Type.String(),
  board_id: Type.String(),
  agent_type: Type.Enum(AGENT_TYPES),
  model: Type.String(),
  actions: Type.Array(Type.Enum(ACTION_TYPES), { description: 'the action types this agent may propose' }),
});

export const MAX_CHAT_MESSAGES = 50;
export const MAX_REFERENCES = 20;

export const ChatBody = Type.Object(
  {
    session_id: SessionId,
    messages: Type.Array(
      Type.Object(
        {
          role: Type.Enum(['user', 'assistant']),
          content: Type.String({ minLength: 1, maxLength: 100_000 }),
        },
        { additionalProperties: false },
      ),
      {
        minItems: 1,
        maxItems: MAX_CHAT_MESSAGES,
        description: 'the new messages of this turn; the session remembers the earlier ones',
      },
    ),
    references: Type.Optional(
      Type.Array(Id, {
        maxItems: MAX_REFERENCES,
        uniqueItems: true,
        description: 'element ids of the board (selection, mentions), shown to the model',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ChatRequest = Static<typeof ChatBody>;

export const ChatAnswer = Type.Object(
  {
    message: Type.String({ description: 'the whole assistant message of this turn' }),
    actions: Type.Array(ActionCardSchema, { description: 'every card of this turn' }),
  },
  {
    title: 'ChatResult',
    description:
      'With `Accept: application/json`. Otherwise `text/event-stream`: `message` events `{delta}`, one `action` event per card, ' +
      'then `done` with this body, or `error` with `{error: {code, message}}`.',
  },
);

export const CardBody = Type.Object({ session_id: SessionId, action_id: Id }, { additionalProperties: false });

export const ApplyAnswer = Type.Object({
  action: ActionCardSchema,
  elements: Type.Array(ElementSchema, {
    description: 'the elements the action created or changed (a deleted one as it was)',
  }),
  job_id: Type.Optional(
    Type.String({ description: 'generate_image with a queued model: poll GET /api/ai/jobs/{job_id} for the image' }),
  ),
  board: BoardSchema,
});

export const RejectAnswer = Type.Object({ action: ActionCardSchema });

export const AutoApplyBody = Type.Object(
  { session_id: SessionId, enabled: Type.Boolean() },
  { additionalProperties: false },
);
export const AutoApplyAnswer = Type.Object({ session_id: Type.String(), auto_apply: Type.Boolean() });

export const EndBody = Type.Object({ session_id: SessionId }, { additionalProperties: false });
export const EndAnswer = Type.Object({ session_id: Type.String(), ended: Type.Literal(true) });

export const agentErrors = {
  ...errorResponses,
  409: ErrorBody,
  422: ErrorBody,
  429: ErrorBody,
  500: ErrorBody,
  501: ErrorBody,
  502: ErrorBody,
  503: ErrorBody,
  504: ErrorBody,
};
