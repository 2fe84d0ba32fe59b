/** One Server-Sent Event as the WHATWG event-stream rules dispatch it. */
export interface SseMessage {
  /** `event:` (default `message`). */
  event: string;
  /** Every `data:` line joined with newlines. */
  data: string;
  /** `id:` of this event, when it had one. */
  id: string | undefined;
  /** `retry:` milliseconds, when the block set it. */
  retry: number | undefined;
}

/**
 * Reads a `text/event-stream` body into events, as they arrive. Lines end in CRLF, LF or CR; `:` lines are comments
 * (heartbeats); a blank line dispatches the block when it had data. Each chunk is scanned once, so a long stream or a
 * long line costs linear time. `onChunk` sees every chunk (heartbeats included), for idle watchdogs. Works in browsers
 * and Node alike (a reader, not async iteration, which not every browser's ReadableStream has).
 */
export async function* readSse(
  body: ReadableStream<Uint8Array>,
  onChunk: () => void = () => undefined,
): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let partial = ''; // the unfinished last line of the chunks so far
  let afterCR = false; // the previous chunk ended in CR: a LF at the start of this one belongs to it
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  let retry: number | undefined;

  const line = (text: string): SseMessage | undefined => {
    if (text === '') {
      const message = data.length > 0 ? { event: event || 'message', data: data.join('\n'), id, retry } : undefined;
      event = '';
      data = [];
      id = undefined;
      retry = undefined;
      return message;
    }
    if (text.startsWith(':')) return undefined;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\0')) id = value;
    else if (field === 'retry' && /^[0-9]+$/.test(value)) retry = Number(value);
    return undefined;
  };

  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return; // an unfinished block at the end is discarded, as EventSource does
      onChunk();
      let text = decoder.decode(value, { stream: true });
      if (afterCR && text.startsWith('\n')) text = text.slice(1);
      afterCR = false;
      let start = 0;
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c !== 10 && c !== 13) continue;
        const message = line(partial + text.slice(start, i));
        partial = '';
        if (message) yield message;
        if (c === 13) {
          if (i + 1 === text.length) afterCR = true;
          else if (text.charCodeAt(i + 1) === 10) i++;
        }
        start = i + 1;
      }
      partial += text.slice(start);
    }
  } finally {
    // A consumer that stops early (break, an error) releases the connection.
    await reader.cancel().catch(() => undefined);
  }
}
