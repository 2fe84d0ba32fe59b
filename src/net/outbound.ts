import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { DomainError } from '../errors.js';
import { forbiddenAddress, guardLookup, isForbiddenAddress, refuseForbiddenHost } from './address-policy.js';

/** Statuses whose answer has no body (a Response refuses one). */
const NULL_BODY = new Set([204, 205, 304]);

/**
 * The one way the service fetches a URL a request named: a GET over node:http(s) whose
 * connections resolve names through the address policy (src/net/address-policy.ts), so every connection, every
 * redirect hop the caller follows and every keep-alive socket was opened to an allowed address. Answers a WHATWG
 * Response like fetch; failures below HTTP reject as fetch does (`TypeError` with the socket error as `cause`), a
 * refused address with the 400 `forbidden_address`. Redirects are never followed here: callers follow them by hand
 * and each hop comes back through `get`. No Accept-Encoding is sent, so bodies arrive as the server stores them.
 *
 * Not node's fetch with an undici dispatcher: an Agent from the undici package and the fetch built into Node are
 * separate copies whose dispatcher interfaces differ between majors (Node 24 and 26 reject or mishandle it).
 */
export class OutboundHttp {
  private readonly http: http.Agent;
  private readonly https: https.Agent;
  private readonly lookup: LookupFunction;

  /** `lookup` is the resolver (the system's by default; tests pass a stand-in), always wrapped by the policy. */
  constructor(lookup: LookupFunction = dns.lookup) {
    this.lookup = guardLookup(lookup);
    this.http = new http.Agent({ keepAlive: true, lookup: this.lookup });
    this.https = new https.Agent({ keepAlive: true, lookup: this.lookup });
  }

  async get(url: URL, init: { headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Response> {
    return this.send(url, { method: 'GET', headers: init.headers, signal: init.signal });
  }

  /**
   * Node's fetch in shape, over the policy, for the AI providers' API calls (the AI SDK takes it as its `fetch`; our
   * queued-provider clients call it). The body is read whole first (a Request serialises JSON, FormData, bytes), so
   * it goes with a Content-Length. Redirects are not followed: a provider's API answers in place, a 3xx is returned.
   */
  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const headers: http.OutgoingHttpHeaders = Object.fromEntries(request.headers);
    if (body) headers['content-length'] = body.length;
    return this.send(new URL(request.url), {
      method: request.method,
      headers,
      body,
      signal: request.signal,
    });
  };

  private async send(
    url: URL,
    options: { method: string; headers?: http.OutgoingHttpHeaders; body?: Buffer; signal?: AbortSignal },
  ): Promise<Response> {
    const { body, signal, ...rest } = options;
    signal?.throwIfAborted();
    const req = this.request(url, { ...rest, signal });
    return new Promise((resolve, reject) => {
      // `on`, not `once`: an abort after the answer arrived is one more error event.
      req.on('error', (err) =>
        // As fetch does: an abort rejects with the signal's reason.
        reject(
          signal?.aborted
            ? (signal.reason as unknown)
            : err instanceof DomainError
              ? err
              : new TypeError('fetch failed', { cause: err }),
        ),
      );
      req.once('response', (res) => {
        try {
          resolve(toResponse(res));
        } catch (err) {
          res.destroy();
          reject(new TypeError('fetch failed', { cause: err }));
        }
      });
      req.end(body);
    });
  }

  /** A request of any method through the policy, not yet ended (the loopback proxy forwards plain-http ones with it). */
  request(
    url: URL,
    options: { method: string; headers?: http.OutgoingHttpHeaders; signal?: AbortSignal },
  ): http.ClientRequest {
    refuseForbiddenHost(url);
    const secure = url.protocol === 'https:';
    if (!secure && url.protocol !== 'http:') throw new TypeError(`fetch failed: ${url.protocol} is not http(s)`);
    return (secure ? https : http).request(url, { ...options, agent: secure ? this.https : this.http });
  }

  /** A TCP connection through the policy (the loopback proxy's CONNECT tunnels). */
  connect(host: string, port: number): net.Socket {
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    if (isForbiddenAddress(bare)) throw forbiddenAddress(bare, bare);
    return net.connect({ host: bare, port, lookup: this.lookup });
  }

  /** Closes the kept-alive sockets (the service is stopping). */
  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

function toResponse(res: http.IncomingMessage): Response {
  const status = res.statusCode ?? 0;
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    try {
      headers.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
    } catch {
      // a header fetch would also drop (a value it cannot carry): nothing the callers read
    }
  }
  const empty = NULL_BODY.has(status);
  if (empty) res.resume();
  const body = empty ? null : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>);
  // Response refuses a status outside 200-599 (a RangeError, a failed fetch) and a reason phrase it cannot carry.
  const statusText = /^[\t\x20-\x7e\x80-\xff]*$/.test(res.statusMessage ?? '') ? (res.statusMessage ?? '') : '';
  return new Response(body, { status, statusText, headers });
}
