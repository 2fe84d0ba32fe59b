import { Type, type Static, type TSchema } from 'typebox';
import { BoardRecord, ElementSchema } from '../boards/schemas.js';
import { Id, JobSchema } from '../http/schemas.js';
import { ShareStateSchema } from '../sharing/schemas.js';
import { StatusSchema } from '../bridge/schemas.js';
import { ActionCardSchema } from '../agents/schemas.js';
import { HistoryEntry } from '../generation/schemas.js';

/** A board as board events carry it: its record and its element count (GET /api/moodboards' summary, plus the folder). */
export const EventBoardSchema = Type.Object({ ...BoardRecord.properties, element_count: Type.Integer() });

const job = { job: JobSchema };

/** Each event type and what its `data` holds: enough for a client to update its view without another request. */
const DATA = {
  'board.created': Type.Object({ board: EventBoardSchema }),
  'board.updated': Type.Object({ board: EventBoardSchema }, { description: 'its name or connected folder changed' }),
  'board.deleted': Type.Object({ board: BoardRecord }, { description: 'the board as it was' }),
  'element.added': Type.Object({ element: ElementSchema }, { description: 'the element as GET answers it' }),
  'element.updated': Type.Object(
    { element: ElementSchema },
    {
      description:
        'the whole element after any write: move, resize, rename, data merged, probe facts and thumbnail stored, html version bumped',
    },
  ),
  'element.deleted': Type.Object({ element: ElementSchema }, { description: 'the element as it was' }),
  'job.queued': Type.Object(job, { description: 'a new job, or one a render worker handed back to the queue' }),
  'job.progress': Type.Object(job, {
    description: 'started (status running) or progressed; at most 4 a second per job, the latest always sent',
  }),
  'job.completed': Type.Object(
    {
      ...job,
      element: Type.Union([ElementSchema, Type.Null()], {
        description: "the element the job's output was added as, null when it added none",
      }),
    },
    { description: '`job.output_url` names the output file' },
  ),
  'job.failed': Type.Object(job, { description: '`job.error` and `job.error_code` say why' }),
  'job.cancelled': Type.Object(job),
  'share.updated': Type.Object({ share: ShareStateSchema }),
  'bridge.status': Type.Object(
    { status: StatusSchema },
    { description: "a bot's terminal session was armed or disarmed, or its chat linked or unlinked" },
  ),
  'agent.card': Type.Object(
    { session_id: Type.String(), action: ActionCardSchema },
    { description: "an agent's action card was proposed, applied, rejected or failed (`action.status`)" },
  ),
  'generation.updated': Type.Object(
    { entry: HistoryEntry },
    { description: 'a generation request was made or changed state (its entry in GET /api/ai/history)' },
  ),
  resync: Type.Object(
    {
      reason: Type.Enum(['history_passed', 'unknown_id']),
      last_event_id: Type.String({ description: 'the id the client asked to continue from' }),
    },
    {
      description:
        'the events after Last-Event-ID are no longer kept (or the id is from another run of the service): refetch ' +
        "what you show; this event's id is the newest, so a reconnect continues from here",
    },
  ),
  dropped: Type.Object(
    { reason: Type.Literal('slow_client'), buffered_bytes: Type.Integer() },
    { description: 'the last event of a stream the client did not read fast enough; reconnect with Last-Event-ID' },
  ),
} satisfies Record<string, TSchema>;

export type EventType = keyof typeof DATA;
export type EventData<T extends EventType> = Static<(typeof DATA)[T]>;

/** The types a client may ask for in `?types=` (the stream's own `resync` and `dropped` always come). */
export const EVENT_TYPES = Object.keys(DATA).filter((t) => t !== 'resync' && t !== 'dropped') as Exclude<
  EventType,
  'resync' | 'dropped'
>[];

const envelope = <T extends EventType>(type: T) =>
  Type.Object(
    {
      id: Type.Integer({
        description: 'increasing, also across restarts of the service; the SSE `id:` line, as Last-Event-ID',
      }),
      type: Type.Literal(type),
      at: Type.String({ description: 'when the change was committed (ISO 8601)' }),
      board_id: Type.Optional(Type.String({ description: 'the board the event is about, when there is one' })),
      data: DATA[type],
    },
    { title: type },
  );

/** The `data:` line of every event on GET /api/events: one envelope per type, `type` telling them apart. */
export const LiveEventSchema = Type.Union(
  (Object.keys(DATA) as EventType[]).map((t) => envelope(t)),
  { title: 'LiveEvent', description: 'Every SSE event: `id: <id>`, `event: <type>`, `data: <this envelope as JSON>`' },
);

/** One event as the stream sends it. */
export interface LiveEvent<T extends EventType = EventType> {
  id: number;
  type: T;
  at: string;
  board_id?: string;
  data: EventData<T>;
}

export const EventsQuery = Type.Object(
  {
    board_id: Type.Optional(Id),
    types: Type.Optional(
      Type.String({
        maxLength: 1000,
        description: `comma-separated event types to receive (all when absent): ${EVENT_TYPES.join(', ')}`,
      }),
    ),
    last_event_id: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,16}$',
        description: 'as the Last-Event-ID header, for clients that cannot set it; the header wins when both are given',
      }),
    ),
    token: Type.Optional(
      Type.String({ description: 'API_TOKEN, for EventSource (which cannot send Authorization); never logged' }),
    ),
  },
  { additionalProperties: false },
);
export type EventsQueryT = Static<typeof EventsQuery>;
