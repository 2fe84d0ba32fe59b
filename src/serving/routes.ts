import path from 'node:path';
import send from '@fastify/send';
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App, AppContext } from '../context.js';
import { ApiError } from '../http/errors.js';

/**
 * Files are served from an opaque origin: an HTML card or SVG opened from /media runs its scripts sandboxed, so it
 * cannot call this API as if it were the service's own page (its requests carry `Origin: null`, which the guard refuses).
 */
const MEDIA_CSP = 'sandbox allow-scripts allow-popups allow-forms';

/**
 * Streams one resolved file with @fastify/send (ranges, conditional requests, Content-Type) and the headers every
 * served file gets; `headers` adds more (a download's Content-Disposition).
 */
export async function sendFile(req: FastifyRequest, reply: FastifyReply, file: string, headers: Record<string, string> = {}) {
  const result = await send(req.raw, `/${encodeURIComponent(path.basename(file))}`, {
    root: path.dirname(file),
    dotfiles: 'allow',
    acceptRanges: true,
    etag: true,
    lastModified: true,
    cacheControl: false,
  });
  if (result.type === 'error') {
    const err = result.metadata.error as Error & { status?: number };
    if (result.statusCode === 416) reply.header('content-range', result.headers['Content-Range']);
    throw new ApiError(err.status ?? 404, result.statusCode === 416 ? 'range_not_satisfiable' : 'not_found', err.message);
  }
  reply.status(result.statusCode);
  for (const [k, v] of Object.entries(result.headers)) reply.header(k, v);
  reply.header('cache-control', 'no-cache');
  reply.header('x-content-type-options', 'nosniff');
  reply.header('content-security-policy', MEDIA_CSP);
  for (const [k, v] of Object.entries(headers)) reply.header(k, v);
  return reply.send(result.stream);
}

/**
 * GET and HEAD for `/media/...`: board files (`/media/<board_id>/<file>`, `/media/admin/<board_id>/<file>`) and
 * files at the media root. @fastify/send does the HTTP work: single, open-ended and suffix byte ranges (206 with
 * Content-Range, 416 when unsatisfiable), ETag and Last-Modified with conditional requests, Content-Type, constant
 * memory streaming. The path is resolved by MediaRoot first, which refuses anything outside the file's base folder.
 */
export function registerServing(app: App, ctx: AppContext): void {
  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const rawPath = req.url.split('?')[0];
    const file = await ctx.media.resolveUrl(rawPath);
    return sendFile(req, reply, file.path);
  };
  const schema = {
    tags: ['media'],
    summary: 'A media file, with byte ranges and conditional requests',
    description: '`/media/<board_id>/<file>` or `/media/admin/<board_id>/<file>` for board files, `/media/<name>` for files at the media root. With API_TOKEN set, `?token=` is accepted.',
    querystring: Type.Object({ token: Type.Optional(Type.String()) }),
  };
  // Fastify adds the HEAD route for this GET; @fastify/send then answers headers only.
  app.get('/media/*', { schema }, handler);
}
