import { Cancelled, DomainError, type TimedOut } from '../errors.js';

export interface TimeLimit {
  /** Aborts when the outer signal does (client gone, job cancelled) or when the time is up: pass it to the work. */
  signal: AbortSignal;
  /**
   * What stopped the work, when one of the signals did: the outer signal's reason (a domain error, else Cancelled
   * with `cancelledMessage`), or the limit's TimedOut. Undefined when neither fired: the failure is the work's own.
   */
  stopped(): DomainError | undefined;
}

/**
 * The one "time limit and abort": a limit of `ms` over an optional outer signal, and the domain error that says which
 * of the two stopped the work (the edge answers TimedOut with 504 and Cancelled with 499).
 */
export function timeLimit(
  outer: AbortSignal | undefined,
  ms: number,
  timedOut: () => TimedOut,
  cancelledMessage = 'Cancelled',
): TimeLimit {
  const timeout = AbortSignal.timeout(ms);
  return {
    signal: outer ? AbortSignal.any([outer, timeout]) : timeout,
    stopped() {
      if (outer?.aborted)
        return outer.reason instanceof DomainError ? outer.reason : new Cancelled(cancelledMessage, 'aborted');
      if (timeout.aborted) return timedOut();
      return undefined;
    },
  };
}
