import type { BridgeItem } from '../bridge/items.js';
import type { BridgeStatus, QueueResult } from '../bridge/state.js';

export interface BridgeClientOptions {
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

/** The service's terminal-bridge endpoints as seen by the two client programs (the chat bot and the terminal side). */
export class BridgeClient {
  readonly serviceUrl: string;
  readonly botId: string;
  private readonly headers: Record<string, string>;

  constructor(opts: BridgeClientOptions) {
    this.serviceUrl = opts.serviceUrl.replace(/\/+$/, '');
    this.botId = opts.botId;
    this.headers = opts.apiToken ? { authorization: `Bearer ${opts.apiToken}` } : {};
  }

  status(): Promise<BridgeStatus> {
    return this.json('GET', `/api/terminal-bridge/status?bot_id=${encodeURIComponent(this.botId)}`);
  }

  chat(chatId: number, enabled: boolean): Promise<BridgeStatus & { board_name: string | null }> {
    return this.json('POST', '/api/terminal-bridge/chat', { chat_id: chatId, enabled, bot_id: this.botId });
  }

  session(sessionId: string, boardId: string, enabled: boolean): Promise<BridgeStatus> {
    return this.json('POST', '/api/terminal-bridge/session', { session_id: sessionId, board_id: boardId, enabled, bot_id: this.botId });
  }

  toMessenger(text: string): Promise<QueueResult> {
    return this.json('POST', '/api/terminal-bridge/to-messenger', { kind: 'text', text, bot_id: this.botId });
  }

  toTerminal(item: { kind: 'text'; text: string } | { kind: 'path'; url: string }): Promise<QueueResult> {
    return this.json('POST', '/api/terminal-bridge/to-terminal', { ...item, bot_id: this.botId });
  }

  /** One long poll; resolves with the items (empty on timeout). */
  async poll(direction: 'to-messenger' | 'to-terminal', waitSeconds: number, signal?: AbortSignal): Promise<BridgeItem[]> {
    const q = `wait=${waitSeconds}&bot_id=${encodeURIComponent(this.botId)}`;
    const body = await this.json<{ items: BridgeItem[] }>('GET', `/api/terminal-bridge/${direction}?${q}`, undefined, signal);
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

  private async json<T>(method: string, pathAndQuery: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const res = await fetch(`${this.serviceUrl}${pathAndQuery}`, {
      method,
      headers: body === undefined ? this.headers : { ...this.headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
    return this.read(res);
  }

  private async read<T>(res: Response): Promise<T> {
    const text = await res.text();
    if (!res.ok) {
      let message = text;
      try {
        message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text;
      } catch {
        // not JSON: keep the raw text
      }
      throw new BridgeHttpError(res.status, `${res.status}: ${message}`);
    }
    return JSON.parse(text) as T;
  }
}
