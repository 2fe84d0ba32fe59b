/** One Server-Sent Event as the client saw it, with the time its bytes arrived. */
export interface SseEvent {
  event: string;
  data: any;
  at: number;
}

export interface SseAnswer {
  status: number;
  contentType: string;
  /** Access-Control-Allow-Origin of the answer (CORS for an allowed Origin). */
  allowOrigin: string | null;
  events: SseEvent[];
  /** The error body when the answer was not a stream. */
  body?: any;
}

/** Splits a text/event-stream into events (`event:` and one `data:` line each, blank-line separated). */
export function parseEvents(buffer: string, at: number): { events: SseEvent[]; rest: string } {
  const events: SseEvent[] = [];
  let rest = buffer;
  for (let end = rest.indexOf('\n\n'); end !== -1; end = rest.indexOf('\n\n')) {
    const block = rest.slice(0, end);
    rest = rest.slice(end + 2);
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length) events.push({ event, data: JSON.parse(data.join('\n')), at });
  }
  return { events, rest };
}

/**
 * POSTs a chat and reads the stream as it arrives. `onEvent` sees each event at once (a test can act mid-stream);
 * `signal` lets a test hang up.
 */
export async function postSse(
  baseUrl: string,
  path: string,
  body: unknown,
  opts: { signal?: AbortSignal; onEvent?: (e: SseEvent) => void; headers?: Record<string, string> } = {},
): Promise<SseAnswer> {
  const res = await fetch(baseUrl + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...opts.headers },
    body: JSON.stringify(body),
    signal: opts.signal,
  });
  const contentType = res.headers.get('content-type') ?? '';
  const allowOrigin = res.headers.get('access-control-allow-origin');
  if (!contentType.startsWith('text/event-stream'))
    return { status: res.status, contentType, allowOrigin, events: [], body: await res.json() };
  const events: SseEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    const parsed = parseEvents(buffer, performance.now());
    buffer = parsed.rest;
    for (const e of parsed.events) {
      events.push(e);
      opts.onEvent?.(e);
    }
  }
  return { status: res.status, contentType, allowOrigin, events };
}
