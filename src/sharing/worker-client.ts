import fs from 'node:fs';
import { Readable } from 'node:stream';
import { UpstreamFailed } from '../errors.js';

/** How the service reaches the user's share worker (SHARE_WORKER_URL, SHARE_WORKER_TOKEN, SHARE_UPLOAD_PART_BYTES). */
interface WorkerSettings {
  url: string;
  token: string;
  /** Bodies larger than this go up as an R2 multipart upload in parts of this size (>= 5 MiB, below the 100 MB request limit). */
  partBytes: number;
}

/** The bytes of one upload: a slice of a file on disk, or a buffer. */
export type UploadBody = { file: string; size: number } | { data: Buffer };

const RETRIES = 3;

const sizeOf = (body: UploadBody) => ('data' in body ? body.data.length : body.size);

/** HTTP client of worker/src/index.js; every call carries the bearer token and is retried on network errors and 5xx. */
export class WorkerClient {
  private readonly base: string;

  constructor(private readonly settings: WorkerSettings) {
    this.base = settings.url.replace(/\/+$/, '');
  }

  /** The public URL of a share's page. */
  pageUrl(shareId: string): string {
    return `${this.base}/s/${shareId}/`;
  }

  private async request(
    method: string,
    path: string,
    signal: AbortSignal | undefined,
    init: { body?: () => BodyInit; headers?: Record<string, string> } = {},
  ): Promise<unknown> {
    let lastError: unknown;
    for (let attempt = 0; attempt < RETRIES; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 250 * 2 ** attempt));
      signal?.throwIfAborted();
      let res: Response;
      try {
        res = await fetch(`${this.base}${path}`, {
          method,
          signal,
          headers: { authorization: `Bearer ${this.settings.token}`, ...init.headers },
          body: init.body?.(),
          // Streamed request bodies need half duplex in Node's fetch.
          ...(init.body ? { duplex: 'half' } : {}),
        } as RequestInit);
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        lastError = new UpstreamFailed(
          'share_worker_unreachable',
          `The share worker at ${this.base} could not be reached: ${(err as Error).message}`,
        );
        continue;
      }
      const text = await res.text();
      if (res.ok) return text ? JSON.parse(text) : {};
      const message = `The share worker answered ${res.status} to ${method} ${path.split('?')[0]}: ${text.slice(0, 300)}`;
      if (res.status === 401)
        throw new UpstreamFailed('share_worker_unauthorized', 'The share worker refused SHARE_WORKER_TOKEN');
      lastError = new UpstreamFailed('share_worker_error', message);
      if (res.status < 500) break;
    }
    throw lastError;
  }

  /** Stores one object; large bodies go through R2 multipart upload. Answers the bytes sent. */
  async put(
    shareId: string,
    path: string,
    body: UploadBody,
    contentType: string,
    sha256: string | undefined,
    signal?: AbortSignal,
  ): Promise<number> {
    const size = sizeOf(body);
    const objectPath = `/api/objects/${shareId}/${path}`;
    if (size <= this.settings.partBytes) {
      await this.request('PUT', objectPath, signal, {
        headers: {
          'content-type': contentType,
          'content-length': String(size),
          ...(sha256 ? { 'x-content-sha256': sha256 } : {}),
        },
        body: () => bodyStream(body, 0, size),
      });
      return size;
    }
    const multipath = `/api/multipart/${shareId}/${path}`;
    const { uploadId } = (await this.request('POST', multipath, signal, {
      headers: { 'content-type': contentType },
    })) as { uploadId: string };
    const q = `?uploadId=${encodeURIComponent(uploadId)}`;
    try {
      const parts: { part: number; etag: string }[] = [];
      for (let offset = 0, n = 1; offset < size; offset += this.settings.partBytes, n++) {
        const length = Math.min(this.settings.partBytes, size - offset);
        parts.push(
          (await this.request('PUT', `${multipath}${q}&part=${n}`, signal, {
            headers: { 'content-length': String(length) },
            body: () => bodyStream(body, offset, length),
          })) as { part: number; etag: string },
        );
      }
      await this.request('POST', `${multipath}${q}`, signal, {
        headers: { 'content-type': 'application/json' },
        body: () => JSON.stringify({ parts }),
      });
    } catch (err) {
      await this.request('DELETE', `${multipath}${q}`, undefined).catch(() => undefined);
      throw err;
    }
    return size;
  }

  async deleteObject(shareId: string, path: string, signal?: AbortSignal): Promise<void> {
    await this.request('DELETE', `/api/objects/${shareId}/${path}`, signal);
  }

  /** Removes every object of a share; answers how many there were. */
  async deleteShare(shareId: string, signal?: AbortSignal): Promise<number> {
    const res = (await this.request('DELETE', `/api/shares/${shareId}`, signal)) as { deleted: number };
    return res.deleted;
  }
}

function bodyStream(body: UploadBody, offset: number, length: number): BodyInit {
  if ('data' in body) return new Uint8Array(body.data.subarray(offset, offset + length));
  if (length === 0) return new Uint8Array(0);
  return Readable.toWeb(
    fs.createReadStream(body.file, { start: offset, end: offset + length - 1 }),
  ) as unknown as BodyInit;
}
