import http from 'node:http';

/** One event as a client parsed it off the wire: its SSE fields and the envelope in `data`. */
export interface WireEvent {
  id: string | undefined;
  event: string;
  data: any;
}

/**
 * A GET /api/events client over node:http, reading the stream as it arrives: events and comment lines, parsed the way
 * EventSource does (fields per line, a blank line ends an event). `next` waits for the next event that matches.
 */
export class EventStream {
  readonly events: WireEvent[] = [];
  readonly comments: string[] = [];
  /** Everything received, for tests that look at the raw bytes. */
  raw = '';
  ended = false;
  private cursor = 0;
  private buffer = '';
  private wake: (() => void) | undefined;

  private constructor(
    readonly req: http.ClientRequest,
    readonly res: http.IncomingMessage,
  ) {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => this.take(chunk));
    const end = () => {
      this.ended = true;
      this.wake?.();
    };
    res.on('end', end);
    res.on('close', end);
    res.on('error', end);
  }

  /** Opens the stream; resolves with the answer's headers (a refused request: `status` and its JSON `body`). */
  static open(
    baseUrl: string,
    query = '',
    headers: Record<string, string> = {},
  ): Promise<EventStream & { status: number; body?: any }> {
    return new Promise((resolve, reject) => {
      const req = http.get(`${baseUrl}/api/events${query}`, { headers }, (res) => {
        const stream = new EventStream(req, res) as EventStream & { status: number; body?: any };
        stream.status = res.statusCode ?? 0;
        if (stream.status === 200) return resolve(stream);
        res.on('end', () => {
          stream.body = stream.raw ? JSON.parse(stream.raw) : undefined;
          resolve(stream);
        });
      });
      req.on('error', reject);
    });
  }

  private take(chunk: string): void {
    this.raw += chunk;
    this.buffer += chunk;
    for (let end = this.buffer.indexOf('\n\n'); end !== -1; end = this.buffer.indexOf('\n\n')) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let id: string | undefined;
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
        else if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length) this.events.push({ id, event, data: JSON.parse(data.join('\n')) });
    }
    this.wake?.();
  }

  /** The next event not yet taken (matching `match`, skipping others), or a failure after `timeoutMs`. */
  async next(match: (e: WireEvent) => boolean = () => true, timeoutMs = 15_000): Promise<WireEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      while (this.cursor < this.events.length) {
        const e = this.events[this.cursor++];
        if (match(e)) return e;
      }
      if (this.ended) throw new Error(`the stream ended; events: ${this.events.map((e) => e.event).join(', ')}`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`no matching event in ${timeoutMs} ms; got: ${this.events.map((e) => e.event).join(', ')}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** The next event, which must be of `type` (the stream's order is the writes' order). */
  async expect(type: string, timeoutMs?: number): Promise<WireEvent> {
    const e = await this.next(() => true, timeoutMs);
    if (e.event !== type) throw new Error(`expected ${type}, got ${e.event}: ${JSON.stringify(e.data).slice(0, 300)}`);
    return e;
  }

  /** The next event of `type`, skipping others. */
  nextOf(type: string, timeoutMs?: number): Promise<WireEvent> {
    return this.next((e) => e.event === type, timeoutMs);
  }

  close(): void {
    this.req.destroy();
  }
}
