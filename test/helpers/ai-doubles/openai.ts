import sharp from 'sharp';
import { bearer, formData, HttpDouble, sendJson, sse, type Recorded } from './http-double.js';
import { halves, pieces, turnFor, type ChatScript } from './chat-script.js';

export interface TranscriptionAnswer {
  text: string;
  language?: string;
  segments?: { start: number; end: number; text: string }[];
}

/**
 * OpenAI's documented wire protocol, for tests: Chat Completions (JSON and SSE streaming with tool calls),
 * Images (generations and edits, answered as `b64_json`), Audio transcriptions (json / verbose_json), and
 * `GET /v1/models` (so it also stands in for a local OpenAI-compatible server). Base URL: `double.url + '/v1'`.
 */
export class OpenAIDouble extends HttpDouble {
  /** Scripted assistant turns, served in order; then a default greeting. */
  readonly chat: ChatScript[] = [];
  /** Image bytes to answer with, in order; then `defaultImage`. */
  readonly images: Buffer[] = [];
  defaultImage = Buffer.alloc(0);
  /** Answers one transcription request from the uploaded file's bytes and fields. */
  transcribe: (file: Buffer, fields: Record<string, string>) => TranscriptionAnswer | Promise<TranscriptionAnswer> = (
    file,
  ) => ({ text: `${file.length} bytes of audio` });
  /** Larger audio uploads get OpenAI's 413, as the real API does past 25 MB. */
  maxUploadBytes = 25 * 1024 * 1024;
  /** Ids `GET /v1/models` lists. */
  models = ['gpt-4.1', 'gpt-image-1'];

  constructor(readonly apiKey: string | undefined) {
    super();
    const guard = (rec: Recorded, res: import('node:http').ServerResponse) => {
      if (this.apiKey === undefined || bearer(rec) === this.apiKey) return true;
      sendJson(res, 401, {
        error: {
          message: 'Incorrect API key provided.',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      });
      return false;
    };
    this.route('POST', /^\/v1\/chat\/completions$/, 'POST /v1/chat/completions', (rec, res) => {
      if (guard(rec, res)) this.chatCompletion(rec, res);
    });
    this.route('POST', /^\/v1\/images\/(generations|edits)$/, 'POST /v1/images', async (rec, res) => {
      if (!guard(rec, res)) return;
      const n = rec.json?.n ?? Number((await this.fields(rec)).n ?? 1);
      const data = Array.from({ length: n }, () => ({
        b64_json: (this.images.shift() ?? this.defaultImage).toString('base64'),
      }));
      sendJson(res, 200, {
        created: Math.floor(Date.now() / 1000),
        data,
        usage: { input_tokens: 10, output_tokens: 100, total_tokens: 110 },
      });
    });
    this.route('POST', /^\/v1\/audio\/transcriptions$/, 'POST /v1/audio/transcriptions', async (rec, res) => {
      if (!guard(rec, res)) return;
      if (rec.body.length > this.maxUploadBytes) {
        return sendJson(res, 413, {
          error: {
            message: `Maximum content size limit (${this.maxUploadBytes}) exceeded (${rec.body.length} bytes read)`,
            type: 'server_error',
            param: null,
            code: null,
          },
        });
      }
      const form = await formData(rec);
      const file = form.get('file') as File;
      const fields: Record<string, string> = {};
      for (const [k, v] of form.entries()) if (typeof v === 'string') fields[k] = v;
      const answer = await this.transcribe(Buffer.from(await file.arrayBuffer()), fields);
      if (fields.response_format !== 'verbose_json') return sendJson(res, 200, { text: answer.text });
      const segments = (answer.segments ?? []).map((s, id) => ({
        id,
        seek: 0,
        start: s.start,
        end: s.end,
        text: s.text,
        tokens: [1],
        temperature: 0,
        avg_logprob: -0.1,
        compression_ratio: 1,
        no_speech_prob: 0,
      }));
      const duration = segments.length ? segments[segments.length - 1].end : 0;
      sendJson(res, 200, {
        task: 'transcribe',
        language: answer.language ?? 'english',
        duration,
        text: answer.text,
        segments,
      });
    });
    this.route('GET', /^\/v1\/models$/, 'GET /v1/models', (rec, res) => {
      if (guard(rec, res))
        sendJson(res, 200, {
          object: 'list',
          data: this.models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'double' })),
        });
    });
  }

  /** The Chat Completions requests received, parsed. */
  get chatRequests(): any[] {
    return this.received('POST', /\/chat\/completions$/).map((r) => r.json);
  }

  private async fields(rec: Recorded): Promise<Record<string, string>> {
    if (rec.json) return rec.json;
    const out: Record<string, string> = {};
    for (const [k, v] of (await formData(rec)).entries()) if (typeof v === 'string') out[k] = v;
    return out;
  }

  private chatCompletion(rec: Recorded, res: import('node:http').ServerResponse): void {
    const turn = turnFor(this.chat, rec);
    const model = String(rec.json?.model ?? 'model');
    const id = `chatcmpl-${this.requests.length}`;
    const created = Math.floor(Date.now() / 1000);
    const calls = (turn.toolCalls ?? []).map((c, i) => ({ ...c, id: c.id ?? `call_${i + 1}` }));
    const finish = turn.finish ?? (calls.length ? 'tool_calls' : 'stop');
    const usage = {
      prompt_tokens: turn.usage?.input ?? 10,
      completion_tokens: turn.usage?.output ?? 5,
      total_tokens: (turn.usage?.input ?? 10) + (turn.usage?.output ?? 5),
    };
    if (!rec.json?.stream) {
      const message = {
        role: 'assistant',
        content: turn.text ?? (turn.chunks ? turn.chunks.join('') : null),
        ...(calls.length
          ? {
              tool_calls: calls.map((c) => ({
                id: c.id,
                type: 'function',
                function: { name: c.name, arguments: JSON.stringify(c.input ?? {}) },
              })),
            }
          : {}),
      };
      return sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message, finish_reason: finish }],
        usage,
      });
    }
    const stream = sse(res);
    const chunk = (delta: unknown, finish_reason: string | null = null) =>
      stream.send({
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [{ index: 0, delta, finish_reason }],
      });
    chunk({ role: 'assistant', content: '' });
    for (const p of pieces(turn)) chunk({ content: p });
    calls.forEach((c, index) => {
      const [a, b] = halves(c.input);
      chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: a } }] });
      chunk({ tool_calls: [{ index, function: { arguments: b } }] });
    });
    chunk({}, finish);
    if (rec.json?.stream_options?.include_usage)
      stream.send({ id, object: 'chat.completion.chunk', created, model, choices: [], usage });
    stream.raw('data: [DONE]\n\n');
    stream.end();
  }
}

/** Starts an OpenAI double; with `apiKey`, any other key gets OpenAI's 401. */
export async function startOpenAIDouble(opts: { apiKey?: string } = {}): Promise<OpenAIDouble> {
  const d = new OpenAIDouble(opts.apiKey);
  d.defaultImage = await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 200, g: 30, b: 90 } } })
    .png()
    .toBuffer();
  return d.listen();
}
