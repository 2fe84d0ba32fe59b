import fs from 'node:fs';
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App, AppContext } from '../context.js';
import { ApiError } from '../http/errors.js';
import { answerFor, type FileAnswer } from './file-response.js';

/**
 * Files are served from an opaque origin: an HTML card or SVG opened from /media runs its scripts sandboxed, so it
 * cannot call this API as if it were the service's own page (its requests carry `Origin: null`, which the guard refuses).
 */
const MEDIA_CSP = 'sandbox allow-scripts allow-popups allow-forms';

/**
 * Bodies up to this size are read with one read into one buffer and sent with one write (headers included); larger
 * ones stream in reads of this size. fs streams read 64 KiB by default: a whole-file GET then made 16 reads, 16 socket
 * writes and 16 trips through the stream machinery per MiB, which held it at a tenth of nginx's rate.
 */
const CHUNK = 1024 * 1024;

/**
 * Ranges up to this size are read synchronously. Each asynchronous file call is a round trip through libuv's thread
 * pool, and on a busy machine the wake-ups of those round trips, not the copying, were most of a small range's cost
 * (64 KiB ranges: a third of the throughput). From the page cache such a read takes tens of microseconds; from a
 * cold disk it holds the event loop for one disk read, as nginx's own blocking reads hold its worker.
 */
const SYNC_READ = 256 * 1024;

function readAt(fd: number, start: number, length: number): Buffer | Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  const done = (n: number) => (n === length ? buf : buf.subarray(0, n));
  if (length <= SYNC_READ) return done(fs.readSync(fd, buf, 0, length, start));
  return new Promise((resolve, reject) =>
    fs.read(fd, buf, 0, length, start, (err, n) => (err ? reject(err) : resolve(done(n)))),
  );
}

/**
 * Answers a request with a file the caller opened inside the media root (`MediaRoot.openInside`, `openRegularFile`):
 * `answerFor` makes the HTTP decisions (single, open-ended and suffix byte ranges, 416, ETag and Last-Modified with
 * conditional requests, Content-Type); every served file gets the same safety headers, `headers` adds more (a
 * download's Content-Disposition). One read (synchronous up to SYNC_READ), or a stream for bodies above CHUNK, in
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
  reply.status(answer.status).headers({
    ...answer.headers,
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
    'content-security-policy': MEDIA_CSP,
    ...headers,
  });
  const { body } = answer;
  if (!body || body.length <= CHUNK) {
    try {
      // HEAD and 304 have no body; fastify keeps the Content-Length set above for HEAD.
      return reply.send(body ? await readAt(file.fd, body.start, body.length) : undefined);
    } finally {
      // Closing a file opened for reading does no I/O: synchronous, no thread-pool round trip.
      fs.closeSync(file.fd);
    }
  }
  // The stream owns the descriptor from here and closes it at the end, on error, or when the client goes away.
  return reply.send(
    fs.createReadStream('', {
      fd: file.fd,
      start: body.start,
      end: body.start + body.length - 1,
      highWaterMark: CHUNK,
    }),
  );
}

/**
 * GET and HEAD for `/media/...`: board files (`/media/<board_id>/<file>`, `/media/admin/<board_id>/<file>`) and
 * files at the media root. MediaRoot opens the file, refusing anything outside its base folder. Per request that is
 * one synchronous look-up and one read.
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
}
