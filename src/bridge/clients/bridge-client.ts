import http from 'node:http';
import https from 'node:https';
import type { BridgeItem } from '../items.js';
import type { BridgeStatus } from '../schemas.js';
import type { QueueResult } from '../service.js';

interface BridgeClientOptions {
  /** Base URL of the service, e.g. http://127.0.0.1:4100 */
  serviceUrl: string;
  botId: string;
  /** Sent as a bearer token when the service runs with API_TOKEN. */
  apiToken?: string;
}

export class BridgeHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'BridgeHttpError';
  }
}

/**
 * The service's terminal-bridge endpoints as seen by the two client programs (the chat bot and the terminal side).
 * JSON calls and long polls go through node:http with this client's own keep-alive agent rather than fetch:
 * aborting a fetch mid-request leaves undici holding a fresh, never-used connection that keeps the service from
 * closing until its header timeout, while here an abort destroys exactly the one socket and close() frees the rest.
 */
export class BridgeClient {
  readonly serviceUrl: string;
  readonly botId: string;
  private readonly headers: Record<string, string>;
  private readonly agent: http.Agent;

  constructor(opts: BridgeClientOptions) {
    this.serviceUrl = opts.serviceUrl.replace(/\/+$/, '');
    this.botId = opts.botId;
    this.headers = opts.apiToken ? { authorization: `Bearer ${opts.apiToken}` } : {};
    this.agent = this.serviceUrl.startsWith('https:')
      ? new https.Agent({ keepAlive: true })
      : new http.Agent({ keepAlive: true });
  }

  /** Closes the client's connections (call when the program stops). */
  close(): void {
    this.agent.destroy();
  }

  status(): Promise<BridgeStatus> {
    return this.json('GET', `/api/terminal-bridge/status?bot_id=${encodeURIComponent(this.botId)}`);
  }

  chat(chatId: number, enabled: boolean): Promise<BridgeStatus & { board_name: string | null }> {
    return this.json('POST', '/api/terminal-bridge/chat', { chat_id: chatId, enabled, bot_id: this.botId });
  }

  session(sessionId: string, boardId: string, enabled: boolean): Promise<BridgeStatus> {
    return this.json('POST', '/api/terminal-bridge/session', {
      session_id: sessionId,
      board_id: boardId,
      enabled,
      bot_id: this.botId,
    });
  }

  toMessenger(text: string): Promise<QueueResult> {
    return this.json('POST', '/api/terminal-bridge/to-messenger', { kind: 'text', text, bot_id: this.botId });
  }

  toTerminal(item: { kind: 'text'; text: string } | { kind: 'path'; url: string }): Promise<QueueResult> {
    return this.json('POST', '/api/terminal-bridge/to-terminal', { ...item, bot_id: this.botId });
  }

  /** One long poll; resolves with the items (empty on timeout). */
  async poll(
    direction: 'to-messenger' | 'to-terminal',
    waitSeconds: number,
    signal?: AbortSignal,
  ): Promise<BridgeItem[]> {
    const q = `wait=${waitSeconds}&bot_id=${encodeURIComponent(this.botId)}`;
    const body = await this.json<{ items: BridgeItem[] }>(
      'GET',
      `/api/terminal-bridge/${direction}?${q}`,
      undefined,
      signal,
    );
    return body.items;
  }

  /** Uploads a file to a board as a new element carrying `data`. */
  async upload(boardId: string, file: Blob, filename: string, data: Record<string, unknown>): Promise<{ url: string }> {
    const form = new FormData();
    form.set('board_id', boardId);
    form.set('add_to_board', 'true');
    form.set('data', JSON.stringify(data));
    form.set('file', file, filename);
    const res = await fetch(`${this.serviceUrl}/api/upload`, { method: 'POST', headers: this.headers, body: form });
    return this.read(res);
  }

  /** Streams a `/media/...` file from the service. */
  async media(url: string): Promise<Response> {
    const res = await fetch(`${this.serviceUrl}${url}`, { headers: this.headers });
    if (!res.ok) throw new BridgeHttpError(res.status, `GET ${url} answered ${res.status}`);
    return res;
  }

  private json<T>(method: string, pathAndQuery: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const url = new URL(this.serviceUrl + pathAndQuery);
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise<T>((resolve, reject) => {
      const req = transport.request(
        url,
        {
          method,
          agent: this.agent,
          signal,
          headers: payload
            ? { ...this.headers, 'content-type': 'application/json', 'content-length': payload.length }
            : this.headers,
        },
        (res) => {
          const parts: Buffer[] = [];
          res.on('data', (c: Buffer) => parts.push(c));
          res.on('error', reject);
          res.on('end', () => {
            try {
              resolve(parseAnswer<T>(res.statusCode ?? 500, Buffer.concat(parts).toString('utf8')));
            } catch (err) {
              reject(err);
            }
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  private async read<T>(res: Response): Promise<T> {
    return parseAnswer<T>(res.status, await res.text());
  }
}

/** The JSON body of a 2xx answer; otherwise a BridgeHttpError carrying the service's error message. */
function parseAnswer<T>(status: number, text: string): T {
  if (status < 200 || status >= 300) {
    let message = text;
    try {
      message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text;
    } catch {
      // not JSON: keep the raw text
    }
    throw new BridgeHttpError(status, `${status}: ${message}`);
  }
  return JSON.parse(text) as T;
}
