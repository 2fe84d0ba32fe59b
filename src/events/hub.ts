import type { ServerResponse } from 'node:http';
import type { EventsConfig } from './config.js';
import type { EventData, EventType, LiveEvent } from './schemas.js';

/** An event kept for replay: its board and type for the filters, and its SSE frame, serialised once for everyone. */
interface Kept {
  id: number;
  type: EventType;
  boardId: string | undefined;
  frame: string;
}

/** What one stream asked for: one board's events, some types (their `resync` and `dropped` always come). */
export interface StreamFilter {
  boardId?: string;
  types?: ReadonlySet<string>;
}

interface Stream {
  res: ServerResponse;
  filter: StreamFilter;
  /** The id of the last event written to it: its `dropped` event carries it, so a reconnect misses nothing. */
  lastId: number;
}

const frameOf = (event: LiveEvent) => `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

const wants = (filter: StreamFilter, e: { type: string; boardId: string | undefined }) =>
  (filter.boardId === undefined || e.boardId === filter.boardId) && (!filter.types || filter.types.has(e.type));

/** How long a dropped client's socket may take to take its last event before it is closed anyway. */
const DROP_GRACE_MS = 5_000;

/**
 * The live event stream's fan-out: numbers each event, keeps the newest ones for clients that reconnect, writes each
 * to every stream that wants it, sends heartbeats, and drops a stream whose socket stops taking what is written.
 *
 * Ids start at the start time in microseconds, so they keep increasing across restarts: an id from an earlier run is
 * older than anything kept and gets a `resync`, never another run's events under the same numbers.
 */
export class EventHub {
  private lastId = Date.now() * 1000;
  private readonly history: Kept[] = [];
  /** Index of the oldest kept event in `history` (dropped from the front in batches, not one shift each). */
  private start = 0;
  private historyBytes = 0;
  private readonly streams = new Set<Stream>();
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: EventsConfig,
    private readonly onDrop: (reason: string, bytes: number) => void = () => undefined,
  ) {}

  get clients(): number {
    return this.streams.size;
  }

  /** Numbers, keeps and sends one event. */
  publish<T extends EventType>(type: T, boardId: string | undefined, data: EventData<T>): LiveEvent<T> {
    const event: LiveEvent<T> = {
      id: ++this.lastId,
      type,
      at: new Date().toISOString(),
      ...(boardId !== undefined ? { board_id: boardId } : {}),
      data,
    };
    const kept: Kept = { id: event.id, type, boardId, frame: frameOf(event) };
    this.keep(kept);
    for (const stream of this.streams) if (wants(stream.filter, kept)) this.write(stream, kept.frame, kept.id);
    return event;
  }

  private keep(kept: Kept): void {
    const { historySize, historyBytes } = this.config;
    if (historySize === 0) return;
    this.history.push(kept);
    this.historyBytes += kept.frame.length;
    // The newest event stays even when it alone is over the byte bound.
    while (
      this.history.length - this.start > historySize ||
      (this.historyBytes > historyBytes && this.history.length - this.start > 1)
    ) {
      this.historyBytes -= this.history[this.start].frame.length;
      this.start++;
    }
    if (this.start > 1024 && this.start * 2 > this.history.length) {
      this.history.splice(0, this.start);
      this.start = 0;
    }
  }

  /**
   * Adds a stream. With `lastEventId`, first what it missed that is still kept (filtered like the rest), or one
   * `resync` when that is gone or the id is not one of this run's.
   */
  subscribe(res: ServerResponse, filter: StreamFilter, lastEventId: number | undefined): void {
    const stream: Stream = { res, filter, lastId: lastEventId ?? this.lastId };
    this.streams.add(stream);
    res.once('close', () => this.unsubscribe(stream));
    if (lastEventId !== undefined) this.replay(stream, lastEventId);
    this.heartbeat ??= setInterval(() => this.beat(), this.config.heartbeatMs).unref();
  }

  private replay(stream: Stream, after: number): void {
    const oldest = this.start < this.history.length ? this.history[this.start].id : this.lastId + 1;
    if (after > this.lastId || after < oldest - 1) {
      const reason = after > this.lastId ? 'unknown_id' : 'history_passed';
      const resync: LiveEvent<'resync'> = {
        id: this.lastId,
        type: 'resync',
        at: new Date().toISOString(),
        data: { reason, last_event_id: String(after) },
      };
      this.write(stream, frameOf(resync), resync.id);
      return;
    }
    // Ids within one run are consecutive: the first event after `after` sits at a known place.
    for (let i = this.start + (after - oldest + 1); i < this.history.length; i++) {
      const kept = this.history[i];
      if (wants(stream.filter, kept)) this.write(stream, kept.frame, kept.id);
      if (!this.streams.has(stream)) return;
    }
  }

  private unsubscribe(stream: Stream): void {
    this.streams.delete(stream);
    if (this.streams.size === 0 && this.heartbeat) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
    }
  }

  private beat(): void {
    for (const stream of this.streams) this.write(stream, ': heartbeat\n\n');
  }

  /**
   * Writes to one stream, unless what it has not yet taken is already over the bound: then it gets a last `dropped`
   * event and is closed. Checked before the write, so one event larger than the bound still goes out.
   */
  private write(stream: Stream, text: string, id?: number): void {
    const { res } = stream;
    if (res.writableEnded || res.destroyed) return;
    const buffered = res.writableLength;
    if (buffered <= this.config.maxBufferBytes) {
      res.write(text);
      if (id !== undefined) stream.lastId = id;
      return;
    }
    this.unsubscribe(stream);
    this.onDrop('slow_client', buffered);
    const dropped: LiveEvent<'dropped'> = {
      id: stream.lastId,
      type: 'dropped',
      at: new Date().toISOString(),
      data: { reason: 'slow_client', buffered_bytes: buffered },
    };
    res.end(frameOf(dropped));
    // A client that reads nothing would hold the socket (and the buffer) until it does.
    const kill = setTimeout(() => res.destroy(), DROP_GRACE_MS).unref();
    res.once('close', () => clearTimeout(kill));
  }

  /** Ends every stream (the service is stopping): clients reconnect to the next run. */
  closeAll(): void {
    for (const stream of [...this.streams]) {
      this.unsubscribe(stream);
      stream.res.end();
    }
  }
}
