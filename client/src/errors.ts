import type { ErrorBody, ErrorCode, ErrorDetail, Job } from './types.js';

/** Codes of the client's own failures, beside the service's (`ErrorCode`, docs/errors.md). */
export type ClientErrorCode =
  /** A job the client waited for failed without a code of its own. */
  | 'job_failed'
  /** The upload could not reach the service. */
  | 'network_error'
  /** The event stream was closed. */
  | 'closed'
  /** A streamed answer (a chat turn) ended before its end. */
  | 'stream_ended'
  /** An answer that is not the service's error body (a proxy's page): `http_<status>`. */
  | `http_${number}`;

/** A failure the service reported (its `{error: {code, message, details?}}` body), or one of the client's own. */
export class BoardMediaError extends Error {
  constructor(
    /** The HTTP status, or 0 for failures without one (a stream cut short, a failed job). */
    readonly status: number,
    readonly code: ErrorCode | ClientErrorCode,
    message: string,
    /** Each field of the request that was wrong, `{field: 'body.width', message}`; empty when none is to blame. */
    readonly details: readonly ErrorDetail[] = [],
    /** The job, when a job failed or was cancelled (`waitForJob`). */
    readonly job?: Job,
  ) {
    super(message);
    this.name = 'BoardMediaError';
  }

  /** From a non-2xx answer: its error body when it has one, else its status line. */
  static async fromResponse(res: Response): Promise<BoardMediaError> {
    const text = await res.text().catch(() => '');
    return BoardMediaError.fromBody(res.status, text, res.statusText);
  }

  static fromBody(status: number, text: string, statusText = ''): BoardMediaError {
    try {
      const { error } = JSON.parse(text) as ErrorBody;
      if (error && typeof error.code === 'string')
        return new BoardMediaError(status, error.code, error.message, error.details ?? []);
    } catch {
      // not the service's error body (a proxy's page): the status says what is known
    }
    return new BoardMediaError(status, `http_${status}`, `${status} ${statusText}`.trim());
  }
}
