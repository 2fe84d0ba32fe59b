import { BoardMediaError } from './errors.js';
import type { Connection } from './connection.js';
import { readSse } from './sse.js';
import type { ActionCard, ChatRequest, ChatResult, ErrorBody } from './types.js';

export interface ChatOptions {
  /** Each piece of the assistant's text as the model writes it. */
  onDelta?: ((text: string) => void) | undefined;
  /** Each action card once it is complete (proposed, or applied / failed with auto-apply). */
  onAction?: ((card: ActionCard) => void) | undefined;
  /** Aborting hangs up, which aborts the model call on the service. */
  signal?: AbortSignal | undefined;
}

/**
 * One turn of POST /api/agents/chat, streamed (docs/agents.md): `message` events `{delta}`, `action` cards, then
 * `done` with the whole turn, which this resolves with. An `error` event, or a 4xx before the stream, rejects with
 * a BoardMediaError carrying the service's code; a stream that ends without either rejects with `stream_ended`.
 */
export async function chat(conn: Connection, request: ChatRequest, opts: ChatOptions = {}): Promise<ChatResult> {
  const res = await conn.fetch(conn.url('/api/agents/chat'), {
    method: 'POST',
    headers: { ...conn.headers(), 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(request),
    signal: opts.signal ?? null,
  });
  if (!res.ok) throw await BoardMediaError.fromResponse(res);
  if (!res.body) throw new BoardMediaError(res.status, 'stream_ended', 'The chat answer has no body');
  for await (const message of readSse(res.body)) {
    const data = JSON.parse(message.data) as unknown;
    switch (message.event) {
      case 'message':
        opts.onDelta?.((data as { delta: string }).delta);
        break;
      case 'action':
        opts.onAction?.(data as ActionCard);
        break;
      case 'done':
        return data as ChatResult;
      case 'error': {
        const { error } = data as ErrorBody;
        throw new BoardMediaError(res.status, error.code, error.message, error.details ?? []);
      }
    }
  }
  throw new BoardMediaError(res.status, 'stream_ended', 'The chat stream ended before its done event');
}
