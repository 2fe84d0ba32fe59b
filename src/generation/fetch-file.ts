import fsp from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../context.js';
import { DomainError, TimedOut, UpstreamFailed } from '../errors.js';
import { tempPathIn } from '../files/atomic.js';
import { badRequest } from '../http/errors.js';
import { timeLimit } from '../jobs/time-limit.js';
import { parseHttpUrl, refuseDeclaredTooLarge, streamToFile, tooLarge } from '../media/download.js';
import { SNIFF_BYTES, sniff, type Sniffed } from '../media/sniff.js';
import type { OutboundHttp } from '../net/outbound.js';

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

interface FetchLimits {
  maxBytes: number;
  timeoutMs: number;
}

interface FetchedFile {
  temp: string;
  type: Sniffed;
}

/**
 * Streams a URL into a temp file in `dir` under the download limits, typed from its bytes. Unlike POST /api/download
 * (src/media/download.ts) it can carry a provider's credentials, and only to the provider's own origin: a redirect
 * to a storage host (Veo's files, signed URLs) is followed without them. Pages and unknown bytes are refused.
 * Every hop goes through `outbound`, so the address policy holds for it (400 `forbidden_address`).
 * The temp file is removed on any failure; the caller commits or removes it.
 */
export async function fetchToTemp(
  outbound: OutboundHttp,
  url: string,
  dir: string,
  limits: FetchLimits,
  opts: { signal?: AbortSignal; auth?: { origin: string; headers: Record<string, string> } } = {},
): Promise<FetchedFile> {
  const start = new URL(url);
  const limit = timeLimit(
    opts.signal,
    limits.timeoutMs,
    () =>
      new TimedOut(
        `Fetching ${start.host}${start.pathname} took longer than ${limits.timeoutMs} ms`,
        'download_timeout',
      ),
  );
  const signal = limit.signal;
  const temp = tempPathIn(dir, 'result');
  try {
    let current = start;
    let res: Response;
    for (let hop = 0; ; hop++) {
      const headers: Record<string, string> = { accept: '*/*', 'user-agent': 'board-media-service' };
      if (opts.auth && current.origin === opts.auth.origin) Object.assign(headers, opts.auth.headers);
      res = await outbound.get(current, { signal, headers });
      if (!REDIRECTS.has(res.status)) break;
      await res.body?.cancel();
      const location = res.headers.get('location');
      if (!location || hop >= MAX_REDIRECTS)
        throw new UpstreamFailed('download_failed', `${current.host} redirected too often or without a Location`);
      current = new URL(location, current);
      if (current.protocol !== 'http:' && current.protocol !== 'https:')
        throw new UpstreamFailed('download_failed', `Redirect to a ${current.protocol} URL`);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new UpstreamFailed('download_failed', `${current.host} answered ${res.status} for ${current.pathname}`, {
        status: res.status,
      });
    }
    await refuseDeclaredTooLarge(res, limits.maxBytes);
    const head = await streamToFile(res, temp, limits.maxBytes, signal);
    const type = sniff(head);
    if (!type || type === 'html')
      throw new UpstreamFailed(
        'download_failed',
        `${current.host} sent something that is not an image, video or audio file`,
      );
    return { temp, type };
  } catch (err) {
    await fsp.rm(temp, { force: true });
    const stopped = limit.stopped();
    if (stopped) throw stopped;
    if (err instanceof DomainError) throw err;
    const cause = (err as { cause?: { code?: string } }).cause;
    throw new TimedOut(
      `Could not fetch from ${start.host}: ${cause?.code ?? (err as Error).message}`,
      'download_unreachable',
    );
  }
}

export interface InputImage {
  data: Buffer;
  mediaType: string;
}

/**
 * An input or reference image: a `/media` URL is read from disk (through the media root, so it stays inside it),
 * an http(s) URL is fetched with the download limits (DOWNLOAD_MAX_BYTES, DOWNLOAD_TIMEOUT_MS). Must be an image.
 */
export async function readInputImage(
  ctx: AppContext,
  url: string,
  field: string,
  signal?: AbortSignal,
): Promise<InputImage> {
  const limits = { maxBytes: ctx.config.downloadMaxBytes, timeoutMs: ctx.config.downloadTimeoutMs };
  let file: string;
  let fetched: string | undefined;
  if (/^https?:\/\//i.test(url)) {
    parseHttpUrl(url); // a malformed URL or a forbidden address is a 400 before any work
    const tmp = path.join(ctx.config.dataDir, 'tmp');
    await fsp.mkdir(tmp, { recursive: true });
    fetched = (await fetchToTemp(ctx.outbound, url, tmp, limits, { signal })).temp;
    file = fetched;
  } else if (url.startsWith('/media/')) {
    file = (await ctx.media.resolveField(url, field)).path;
  } else {
    throw badRequest(`${field} must be a /media URL of a board file or an http(s) URL`, [
      { field, message: 'must be a /media or http(s) URL' },
    ]);
  }
  try {
    const size = (await fsp.stat(file)).size;
    if (size > limits.maxBytes) throw tooLarge(limits.maxBytes);
    const data = await fsp.readFile(file);
    const type = sniff(data.subarray(0, SNIFF_BYTES));
    if (!type || type === 'html' || type.kind !== 'image')
      throw badRequest(`${field} is not an image`, [{ field, message: 'is not an image' }]);
    return { data, mediaType: type.mime };
  } finally {
    if (fetched) await fsp.rm(fetched, { force: true });
  }
}
