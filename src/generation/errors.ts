import { DomainError, RateLimited, TimedOut, Unprocessable, UpstreamFailed } from '../errors.js';
import { loadedAiSdk } from './ai-sdk.js';
import type { ProviderId } from './providers.js';

/** A provider call failed; thrown by our queue clients, mapped to the service's errors below. */
export class ProviderHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ProviderHttpError';
  }
}

/** The provider declined the content (safety filters); surfaces as 422 with its reason. */
class ContentRefusedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'ContentRefusedError';
  }
}

/** Words providers use when a safety system refuses a prompt or an output. */
const REFUSAL =
  /content[_ ]policy|moderation|safety (system|filter)|nsfw|flagged|blocked|responsible ai|raiMediaFiltered|sensitive/i;

/** `retry-after` (seconds or an HTTP date) or `retry-after-ms`, in whole seconds. */
export function retryAfterSeconds(
  headers: Record<string, string | undefined> | Headers | undefined,
): number | undefined {
  if (!headers) return undefined;
  const get = (name: string) => (headers instanceof Headers ? headers.get(name) : headers[name]) ?? undefined;
  const ms = Number(get('retry-after-ms'));
  const raw = get('retry-after');
  let seconds: number | undefined;
  if (raw !== undefined) {
    const n = Number(raw);
    seconds = Number.isFinite(n) ? n : (Date.parse(raw) - Date.now()) / 1000;
  }
  if ((seconds === undefined || !Number.isFinite(seconds)) && Number.isFinite(ms)) seconds = ms / 1000;
  return seconds !== undefined && Number.isFinite(seconds) ? Math.max(0, Math.ceil(seconds)) : undefined;
}

/** The provider's own words from an error body (`{error: {message}}`, `{detail}`, `{error: "..."}`), short. */
function providerMessage(body: string | undefined, fallback: string): string {
  if (!body) return fallback;
  try {
    const j = JSON.parse(body) as { error?: { message?: string } | string; detail?: string; message?: string };
    const m = typeof j.error === 'string' ? j.error : (j.error?.message ?? j.detail ?? j.message);
    if (typeof m === 'string' && m) return m.slice(0, 500);
  } catch {
    // not JSON: the status line says enough
  }
  return fallback;
}

/** Google answers a bad key with 400 INVALID_ARGUMENT rather than 401. */
const BAD_KEY = /api key not valid|API_KEY_INVALID|invalid api key|incorrect api key/i;

function fromStatus(
  provider: ProviderId,
  status: number,
  message: string,
  retryAfter: number | undefined,
): DomainError {
  if (status === 401 || status === 403 || (status === 400 && BAD_KEY.test(message))) {
    return new UpstreamFailed(
      'provider_auth_failed',
      `The ${provider} provider refused the credentials (${status}): ${message}`,
      { provider, status },
    );
  }
  if (status === 429) {
    const wait = retryAfter ?? 60;
    return new RateLimited(`The ${provider} provider is rate limiting requests; retry after ${wait} s`, {
      provider,
      retry_after: wait,
    });
  }
  if (status === 408 || status === 504)
    return new TimedOut(`The ${provider} provider timed out (${status})`, 'provider_timeout', { provider, status });
  if (status >= 400 && status < 500 && REFUSAL.test(message))
    return new Unprocessable('content_refused', `The ${provider} provider refused the content: ${message}`, {
      provider,
      reason: message,
    });
  if (status >= 400 && status < 500)
    return new Unprocessable(
      'provider_rejected',
      `The ${provider} provider rejected the request (${status}): ${message}`,
      { provider, status },
    );
  return new UpstreamFailed('provider_error', `The ${provider} provider failed (${status}): ${message}`, {
    provider,
    status,
  });
}

/**
 * Maps whatever a provider call threw to the service's error: 502 auth, 429 with retry_after, 422 refusal,
 * 504 network or timeout, 502 for the provider's own failures. Never a 500. `timedOut` is our time limit's signal.
 * Messages are built here from status and the provider's words: no request (and so no key) is ever echoed.
 */
export function mapProviderError(err: unknown, provider: ProviderId, timedOut?: AbortSignal): DomainError {
  if (err instanceof DomainError) return err;
  if (timedOut?.aborted)
    return new TimedOut(`The ${provider} provider did not answer within the time limit`, 'provider_timeout', {
      provider,
    });
  if (err instanceof ContentRefusedError)
    return new Unprocessable('content_refused', `The ${provider} provider refused the content: ${err.reason}`, {
      provider,
      reason: err.reason,
    });
  if (err instanceof ProviderHttpError) return fromStatus(provider, err.status, err.message, err.retryAfterSeconds);
  const ai = loadedAiSdk();
  const last = ai?.RetryError.isInstance(err) ? err.lastError : err;
  if (ai?.APICallError.isInstance(last)) {
    if (last.statusCode === undefined) return unreachable(provider, last.cause ?? last);
    const message = providerMessage(last.responseBody, last.message);
    return fromStatus(provider, last.statusCode, message, retryAfterSeconds(last.responseHeaders));
  }
  const name = (last as { name?: string } | undefined)?.name;
  if (name === 'AbortError' || name === 'TimeoutError')
    return new TimedOut(`The ${provider} provider did not answer in time`, 'provider_timeout', { provider });
  if (last instanceof TypeError || (last as { cause?: { code?: string } })?.cause?.code)
    return unreachable(provider, last);
  if (last instanceof Error && REFUSAL.test(last.message))
    return new Unprocessable('content_refused', `The ${provider} provider refused the content: ${last.message}`, {
      provider,
      reason: last.message,
    });
  const message = last instanceof Error ? last.message : String(last);
  return new UpstreamFailed(
    'provider_error',
    `The ${provider} provider gave an unusable answer: ${message.slice(0, 500)}`,
    { provider },
  );
}

function unreachable(provider: ProviderId, cause: unknown): TimedOut {
  const c = cause as { cause?: { code?: string }; code?: string; message?: string };
  const why = c?.cause?.code ?? c?.code ?? c?.message ?? 'network error';
  return new TimedOut(`The ${provider} provider could not be reached: ${why}`, 'provider_unreachable', { provider });
}
