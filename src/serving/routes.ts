import fs from 'node:fs';
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App, AppContext } from '../context.js';
import { ApiError } from '../http/errors.js';
import { answerFor, bodyStream, CHUNK, fileHeaders, readAt, reuseAfter, type FileAnswer } from './file-response.js';
import { installMediaFastPath } from './fast-path.js';

/**
 * Answers a request with a file the caller opened inside the media root (`MediaRoot.openInside`, `openRegularFile`):
 * `answerFor` makes the HTTP decisions (single, open-ended and suffix byte ranges, 416, ETag and Last-Modified with
 * conditional requests, Content-Type); every served file gets the same safety headers, `headers` adds more (a
 * download's Content-Disposition). One read (synchronous up to 256 KiB), or a stream for bodies above CHUNK, in
 * constant memory. Takes ownership of `file.fd`.
 */
export async function serveOpenFile(
  req: FastifyRequest,
  reply: FastifyReply,
  file: { fd: number; stat: fs.Stats; path: string },
  headers: Record<string, string> = {},
) {
  let answer: FileAnswer;
  try {
    answer = answerFor(req.method, req.headers, file.path, file.stat);
    if (answer.status === 412)
      throw new ApiError(
        412,
        'precondition_failed',
        'A precondition of the request (If-Match, If-Unmodified-Since) does not hold',
      );
    if (answer.status === 416) {
      reply.headers(answer.headers);
      throw new ApiError(416, 'range_not_satisfiable', `The range is outside the file (${file.stat.size} bytes)`);
    }
  } catch (err) {
    fs.closeSync(file.fd);
    throw err;
  }
  reply.status(answer.status).headers(fileHeaders(answer, headers));
  const { body } = answer;
  if (!body || body.length <= CHUNK) {
    try {
      // HEAD and 304 have no body; fastify keeps the Content-Length set above for HEAD.
      const bytes = body ? await readAt(file.fd, body.start, body.length) : undefined;
      if (bytes) reuseAfter(reply.raw, bytes);
      return reply.send(bytes);
    } finally {
      // Closing a file opened for reading does no I/O: synchronous, no thread-pool round trip.
      fs.closeSync(file.fd);
    }
  }
  // The stream owns the descriptor from here and closes it at the end, on error, or when the client goes away.
  return reply.send(bodyStream(file.fd, body));
}

/**
 * GET and HEAD for `/media/...`: board files (`/media/<board_id>/<file>`, `/media/admin/<board_id>/<file>`) and
 * files at the media root. MediaRoot opens the file, refusing anything outside its base folder. Per request that is
 * one synchronous look-up and one read. Successful answers are written by the fast path (fast-path.ts) before the
 * request reaches fastify; this route answers everything else (errors, 412/416, requests during shutdown).
 */
export function registerServing(app: App, ctx: AppContext): void {
  const handler = async (req: FastifyRequest, reply: FastifyReply) =>
    serveOpenFile(req, reply, ctx.media.openInside(req.url.split('?')[0]));
  const schema = {
    tags: ['media'],
    summary: 'A media file, with byte ranges and conditional requests',
    description:
      '`/media/<board_id>/<file>` or `/media/admin/<board_id>/<file>` for board files, `/media/<name>` for files at the media root. With API_TOKEN set, `?token=` is accepted.',
    querystring: Type.Object({ token: Type.Optional(Type.String()) }),
  };
  // HEAD is declared rather than left to fastify's automatic HEAD route, which would replace the Content-Length of a
  // body never read with 0.
  app.route({ method: ['GET', 'HEAD'], url: '/media/*', schema, handler });
  installMediaFastPath(app, ctx);
}
