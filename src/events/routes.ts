import type { App, AppContext } from '../context.js';
import { InvalidInput } from '../errors.js';
import { ErrorBody } from '../http/schemas.js';
import { openEventStream } from '../http/sse.js';
import { EVENT_TYPES, EventsQuery, LiveEventSchema } from './schemas.js';
import { EventsService } from './service.js';

/** Reconnect delay the stream asks EventSource for (its default varies by browser). */
const RETRY_MS = 2_000;

const known = new Set<string>(EVENT_TYPES);

function typesOf(list: string | undefined): Set<string> | undefined {
  if (list === undefined) return undefined;
  const types = new Set(list.split(',').map((t) => t.trim()));
  for (const t of types) {
    if (!known.has(t))
      throw new InvalidInput(`Unknown event type "${t}" in types; known: ${EVENT_TYPES.join(', ')}`, {
        field: 'types',
      });
  }
  return types;
}

/** Last-Event-ID (header, or `last_event_id` for clients that cannot set it): a decimal event id. */
function lastIdOf(header: string | string[] | undefined, query: string | undefined): number | undefined {
  const raw = typeof header === 'string' && header.trim() !== '' ? header.trim() : query;
  if (raw === undefined) return undefined;
  if (!/^[0-9]{1,16}$/.test(raw))
    throw new InvalidInput('Last-Event-ID must be an event id (digits)', { field: 'last-event-id' });
  return Number(raw);
}

/** GET /api/events: the live event stream (docs/events.md). */
export function registerEvents(app: App, ctx: AppContext): EventsService {
  const events = new EventsService(ctx);
  // Before the server waits for open connections to finish: a stream never would.
  app.addHook('preClose', async () => events.close());
  app.get(
    '/api/events',
    {
      schema: {
        tags: ['events'],
        summary: 'Live events (Server-Sent Events): every change to boards, elements, jobs, shares, bots, agents',
        description:
          'Each event is `id: <id>`, `event: <type>`, `data: <envelope JSON>` (the envelope `{id, type, at, board_id?, data}`). ' +
          'Reconnect with `Last-Event-ID` (or `?last_event_id=`): the missed events follow from the last 1,000 (EVENTS_HISTORY), ' +
          'or one `resync` when they are gone. `: heartbeat` comments every 15 s; a client that does not read gets `dropped` ' +
          'and is closed. `?token=` carries API_TOKEN for EventSource. See docs/events.md.',
        querystring: EventsQuery,
        response: {
          200: {
            description: 'text/event-stream of events, one envelope schema per type',
            content: { 'text/event-stream': { schema: LiveEventSchema } },
          },
          400: ErrorBody,
        },
      },
    },
    async (req, reply) => {
      const filter = { boardId: req.query.board_id, types: typesOf(req.query.types) };
      const lastEventId = lastIdOf(req.headers['last-event-id'], req.query.last_event_id);
      const res = openEventStream(reply);
      // The headers leave at once (EventSource reports the stream open), with the reconnect delay.
      res.write(`retry: ${RETRY_MS}\n: stream open\n\n`);
      events.hub.subscribe(res, filter, lastEventId);
      return reply;
    },
  );
  return events;
}
