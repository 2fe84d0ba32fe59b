import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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

function bearer(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  const m = h ? /^Bearer\s+(.+)$/i.exec(h) : null;
  return m?.[1].trim();
}

/**
 * The guard every request passes before routing, so that only programs on this machine drive the service:
 * 1. Host must be a loopback name or address (defeats DNS rebinding), unless a token protects a network bind.
 * 2. A request that carries an Origin must come from this service itself or from ALLOWED_ORIGINS: a web page in the
 *    user's browser cannot upload, read boards or type into the terminal. `null` is foreign unless listed. A request a
 *    browser marks cross-site (Sec-Fetch-Site), or whose Referer names a foreign page, without such an Origin is
 *    refused too, except for embeddable /media.
 * 3. With API_TOKEN set, every request needs `Authorization: Bearer <token>` (`/media` also takes `?token=`).
 * Allowed origins get CORS headers and their preflights are answered here.
 */
export function installGuard(app: FastifyInstance, config: Config): void {
  const allowed = new Set(config.allowedOrigins);

  app.addHook('onRequest', async (req, reply) => {
    const host = req.headers.host;
    if (!host) return deny(reply, 400, 'missing_host', 'The Host header is required');
    if (!isLoopbackHost(hostnameOf(host)) && !config.apiToken) {
      return deny(reply, 403, 'forbidden_host', `Host ${host} is not a loopback address`);
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
      return deny(
        reply,
        403,
        'forbidden_origin',
        'Cross-site requests are not allowed; add the calling origin to ALLOWED_ORIGINS',
      );
    }
    if (origin !== undefined) {
      if (!trusted) {
        return deny(
          reply,
          403,
          'forbidden_origin',
          `Requests from origin ${origin} are not allowed; add it to ALLOWED_ORIGINS`,
        );
      }
      if (!own) {
        reply.header('access-control-allow-origin', origin);
        reply.header('vary', 'Origin');
        reply.header('access-control-expose-headers', 'Content-Range, Content-Length, Accept-Ranges, ETag');
      }
      if (req.method === 'OPTIONS') {
        return reply
          .status(204)
          .header('access-control-allow-methods', 'GET, HEAD, POST, PUT, PATCH, DELETE')
          .header(
            'access-control-allow-headers',
            'Authorization, Content-Type, Range, If-None-Match, If-Modified-Since, If-Range',
          )
          .header('access-control-max-age', '600')
          .send();
      }
    }

    if (config.apiToken) {
      const query = req.url.startsWith('/media/')
        ? (req.query as Record<string, unknown> | undefined)?.token
        : undefined;
      const given = bearer(req) ?? (typeof query === 'string' ? query : undefined);
      if (!tokenMatches(config.apiToken, given)) {
        return deny(
          reply.header('www-authenticate', 'Bearer'),
          401,
          'unauthorized',
          'A valid Authorization: Bearer <API_TOKEN> header is required',
        );
      }
    }
  });
}
