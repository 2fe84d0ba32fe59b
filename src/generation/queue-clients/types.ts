import { ProviderHttpError, retryAfterSeconds } from '../errors.js';
import type { CatalogueEntry } from '../catalogue.js';
import type { InputImage } from '../fetch-file.js';
import type { ProviderSettings } from '../providers.js';

/** What a queued generation asks of the provider. */
interface QueueRequest {
  prompt: string;
  negativePrompt?: string;
  aspectRatio: string;
  inputImage?: InputImage;
  /** Model-specific inputs from the request, merged over ours. */
  params: Record<string, unknown>;
}

/** The provider's job as one poll sees it. */
export interface QueueState {
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled';
  /** 0..1 when the provider tells. */
  progress?: number;
  outputUrl?: string;
  /** Why it failed, in the provider's words. */
  error?: string;
  /** The provider refused the content (a safety filter), with its reason. */
  refused?: string;
  seed?: number;
}

/**
 * A provider whose jobs are started, then polled on our schedule: the service keeps `providerJobId` and can poll
 * it again after a restart. Each call is one HTTP request; retries and backoff belong to the poll job.
 */
export interface QueueClient {
  start(s: ProviderSettings, entry: CatalogueEntry, req: QueueRequest, signal: AbortSignal): Promise<string>;
  poll(s: ProviderSettings, entry: CatalogueEntry, providerJobId: string, signal: AbortSignal): Promise<QueueState>;
  cancel(s: ProviderSettings, entry: CatalogueEntry, providerJobId: string, signal: AbortSignal): Promise<void>;
  /** Credentials the result's download needs, sent only to that origin. */
  downloadAuth?(s: ProviderSettings): { origin: string; headers: Record<string, string> };
}

/** One JSON call to a provider; a non-2xx answer becomes ProviderHttpError with its message and retry-after. */
export async function callJson<T>(
  s: Pick<ProviderSettings, 'fetch'>,
  url: string,
  init: { method: string; headers: Record<string, string>; body?: unknown },
  signal: AbortSignal,
): Promise<T> {
  const res = await s.fetch(url, {
    method: init.method,
    headers: {
      accept: 'application/json',
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...init.headers,
    },
    body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
    signal,
  });
  const text = await res.text();
  if (!res.ok)
    throw new ProviderHttpError(
      res.status,
      messageOf(text) ?? `${res.status} ${res.statusText}`.trim(),
      retryAfterSeconds(res.headers),
    );
  try {
    return (text ? JSON.parse(text) : {}) as T;
  } catch {
    throw new ProviderHttpError(502, `not JSON: ${text.slice(0, 200)}`);
  }
}

function messageOf(text: string): string | undefined {
  try {
    const j = JSON.parse(text) as {
      detail?: unknown;
      error?: { message?: string } | string;
      message?: string;
      title?: string;
    };
    const m = j.detail ?? (typeof j.error === 'string' ? j.error : j.error?.message) ?? j.message ?? j.title;
    return typeof m === 'string' ? m.slice(0, 500) : m !== undefined ? JSON.stringify(m).slice(0, 500) : undefined;
  } catch {
    return text ? text.slice(0, 200) : undefined;
  }
}

export const dataUri = (img: InputImage) => `data:${img.mediaType};base64,${img.data.toString('base64')}`;
