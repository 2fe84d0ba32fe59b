import type { FastifyInstance } from 'fastify';
import { ApiError } from './errors.js';

/** Deeper documents are refused: no client sends them, and serialising them would overflow the stack. */
export const MAX_JSON_DEPTH = 64;

/** Depth of nested arrays/objects, walked without recursion. */
export function jsonDepth(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) max = depth;
    if (max > MAX_JSON_DEPTH) return max;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return max;
}

/**
 * Fastify's own JSON parser (prototype-poisoning protection included), plus a nesting limit, so that an absurdly
 * deep body is a 400 rather than a stack overflow later.
 */
export function installJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    parse(req, body as string, (err, value) => {
      if (err) return done(err, undefined);
      if (jsonDepth(value) > MAX_JSON_DEPTH) {
        return done(new ApiError(400, 'too_deep', `JSON nesting deeper than ${MAX_JSON_DEPTH} levels is not accepted`), undefined);
      }
      done(null, value);
    });
  });
}
