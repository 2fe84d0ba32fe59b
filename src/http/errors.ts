import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { Conflict, DomainError, InvalidInput, NotFound, type ErrorKind } from '../errors.js';
import { isErrorCode } from './error-codes.js';

/** The one map from a domain error's kind to the HTTP status it is answered with. */
const STATUS_OF_KIND: Record<ErrorKind, number> = {
  invalid_input: 400,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unsupported: 415,
  unprocessable: 422,
  rate_limited: 429,
  cancelled: 499,
  upstream: 502,
  unavailable: 503,
  timed_out: 504,
  internal: 500,
};

const KIND_OF_STATUS = new Map(Object.entries(STATUS_OF_KIND).map(([kind, status]) => [status, kind as ErrorKind]));

/**
 * A domain error with an explicit status, for the edge cases the kinds do not cover (401, 403, 429, ...). Feature
 * logic, tools and jobs throw the domain errors of `src/errors.ts`; the handler below renders both as the one body.
 */
export class ApiError extends DomainError {
  constructor(
    readonly status: number,
    code: string,
    message: string,
    details?: unknown,
  ) {
    super(KIND_OF_STATUS.get(status) ?? (status >= 500 ? 'internal' : 'invalid_input'), code, message, details);
  }
}

/** The status a domain error is answered with. */
export const statusOf = (err: DomainError): number => (err instanceof ApiError ? err.status : STATUS_OF_KIND[err.kind]);

export const badRequest = (message: string, details?: unknown) => new InvalidInput(message, details);
export const notFound = (message: string) => new NotFound(message);
export const conflict = (message: string, details?: unknown) => new Conflict(message, details);

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function describeValidation(error: FastifyError): { message: string; details: unknown } {
  const issues = (error.validation ?? []) as ValidationIssue[];
  const where = error.validationContext ?? 'body';
  const details = issues.map((v) => {
    const missing = v.params?.missingProperty as string | undefined;
    const extra = v.params?.additionalProperty as string | undefined;
    const field = [where, ...(v.instancePath ?? '').split('/').filter(Boolean), ...(missing ? [missing] : [])].join(
      '.',
    );
    const allowed = v.params?.allowedValues;
    const listed = Array.isArray(allowed) ? `: ${allowed.map(String).join(', ')}` : '';
    return { field, message: extra ? `unknown field "${extra}"` : `${v.message ?? 'is invalid'}${listed}` };
  });
  const first = details[0];
  return { message: first ? `${first.field} ${first.message}` : error.message, details };
}

type Detail = { field: string; message: string };
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const PARTS = ['body', 'querystring', 'params', 'headers'] as const;
const PART_OF = { body: 'body', querystring: 'query', params: 'params', headers: 'headers' } as const;

/**
 * A field as the request has it: `width` in a body is `body.width`, as schema errors name it. Feature code names
 * fields as it knows them; the part of the request holding the first segment is found here, once.
 */
function fieldPath(field: string, req: FastifyRequest): string {
  if (/^(body|querystring|params|headers)(\.|$)/.test(field)) return field;
  const top = field.split(/[.[]/)[0] ?? field;
  for (const part of PARTS) {
    const value: unknown = req[PART_OF[part]];
    if (isObject(value) && Object.hasOwn(value, top)) return `${part}.${field}`;
  }
  // a field the request left out (a required one) is the body's when the route's body declares it
  const declared = req.routeOptions.schema?.body;
  const properties = isObject(declared) ? declared.properties : undefined;
  return isObject(properties) && Object.hasOwn(properties, top) ? `body.${field}` : field;
}

/**
 * The one error model: `details` is always a list of `{field, message}` (or absent); whatever else a domain error
 * carried (`retry_after`, `reason`, `bot_ids`, a url) goes into `info`.
 */
function errorBody(err: DomainError, req: FastifyRequest) {
  const d = err.details;
  const items = Array.isArray(d) ? d : isObject(d) && typeof d.field === 'string' ? [d] : [];
  const details: Detail[] = items
    .filter((i): i is Record<string, unknown> & { field: string } => isObject(i) && typeof i.field === 'string')
    .map((i) => ({ field: fieldPath(i.field, req), message: typeof i.message === 'string' ? i.message : err.message }));
  const { field: _field, message: _message, ...info } = isObject(d) ? d : {};
  if (!isErrorCode(err.code)) req.log.error({ code: err.code }, 'an error code missing from src/http/error-codes.ts');
  return {
    error: {
      code: err.code,
      message: err.message,
      ...(details.length > 0 ? { details } : {}),
      ...(Object.keys(info).length > 0 ? { info } : {}),
    },
  };
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | DomainError | Error, req, reply) => {
    if (err instanceof DomainError) {
      const status = statusOf(err);
      if (status >= 500) req.log.error({ err }, err.message);
      return reply.status(status).send(errorBody(err, req));
    }
    const fe = err as FastifyError;
    if (fe.validation) {
      const { message, details } = describeValidation(fe);
      return reply.status(400).send({ error: { code: 'invalid_request', message, details } });
    }
    const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
    if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      // Decided from Content-Length (or the bytes so far) before the body is parsed.
      const limit = req.routeOptions.bodyLimit;
      return reply.status(413).send({
        error: {
          code: 'payload_too_large',
          message: `body is larger than ${limit} bytes, the limit of ${req.method} ${req.routeOptions.url}`,
          details: [{ field: 'body', message: `must be at most ${limit} bytes` }],
        },
      });
    }
    if (status >= 400 && status < 500) {
      const code =
        fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError
          ? 'malformed_json'
          : status === 413
            ? 'payload_too_large'
            : status === 415
              ? 'unsupported_media_type'
              : 'invalid_request';
      return reply.status(status).send({ error: { code, message: fe.message } });
    }
    req.log.error({ err }, 'unhandled error');
    return reply.status(500).send({ error: { code: 'internal', message: 'Internal server error' } });
  });
  app.setNotFoundHandler((req, reply) => {
    reply
      .status(404)
      .send({ error: { code: 'not_found', message: `No route for ${req.method} ${req.url.split('?')[0]}` } });
  });
}
