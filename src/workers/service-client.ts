import { Readable } from 'node:stream';
import { DomainError, type ErrorKind } from '../errors.js';

/** A failure to reach the service or a 5xx from it: something that can pass, so the job is tried again. */
export class ServiceUnreachable extends DomainError {
  constructor(message: string) {
    super('unavailable', 'service_unreachable', message);
  }
}

/** How a render worker talks to the service: bearer token on every request, the service's own error body on failure. */
export class ServiceClient {
  constructor(
    readonly base: string,
    private readonly token: string,
  ) {}

  async request(
    method: string,
    urlPath: string,
    init: { json?: unknown; body?: Readable; signal?: AbortSignal; contentType?: string } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
    let body: BodyInit | undefined;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    } else if (init.body) {
      headers['content-type'] = init.contentType ?? 'application/octet-stream';
      body = Readable.toWeb(init.body) as unknown as BodyInit;
    }
    // Only ever the service: a job's /media URL written with another origin (the service resolved its path alone) is
    // asked of the service too, never of the host it names, and never with the token.
    const named = new URL(urlPath, this.base);
    let res: Response;
    try {
      res = await fetch(new URL(named.pathname + named.search, this.base), {
        method,
        headers,
        body,
        signal: init.signal,
        ...(init.body ? { duplex: 'half' } : {}),
      } as RequestInit);
    } catch (err) {
      if (init.signal?.aborted) throw init.signal.reason;
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      throw new ServiceUnreachable(
        `The service at ${this.base} cannot be reached (${cause ?? (err as Error).message})`,
      );
    }
    if (res.ok) return res;
    const text = await res.text().catch(() => '');
    let error: { code?: string; message?: string } = {};
    try {
      error = (JSON.parse(text) as { error?: typeof error }).error ?? {};
    } catch {
      // not the service's error body: the status says enough
    }
    const message = `${method} ${urlPath}: ${res.status} ${error.message ?? text.slice(0, 200)}`;
    if (res.status >= 500) throw new ServiceUnreachable(message);
    const kind: ErrorKind = res.status === 404 ? 'not_found' : res.status === 409 ? 'conflict' : 'invalid_input';
    throw new DomainError(kind, error.code ?? `http_${res.status}`, message);
  }

  async json<T>(method: string, urlPath: string, json?: unknown, signal?: AbortSignal): Promise<T> {
    return (await (await this.request(method, urlPath, { json, signal })).json()) as T;
  }
}
