import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How much of a refused body is read and thrown away after the answer, at most. */
export interface DiscardLimits {
  /** Bytes read after the answer; past them the connection is cut. */
  maxBytes: number;
  /** Milliseconds from the answer; past them the connection is cut, however slowly the client sends. */
  maxMs: number;
}

/**
 * 256 MiB is a quarter of a second of loopback at the rates measured here, and more than any body limit but uploads';
 * 10 s is a third of nginx's `lingering_time`: a local client that still sends after that is not reading anyway.
 */
export const DISCARD_LIMITS: DiscardLimits = { maxBytes: 256 * 1024 * 1024, maxMs: 10_000 };

/**
 * Lingering close for answers given before the request's body was read to its end (a 413 from Content-Length, a
 * refused upload, a 401/403 from the guard, a 404): the rest of the body is read and discarded, up to `limits`, and
 * only then is the connection closed (or kept, when the answer kept it alive).
 *
 * Why: node closes a `Connection: close` answer's socket as soon as the answer is written. Closing a socket whose
 * received bytes were never read makes the kernel send a reset, and a client still writing its body (node's
 * http.request, fetch, most upload libraries write the whole body before they read) gets EPIPE or ECONNRESET, and
 * loses the answer it had not read yet. nginx does the same (`lingering_close`).
 *
 * Infrastructure on node's server, below fastify, so that every answer is covered whoever wrote it. Uses node's
 * `socket.destroySoon`, which its server calls to close after a last answer (nothing public holds that close back).
 */
export function installLingeringClose(server: Server, limits: DiscardLimits = DISCARD_LIMITS): void {
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // A request without a body (every GET) is complete when it arrives.
    if (req.complete) return;
    // Before node's own 'finish' listener, which would close the socket or drop the body without a limit.
    res.prependOnceListener('finish', () => {
      if (!req.complete && !req.destroyed) discardRest(req, limits);
    });
  });
}

type Closable = Socket & { destroySoon?: () => void };

function discardRest(req: IncomingMessage, limits: DiscardLimits): void {
  const socket = req.socket as Closable;
  // A stream the body was piped into (the multipart parser) gets none of the rest.
  req.unpipe();
  let read = 0;
  let ended = false;
  let closeAsked = false;
  const close = socket.destroySoon?.bind(socket);
  const cut = () => socket.destroy();
  const timer = setTimeout(cut, limits.maxMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  req.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > limits.maxBytes) cut();
  });
  req.once('end', () => {
    ended = true;
    clearTimeout(timer);
    if (closeAsked) close?.();
  });
  req.resume();
  if (close) {
    // Node asks for the close when the answer was the connection's last: the answer's bytes and a FIN leave now, and
    // the socket is closed once the body has been read to its end (or cut at a limit).
    socket.destroySoon = () => {
      closeAsked = true;
      if (ended) close();
      else socket.end();
    };
  }
}
