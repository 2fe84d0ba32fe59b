import { BoardMediaError } from './errors.js';
import type { Connection } from './connection.js';
import { readSse } from './sse.js';
import type { EventOf, EventType, LiveEvent } from './types.js';

export type StreamState = 'connecting' | 'open' | 'reconnecting' | 'closed';

/** What a stream tells whoever follows it: `events()`'s own callbacks, and each `subscribe`r (waits for jobs). */
export interface StreamListener {
  /** Every event but `resync` and `dropped`, in order. */
  onEvent?: ((event: LiveEvent) => void) | undefined;
  onResync?: ((event: EventOf<'resync'>) => void) | undefined;
  onState?: ((state: StreamState, error?: unknown) => void) | undefined;
}

export interface EventStreamOptions {
  /** Only this board's events. */
  boardId?: string | undefined;
  /** Only these types (all when absent); `resync` always comes. */
  types?: Exclude<EventType, 'resync' | 'dropped'>[] | undefined;
  /** Continue after this event id (one seen in an earlier session); by default from now. */
  lastEventId?: number | string | undefined;
  /** Every event but `resync` and `dropped`, in order. */
  onEvent?: ((event: LiveEvent) => void) | undefined;
  /**
   * The service no longer has every event since the last one seen (the gap is older than its history, or it
   * restarted): refetch what you show. The stream goes on from the newest event.
   */
  onResync?: ((event: EventOf<'resync'>) => void) | undefined;
  /** Connection state changes; `error` says why a connection ended or could not open. */
  onState?: ((state: StreamState, error?: unknown) => void) | undefined;
  /** Reconnect delays double from the service's `retry:` (or `initialMs`) up to `maxMs`, with jitter. */
  backoff?: { initialMs?: number | undefined; maxMs?: number | undefined } | undefined;
  /** No bytes (not even a heartbeat, every 15 s by default) for this long: the connection is taken as dead. */
  idleTimeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

export interface EventStream {
  /** Resolves once the first connection is open (events from then on arrive); rejects if the stream closes first. */
  readonly ready: Promise<void>;
  /** Resolves when the stream has closed for good: `close()`, the signal, or an answer retrying cannot change. */
  readonly closed: Promise<void>;
  /** The id of the last event received: what a reconnect asks to continue after. */
  readonly lastEventId: string | undefined;
  /** The connection's state now (`onState` tells its changes). */
  readonly state: StreamState;
  /**
   * Follows this stream too (more listeners on the one connection: `waitForJob(job, {events})` uses it); returns
   * the function that stops following.
   */
  subscribe(listener: StreamListener): () => void;
  close(): void;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * GET /api/events over fetch (browsers and Node alike; Node 20 has no EventSource, and EventSource cannot send the
 * token as a header): reconnects after network failures and dropped streams with Last-Event-ID, so no event is
 * missed, or `onResync` says to refetch. A 4xx answer (a bad filter, a wrong token) closes it with that error:
 * asking again would get the same.
 */
export function subscribeEvents(conn: Connection, opts: EventStreamOptions): EventStream {
  const stop = new AbortController();
  const abortFromOutside = () => stop.abort();
  if (opts.signal?.aborted) stop.abort();
  opts.signal?.addEventListener('abort', abortFromOutside, { once: true });
  const initialMs = opts.backoff?.initialMs ?? 1000;
  const maxMs = opts.backoff?.maxMs ?? 30_000;
  const idleTimeoutMs = opts.idleTimeoutMs ?? 45_000;
  let lastEventId = opts.lastEventId === undefined ? undefined : String(opts.lastEventId);
  let retryMs = initialMs;
  let setReady!: () => void;
  let failReady!: (err: unknown) => void;
  const ready = new Promise<void>((resolve, reject) => ((setReady = resolve), (failReady = reject)));
  ready.catch(() => undefined); // a caller that never awaits `ready` must not see an unhandled rejection

  let state: StreamState = 'connecting';
  const listeners = new Set<StreamListener>([opts]);
  const setState = (next: StreamState, error?: unknown) => {
    state = next;
    for (const l of [...listeners]) l.onState?.(next, error);
  };

  let opened = false;
  /** One connection: resolves when it ends, rejects when it fails (a BoardMediaError with the answer's status). */
  const connect = async (): Promise<void> => {
    const attempt = new AbortController();
    const onStop = () => attempt.abort();
    stop.signal.addEventListener('abort', onStop, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const alive = () => {
      clearTimeout(idle);
      idle = setTimeout(() => attempt.abort(new Error(`no data for ${idleTimeoutMs} ms`)), idleTimeoutMs);
    };
    try {
      alive();
      const res = await conn.fetch(conn.url('/api/events', { board_id: opts.boardId, types: opts.types?.join(',') }), {
        headers: {
          ...conn.headers(),
          accept: 'text/event-stream',
          ...(lastEventId !== undefined ? { 'last-event-id': lastEventId } : {}),
        },
        signal: attempt.signal,
      });
      if (!res.ok || !res.body) throw await BoardMediaError.fromResponse(res);
      opened = true;
      setState('open');
      setReady();
      for await (const message of readSse(res.body, alive)) {
        if (message.retry !== undefined) retryMs = Math.max(message.retry, 100);
        if (message.id !== undefined) lastEventId = message.id;
        if (message.event === 'dropped') continue; // the service closes the stream next: reconnect, missing nothing
        const event = JSON.parse(message.data) as LiveEvent;
        for (const l of [...listeners]) {
          if (event.type === 'resync') l.onResync?.(event);
          else l.onEvent?.(event);
        }
      }
    } finally {
      clearTimeout(idle);
      stop.signal.removeEventListener('abort', onStop);
      attempt.abort();
    }
  };

  const run = async () => {
    let failures = 0;
    setState('connecting');
    while (!stop.signal.aborted) {
      opened = false;
      let error: unknown;
      try {
        await connect();
      } catch (err) {
        error = err;
      }
      if (stop.signal.aborted) break;
      if (error instanceof BoardMediaError && error.status >= 400 && error.status < 500) {
        failReady(error);
        setState('closed', error);
        return;
      }
      setState('reconnecting', error);
      failures = opened ? 0 : failures + 1;
      // Full jitter over a doubling delay: the clients of a restarted service do not all come back at once.
      const delay = Math.min(maxMs, retryMs * 2 ** failures);
      await sleep(delay / 2 + (Math.random() * delay) / 2, stop.signal);
    }
    failReady(new BoardMediaError(0, 'closed', 'The event stream was closed'));
    setState('closed');
  };
  const closed = run().finally(() => opts.signal?.removeEventListener('abort', abortFromOutside));

  return {
    ready,
    closed,
    get lastEventId() {
      return lastEventId;
    },
    get state() {
      return state;
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => stop.abort(),
  };
}
