/**
 * Domain errors: what tools, the job runner and feature logic throw. They know nothing of HTTP; the one map from
 * kind to status lives in `src/http/errors.ts`. `code` is the stable machine-readable code clients see
 * (`ffmpeg_failed`, `timeout`, ...), `kind` says what sort of failure it is and so how the edge answers it.
 */
export const ERROR_KINDS = [
  'invalid_input',
  'not_found',
  'conflict',
  'too_large',
  'unsupported',
  'unprocessable',
  'rate_limited',
  'cancelled',
  'upstream',
  'unavailable',
  'timed_out',
  'internal',
] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The request itself is wrong (a value out of range, a combination that cannot work). */
export class InvalidInput extends DomainError {
  constructor(message: string, details?: unknown, code = 'invalid_request') {
    super('invalid_input', code, message, details);
  }
}
export class NotFound extends DomainError {
  constructor(message: string, code = 'not_found', details?: unknown) {
    super('not_found', code, message, details);
  }
}
export class Conflict extends DomainError {
  constructor(message: string, details?: unknown, code = 'conflict') {
    super('conflict', code, message, details);
  }
}
/** The input is well-formed but the work cannot be done on it (a file ffprobe cannot read, a render that fails). */
export class Unprocessable extends DomainError {
  constructor(code: string, message: string, details?: unknown) {
    super('unprocessable', code, message, details);
  }
}
/** The input is larger than a limit allows (an upload, a download, an archive entry). */
export class TooLarge extends DomainError {
  constructor(message: string, code = 'payload_too_large', details?: unknown) {
    super('too_large', code, message, details);
  }
}
/** The input is of a type the work does not handle (a web page where a media file was expected). */
export class Unsupported extends DomainError {
  constructor(code: string, message: string, details?: unknown) {
    super('unsupported', code, message, details);
  }
}
/** A remote service we called (a provider, a download's server, the share worker) failed or answered unusably. */
export class UpstreamFailed extends DomainError {
  constructor(code: string, message: string, details?: unknown) {
    super('upstream', code, message, details);
  }
}
/** A remote service asks us to slow down; `details.retry_after` says when to try again. */
export class RateLimited extends DomainError {
  constructor(message: string, details?: unknown, code = 'rate_limited') {
    super('rate_limited', code, message, details);
  }
}
/** Something the work needs is not set up here (a remote service not configured, an encoder a build lacks). */
export class Unavailable extends DomainError {
  constructor(code: string, message: string, details?: unknown) {
    super('unavailable', code, message, details);
  }
}
/** A failure of the service itself, not of the request (state that should exist is gone, output that came out wrong). */
export class Internal extends DomainError {
  constructor(code: string, message: string, details?: unknown) {
    super('internal', code, message, details);
  }
}
/** An external program is not installed. */
export class ToolMissing extends DomainError {
  constructor(tool: string, message: string) {
    super('unavailable', 'tool_missing', message, { tool });
  }
}
/** An external program ran and failed on this input (`code` like `ffmpeg_failed`). */
export class ToolFailed extends DomainError {
  constructor(code: string, message: string, details?: unknown) {
    super('unprocessable', code, message, details);
  }
}
/** An external program is installed but could not be started or driven. */
export class ToolUnavailable extends DomainError {
  constructor(message: string, details?: unknown) {
    super('unavailable', 'tool_failed', message, details);
  }
}
export class TimedOut extends DomainError {
  constructor(message: string, code = 'timeout', details?: unknown) {
    super('timed_out', code, message, details);
  }
}
/** The work was stopped on purpose: a user cancelled the job, or the client went away (`code` says which). */
export class Cancelled extends DomainError {
  constructor(message = 'Cancelled', code = 'cancelled') {
    super('cancelled', code, message);
  }
}
/** The service is stopping; resumable jobs stopped this way run again at the next start. */
export class ShuttingDown extends DomainError {
  constructor(message = 'The service is shutting down', code = 'shutting_down') {
    super('unavailable', code, message);
  }
}
