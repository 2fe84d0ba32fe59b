import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import querystring from 'node:querystring';
import type { App, AppContext } from '../context.js';
import { createGuard } from '../http/guard.js';
import { answerFor, CHUNK, fileHeaderList, pumpBody, readAt, reuseAfter, type FileAnswer } from './file-response.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Successful GET/HEAD answers of `/media/...` (200, 206, 304), written to node's response before the request reaches
 * fastify. Fastify's per-request work (its request and reply objects, routing, hooks, querystring validation, the
 * reply's header handling, two log lines) cost more than the file work for a 64 KiB range.
 *
 * The fast path answers only when the very checks of the fastify route pass: the guard's own decision (createGuard,
 * the same function the onRequest hook runs), MediaRoot.openInside (containment, symlinks, dotfiles, regular files)
 * and answerFor. Anything else (a refusal, 400/404, 412, 416, a `token` the route's schema would refuse, shutdown)
 * is handed to fastify untouched, so every error status, body, header and log line comes from the one code path.
 *
 * Request logging: when fastify logs requests (LOG_LEVEL info or more verbose), a fast answer is logged as one
 * `request completed` line with the same `req` serializer (the token redacted), `res.statusCode` and `responseTime`,
 * instead of fastify's two lines.
 */
export function installMediaFastPath(app: App, ctx: AppContext): void {
  const server = app.server;
  const [fastify, ...others] = server.listeners('request') as Listener[];
  // Fastify registers its one handler when it creates the server; anything else would make this wrapping unsafe.
  if (!fastify || others.length) throw new Error('expected fastify to be the only request listener');
  const guard = createGuard(ctx.config);
  const logs = ['info', 'debug', 'trace'].includes(app.log.level);
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });

  const fallBack: Listener = (req, res) => fastify.call(server, req, res);

  /** Answers and returns true, or returns false having written nothing (fastify then answers). */
  const answer = (req: IncomingMessage, res: ServerResponse): boolean => {
    const started = logs ? process.hrtime.bigint() : 0n;
    const { method, url } = req;
    if ((method !== 'GET' && method !== 'HEAD') || !url?.startsWith('/media/') || closing) return false;
    const q = url.indexOf('?');
    let token: unknown;
    if (q >= 0) {
      token = querystring.parse(url.slice(q + 1)).token;
      if (token !== undefined && typeof token !== 'string') return false;
    }
    const verdict = guard({ method, url, headers: req.headers, mediaToken: () => token });
    if (verdict.deny) return false;

    let file: ReturnType<typeof ctx.media.openInside>;
    try {
      file = ctx.media.openInside(q >= 0 ? url.slice(0, q) : url);
    } catch {
      return false;
    }
    let decided: FileAnswer | undefined;
    try {
      decided = answerFor(method, req.headers, file.path, file.stat);
    } catch {
      decided = undefined;
    }
    if (!decided || decided.status === 412 || decided.status === 416) {
      fs.closeSync(file.fd);
      return false;
    }
    // Logged once the answer is written (not for a read that fails and is handed to the route, which logs it).
    const logWhenDone = () => {
      if (!logs) return;
      res.once('finish', () =>
        app.log.info(
          {
            req: { method, url, ip: req.socket.remoteAddress },
            res: { statusCode: res.statusCode },
            responseTime: Number(process.hrtime.bigint() - started) / 1e6,
          },
          'request completed',
        ),
      );
    };
    const headers = fileHeaderList(decided, verdict.cors);
    const { body } = decided;
    if (body && body.length > CHUNK) {
      logWhenDone();
      res.writeHead(decided.status, headers);
      // The pump owns the descriptor and closes it at the end, on error, or when the client goes away.
      pumpBody(file.fd, body, res);
      return true;
    }
    const status = decided.status;
    let bytes: Buffer | Promise<Buffer> | undefined;
    try {
      bytes = body ? readAt(file.fd, body.start, body.length) : undefined;
    } catch {
      fs.closeSync(file.fd);
      return false;
    }
    if (!(bytes instanceof Promise)) {
      fs.closeSync(file.fd);
      logWhenDone();
      // Headers and body leave in one write (node's response corks the socket in end()).
      res.writeHead(status, headers);
      res.end(bytes);
      if (bytes) reuseAfter(res, bytes);
      return true;
    }
    bytes.then(
      (buf) => {
        fs.closeSync(file.fd);
        logWhenDone();
        res.writeHead(status, headers);
        res.end(buf);
      },
      () => {
        // A read that fails (an I/O error) is answered by the route, which meets it again and answers 500.
        fs.closeSync(file.fd);
        fallBack(req, res);
      },
    );
    return true;
  };

  server.removeListener('request', fastify);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!answer(req, res)) fallBack(req, res);
  });
}
