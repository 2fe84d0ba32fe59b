import type { ErrorBody } from './types.js';

/** A failure the service reported (its `{error: {code, message, details?}}` body), or one of the client's own. */
export class BoardMediaError extends Error {
  constructor(
    /** The HTTP status, or 0 for failures without one (a stream cut short, a failed job). */
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
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
        return new BoardMediaError(status, error.code, error.message, error.details);
    } catch {
      // not the service's error body (a proxy's page): the status says what is known
    }
    return new BoardMediaError(status, `http_${status}`, `${status} ${statusText}`.trim());
  }
}
