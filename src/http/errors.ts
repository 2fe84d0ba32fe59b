import type { FastifyError, FastifyInstance } from 'fastify';

/** The one error type features throw; the handler below renders it as the one error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const badRequest = (message: string, details?: unknown) => new ApiError(400, 'bad_request', message, details);
export const notFound = (message: string) => new ApiError(404, 'not_found', message);
export const conflict = (message: string, details?: unknown) => new ApiError(409, 'conflict', message, details);

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
    const field = [where, ...(v.instancePath ?? '').split('/').filter(Boolean), ...(missing ? [missing] : [])].join('.');
    const allowed = v.params?.allowedValues;
    const listed = Array.isArray(allowed) ? `: ${allowed.map(String).join(', ')}` : '';
    return { field, message: extra ? `unknown field "${extra}"` : `${v.message ?? 'is invalid'}${listed}` };
  });
  const first = details[0];
  return { message: first ? `${first.field} ${first.message}` : error.message, details };
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | ApiError | Error, req, reply) => {
    if (err instanceof ApiError) {
      if (err.status >= 500) req.log.error({ err }, err.message);
      return reply.status(err.status).send({ error: { code: err.code, message: err.message, details: err.details } });
    }
    const fe = err as FastifyError;
    if (fe.validation) {
      const { message, details } = describeValidation(fe);
      return reply.status(400).send({ error: { code: 'invalid_request', message, details } });
    }
    const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
    if (status >= 400 && status < 500) {
      const code =
        fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError
          ? 'malformed_json'
          : status === 413
            ? 'payload_too_large'
            : status === 415
              ? 'unsupported_media_type'
              : 'bad_request';
      return reply.status(status).send({ error: { code, message: fe.message } });
    }
    req.log.error({ err }, 'unhandled error');
    return reply.status(500).send({ error: { code: 'internal', message: 'Internal server error' } });
  });
  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send({ error: { code: 'not_found', message: `No route for ${req.method} ${req.url.split('?')[0]}` } });
  });
}
