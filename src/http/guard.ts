import crypto from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Config } from '../config.js';
import { hostnameOf, isLoopbackHost } from './loopback.js';

const deny = (reply: FastifyReply, status: number, code: string, message: string) =>
  reply.status(status).header('cache-control', 'no-store').send({ error: { code, message } });

function tokenMatches(expected: string, given: string | undefined): boolean {
  if (!given) return false;
  const a = crypto.createHash('sha256').update(expected).digest();
  const b = crypto.createHash('sha256').update(given).digest();
  return crypto.timingSafeEqual(a, b);
}

/**
 * The origin a Referer names (`app://board/x` -> `app://board`: URL gives "null" for schemes it does not know);
 * undefined when it is not a URL, which no browser sends.
 */
function refererOrigin(referer: string | undefined): string | undefined {
  if (!referer) return undefined;
  try {
    const url = new URL(referer);
    return url.origin !== 'null' ? url.origin : `${url.protocol}//${url.host}`;
  } catch {
    return undefined;
  }
}

function bearer(h: string | undefined): string | undefined {
  const m = h ? /^Bearer\s+(.+)$/i.exec(h) : null;
  return m?.[1].trim();
}

/** How the guard answers one request: refused (status, error body, headers), or let through with CORS headers. */
export type GuardVerdict =
  | { deny: { status: number; code: string; message: string; headers: Record<string, string> } }
  | { deny?: undefined; cors: Record<string, string>; preflight: boolean };

/**
 * Where `?token=` may stand in for the Authorization header: /media (an <img> cannot send headers) and the event
 * stream (EventSource cannot either). Everywhere else a token in a URL would only end up in histories and logs.
 */
const takesQueryToken = (url: string) =>
  url.startsWith('/media/') || url === '/api/events' || url.startsWith('/api/events?');

/**
 * What the guard looks at; `mediaToken` is the `?token=` of a /media or /api/events URL, parsed only when a token is
 * required.
 */
export interface GuardedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  mediaToken: () => unknown;
}

const PREFLIGHT_HEADERS = {
  'access-control-allow-methods': 'GET, HEAD, POST, PUT, PATCH, DELETE',
  // Last-Event-ID: EventSource sends it when it reconnects, and it is not a header browsers let through unasked.
  'access-control-allow-headers':
    'Authorization, Content-Type, Range, If-None-Match, If-Modified-Since, If-Range, Last-Event-ID',
  'access-control-max-age': '600',
};

/**
 * The guard every request passes before routing, so that only programs on this machine drive the service:
 * 1. Host must be a loopback name or address (defeats DNS rebinding), unless a token protects a network bind.
 * 2. A request that carries an Origin must come from this service itself or from ALLOWED_ORIGINS: a web page in the
 *    user's browser cannot upload, read boards or type into the terminal. `null` is foreign unless listed. A request a
 *    browser marks cross-site (Sec-Fetch-Site), or whose Referer names a foreign page, without such an Origin is
 *    refused too, except for embeddable /media.
 * 3. With API_TOKEN set, every request needs `Authorization: Bearer <token>` (`/media` and `/api/events` also take
 *    `?token=`).
 * Allowed origins get CORS headers and their preflights are answered here.
 * A pure decision, so that the /media fast path (src/serving/fast-path.ts) asks exactly what the hook below asks.
 */
export function createGuard(config: Config): (req: GuardedRequest) => GuardVerdict {
  const allowed = new Set(config.allowedOrigins);
  const refuse = (status: number, code: string, message: string, headers: Record<string, string> = {}) => ({
    deny: { status, code, message, headers },
  });

  return (req) => {
    const host = req.headers.host;
    if (!host) return refuse(400, 'missing_host', 'The Host header is required');
    if (!isLoopbackHost(hostnameOf(host)) && !config.apiToken) {
      return refuse(403, 'forbidden_host', `Host ${host} is not a loopback address`);
    }

    const origin = req.headers.origin;
    const own = origin === `http://${host}`;
    const trusted = origin !== undefined && (own || allowed.has(origin));
    // An <img>, <script> or link on another site sends no Origin, but browsers mark it with Sec-Fetch-Site. Such a
    // request must not reach the API (a GET on a bridge queue would consume its items); /media stays embeddable, since
    // a foreign page can show a file but never read it.
    const site = req.headers['sec-fetch-site'];
    // Older browsers send neither Origin nor Sec-Fetch-Site for an image tag or a link, but they name the page in
    // Referer: a foreign one is treated like a cross-site mark.
    const fromPage = origin === undefined ? refererOrigin(req.headers.referer) : undefined;
    const foreignPage =
      fromPage !== undefined && fromPage !== refererOrigin(`http://${host}`) && !allowed.has(fromPage);
    if ((site === 'cross-site' || site === 'same-site' || foreignPage) && !trusted && !req.url.startsWith('/media/')) {
      return refuse(
        403,
        'forbidden_origin',
        'Cross-site requests are not allowed; add the calling origin to ALLOWED_ORIGINS',
      );
    }
    const cors: Record<string, string> = {};
    if (origin !== undefined) {
      if (!trusted) {
        return refuse(
          403,
          'forbidden_origin',
          `Requests from origin ${origin} are not allowed; add it to ALLOWED_ORIGINS`,
        );
      }
      if (!own) {
        cors['access-control-allow-origin'] = origin;
        cors['vary'] = 'Origin';
        cors['access-control-expose-headers'] = 'Content-Range, Content-Length, Accept-Ranges, ETag';
      }
      if (req.method === 'OPTIONS') return { cors, preflight: true };
    }

    if (config.apiToken) {
      const query = takesQueryToken(req.url) ? req.mediaToken() : undefined;
      const given = bearer(req.headers.authorization) ?? (typeof query === 'string' ? query : undefined);
      if (!tokenMatches(config.apiToken, given)) {
        return refuse(401, 'unauthorized', 'A valid Authorization: Bearer <API_TOKEN> header is required', {
          ...cors,
          'www-authenticate': 'Bearer',
        });
      }
    }
    return { cors, preflight: false };
  };
}

/** Installs the guard (createGuard) as the first hook of every request. */
export function installGuard(app: FastifyInstance, config: Config): void {
  const check = createGuard(config);
  app.addHook('onRequest', async (req, reply) => {
    const verdict = check({
      method: req.method,
      url: req.url,
      headers: req.headers,
      mediaToken: () => (req.query as Record<string, unknown> | undefined)?.token,
    });
    if (verdict.deny) {
      const { status, code, message, headers } = verdict.deny;
      return deny(reply.headers(headers), status, code, message);
    }
    reply.headers(verdict.cors);
    if (verdict.preflight) return reply.status(204).headers(PREFLIGHT_HEADERS).send();
  });
}
