import type { FastifyReply } from 'fastify';

/**
 * A signal that aborts when the client goes away before its answer is written, so the ffmpeg run serving it is
 * killed. The response's 'close' is used rather than the request's: since Node 16 a request emits 'close' as soon
 * as its body has been read, while the response closes early only when the connection drops.
 */
export function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableEnded) controller.abort();
  });
  return controller.signal;
}
