import type { ServerResponse } from 'node:http';
import { HttpDouble, sendJson, sse, type Recorded } from './http-double.js';
import { halves, pieces, turnFor, type ChatScript } from './chat-script.js';

/**
 * Anthropic's Messages API as documented, for tests: `POST /v1/messages`, JSON or streamed as the named SSE events
 * (message_start, content_block_start/delta/stop with text_delta and input_json_delta, message_delta, message_stop).
 * Auth by `x-api-key`. Base URL: `double.url + '/v1'`.
 */
export class AnthropicDouble extends HttpDouble {
  readonly chat: ChatScript[] = [];

  constructor(readonly apiKey: string | undefined) {
    super();
    this.route('POST', /^\/v1\/messages$/, 'POST /v1/messages', (rec, res) => {
      if (this.apiKey !== undefined && rec.headers['x-api-key'] !== this.apiKey) {
        return sendJson(res, 401, {
          type: 'error',
          error: { type: 'authentication_error', message: 'invalid x-api-key' },
        });
      }
      this.messages(rec, res);
    });
  }

  get messageRequests(): any[] {
    return this.received('POST', /\/messages$/).map((r) => r.json);
  }

  private messages(rec: Recorded, res: ServerResponse): void {
    const turn = turnFor(this.chat, rec);
    const model = String(rec.json?.model ?? 'claude');
    const id = `msg_${this.requests.length}`;
    const calls = (turn.toolCalls ?? []).map((c, i) => ({ ...c, id: c.id ?? `toolu_${i + 1}` }));
    const stop = turn.finish ?? (calls.length ? 'tool_use' : 'end_turn');
    const usage = { input_tokens: turn.usage?.input ?? 10, output_tokens: turn.usage?.output ?? 5 };
    const text = turn.text ?? (turn.chunks ? turn.chunks.join('') : undefined);
    if (!rec.json?.stream) {
      const content = [
        ...(text !== undefined ? [{ type: 'text', text }] : []),
        ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.input ?? {} })),
      ];
      return sendJson(res, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content,
        stop_reason: stop,
        stop_sequence: null,
        usage,
      });
    }
    const s = sse(res);
    const ev = (type: string, body: Record<string, unknown>) => s.send({ type, ...body }, type);
    ev('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.input_tokens, output_tokens: 1 },
      },
    });
    let index = 0;
    const parts = pieces(turn);
    if (parts.length) {
      ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const p of parts) ev('content_block_delta', { index, delta: { type: 'text_delta', text: p } });
      ev('content_block_stop', { index });
      index++;
    }
    for (const c of calls) {
      ev('content_block_start', { index, content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} } });
      for (const half of halves(c.input))
        ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: half } });
      ev('content_block_stop', { index });
      index++;
    }
    ev('message_delta', {
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    });
    ev('message_stop', {});
    s.end();
  }
}

export async function startAnthropicDouble(opts: { apiKey?: string } = {}): Promise<AnthropicDouble> {
  return new AnthropicDouble(opts.apiKey).listen();
}
