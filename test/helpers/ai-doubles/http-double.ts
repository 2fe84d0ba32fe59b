import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a double received, kept for assertions. */
export interface Recorded {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The body parsed as JSON when it is JSON. */
  json?: any;
}

/** A reply scripted by a test, served before the double's own handling of the route. */
export type Scripted =
  | { status: number; headers?: Record<string, string>; json?: unknown; text?: string }
  /** Never answers (a hung provider); the socket stays open until the client gives up or the double closes. */
  | { hang: true };

export type Handler = (req: Recorded, res: http.ServerResponse, match: RegExpMatchArray) => void | Promise<void>;

/**
 * The base of every provider double: a real HTTP server on 127.0.0.1 with routes `METHOD /regex/`, a log of the
 * requests, and one-shot scripted replies (failures, rate limits, hangs) per route key such as `POST /v1/images/generations`.
 */
export class HttpDouble {
  readonly requests: Recorded[] = [];
  private readonly routes: { method: string; pattern: RegExp; key: string; handler: Handler }[] = [];
  private readonly scripted = new Map<string, Scripted[]>();
  private readonly server: http.Server;
  private readonly hung = new Set<http.ServerResponse>();
  url = '';

  constructor() {
    this.server = http.createServer((req, res) => void this.dispatch(req, res));
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** `key` names the route for `script()`; the pattern is matched against the path without the query. */
  route(method: string, pattern: RegExp, key: string, handler: Handler): void {
    this.routes.push({ method, pattern, key, handler });
  }

  /** Replies served, in order, to the next requests of a route (then the route's normal handling resumes). */
  script(key: string, ...replies: Scripted[]): void {
    this.scripted.set(key, [...(this.scripted.get(key) ?? []), ...replies]);
  }

  /** Requests whose path matches. */
  received(method: string, pattern: RegExp): Recorded[] {
    return this.requests.filter((r) => r.method === method && pattern.test(r.path));
  }

  async close(): Promise<void> {
    for (const res of this.hung) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async dispatch(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const path = (req.url ?? '/').split('?')[0];
    const rec: Recorded = { method: req.method ?? 'GET', path, headers: req.headers, body };
    if ((req.headers['content-type'] ?? '').includes('json') && body.length) {
      try {
        rec.json = JSON.parse(body.toString('utf8'));
      } catch {
        // kept raw
      }
    }
    this.requests.push(rec);
    for (const r of this.routes) {
      const m = r.method === rec.method ? path.match(r.pattern) : null;
      if (!m) continue;
      const queue = this.scripted.get(r.key);
      const next = queue?.shift();
      if (next) return this.reply(res, next);
      try {
        await r.handler(rec, res, m);
      } catch (err) {
        sendJson(res, 500, { error: { message: `double failed: ${(err as Error).message}` } });
      }
      return;
    }
    sendJson(res, 404, { error: { message: `no route ${rec.method} ${path}` } });
  }

  private reply(res: http.ServerResponse, s: Scripted): void {
    if ('hang' in s) {
      this.hung.add(res);
      res.on('close', () => this.hung.delete(res));
      return;
    }
    if (s.json !== undefined) return sendJson(res, s.status, s.json, s.headers);
    res.writeHead(s.status, s.headers ?? {});
    res.end(s.text ?? '');
  }
}

export function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** Starts a Server-Sent Events answer; `send` writes one `data:` event (with an optional `event:` name). */
export function sse(res: http.ServerResponse): {
  send(data: unknown, event?: string): void;
  raw(line: string): void;
  end(): void;
} {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  return {
    send(data, event) {
      res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
    },
    raw(line) {
      res.write(line);
    },
    end() {
      res.end();
    },
  };
}

/** Parses a multipart/form-data body with the platform's own parser (the same one fetch uses). */
export async function formData(rec: Recorded): Promise<FormData> {
  const request = new Request('http://double/', {
    method: 'POST',
    headers: { 'content-type': String(rec.headers['content-type']) },
    body: new Uint8Array(rec.body),
  });
  return request.formData();
}

/** The bearer token of a request (`Authorization: Bearer x` or `Key x`). */
export function bearer(rec: Recorded): string | undefined {
  const h = rec.headers.authorization;
  return typeof h === 'string' ? h.replace(/^(Bearer|Key|Token)\s+/i, '') : undefined;
}
