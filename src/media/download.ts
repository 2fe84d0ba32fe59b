import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { DomainError, TimedOut, TooLarge, Unprocessable, Unsupported, UpstreamFailed } from '../errors.js';
import { BoardOutputs, type PendingOutput } from '../boards/outputs.js';
import { tempPathIn } from '../files/atomic.js';
import { extensionForMime, kindOfFile } from '../files/media-types.js';
import { sanitizeFilename, withExtension } from '../files/names.js';
import { badRequest } from '../http/errors.js';
import { timeLimit, type TimeLimit } from '../jobs/time-limit.js';
import { refuseForbiddenHost } from '../net/address-policy.js';
import type { OutboundHttp } from '../net/outbound.js';
import { startPolicyProxy } from '../net/proxy.js';
import { ytdlpDownload } from '../tools/ytdlp.js';
import { SNIFF_BYTES, SNIFFABLE, sniff, type Sniffed } from './sniff.js';
import type { AppContext } from '../context.js';

export const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

interface DownloadLimits {
  maxBytes: number;
  timeoutMs: number;
}

/** From DOWNLOAD_MAX_BYTES and DOWNLOAD_TIMEOUT_MS, validated with the rest of the configuration at start. */
function downloadLimits(ctx: AppContext): DownloadLimits {
  return { maxBytes: ctx.config.downloadMaxBytes, timeoutMs: ctx.config.downloadTimeoutMs };
}

interface DownloadedElement {
  id: string;
  type: string;
  url: string;
  name: string | null;
}

export function parseHttpUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw badRequest(`"${text}" is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw badRequest(`Only http and https URLs can be downloaded, not ${url.protocol}`);
  refuseForbiddenHost(url);
  return url;
}

export const tooLarge = (max: number) =>
  new TooLarge(`The file is larger than the download limit of ${max} bytes`, 'payload_too_large');

/**
 * Follows at most MAX_REDIRECTS redirects by hand, so each hop's scheme is checked, the count is ours and each hop's
 * connection passes the address policy.
 */
async function fetchFollowing(
  outbound: OutboundHttp,
  start: URL,
  signal: AbortSignal,
): Promise<{ res: Response; url: URL }> {
  let url = start;
  for (let hop = 0; ; hop++) {
    const res = await outbound.get(url, {
      signal,
      headers: { accept: '*/*', 'user-agent': 'board-media-service' },
    });
    if (!REDIRECTS.has(res.status)) {
      if (!res.ok) {
        await res.body?.cancel();
        throw new UpstreamFailed('upstream_error', `${url.host} answered ${res.status} ${res.statusText}`.trim(), {
          status: res.status,
        });
      }
      return { res, url };
    }
    await res.body?.cancel();
    const location = res.headers.get('location');
    if (!location) throw new UpstreamFailed('upstream_error', `${url.host} answered ${res.status} without a Location`);
    if (hop >= MAX_REDIRECTS)
      throw new UpstreamFailed('too_many_redirects', `More than ${MAX_REDIRECTS} redirects starting at ${start.href}`);
    const next = new URL(location, url);
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      throw new UpstreamFailed(
        'bad_redirect',
        `${url.host} redirected to a ${next.protocol} URL, only http and https are followed`,
      );
    }
    url = next;
  }
}

/** A name for the file: Content-Disposition, else the last path segment, with the extension of the detected type. */
function fileNameFor(res: Response, url: URL, ext: string): string {
  const cd = res.headers.get('content-disposition') ?? '';
  const star = /filename\*\s*=\s*[^']*'[^']*'([^;]+)/i.exec(cd);
  const plain = /filename\s*=\s*"?([^";]+)"?/i.exec(cd);
  let name: string;
  try {
    name = star
      ? decodeURIComponent(star[1].trim())
      : plain
        ? plain[1].trim()
        : decodeURIComponent(url.pathname.split('/').pop() ?? '');
  } catch {
    name = '';
  }
  return withExtension(sanitizeFilename(name || 'download', 'download'), ext);
}

/**
 * The type to store the body as: the sniffed bytes, else a media Content-Type for a format the sniffer does not know
 * (bmp, tiff, aac...). A body claiming a format we can recognise but whose bytes are not that format is not media.
 */
function mediaTypeOf(
  sniffed: Sniffed | 'html' | undefined,
  contentType: string,
  url: URL,
): Sniffed | 'html' | undefined {
  if (sniffed) return sniffed;
  const mime = contentType.split(';')[0].trim().toLowerCase();
  const major = mime.split('/')[0];
  if (major !== 'image' && major !== 'video' && major !== 'audio')
    return mime === 'text/html' || mime === 'application/xhtml+xml' ? 'html' : undefined;
  const ext = extensionForMime(mime) ?? path.extname(url.pathname).slice(1).toLowerCase();
  if (!ext || SNIFFABLE.has(ext) || kindOfFile(`x.${ext}`) !== major) return undefined;
  return { kind: major, ext, mime };
}

interface Fetched {
  temp: string;
  type: Sniffed | 'html' | undefined;
  res: Response;
  url: URL;
}

/** A body whose declared length is over the limit is refused before a byte of it is read. */
export async function refuseDeclaredTooLarge(res: Response, maxBytes: number): Promise<void> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel();
    throw tooLarge(maxBytes);
  }
}

/**
 * Streams a response body into a new file (never overwriting), counting bytes against `maxBytes` whatever the
 * headers said, and answers its first SNIFF_BYTES for typing from the bytes. The file is removed on failure.
 */
export async function streamToFile(
  res: Response,
  file: string,
  maxBytes: number,
  signal: AbortSignal,
  onProgress?: (f: number) => void,
): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  let head = Buffer.alloc(0);
  let received = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      received += chunk.length;
      if (received > maxBytes) return done(tooLarge(maxBytes));
      if (head.length < SNIFF_BYTES) head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
      if (Number.isFinite(declared) && declared > 0) onProgress?.(received / declared);
      done(null, chunk);
    },
  });
  try {
    const body = res.body ? Readable.fromWeb(res.body as WebReadableStream<Uint8Array>) : Readable.from([]);
    await pipeline(body, meter, fs.createWriteStream(file, { flags: 'wx' }), { signal });
  } catch (err) {
    await fsp.rm(file, { force: true });
    throw err;
  }
  return head;
}

/** Streams the body into a temp file in `dir`, counting bytes against the limit and keeping the head for sniffing. */
async function fetchToTemp(
  outbound: OutboundHttp,
  start: URL,
  dir: string,
  limits: DownloadLimits,
  signal: AbortSignal,
  onProgress?: (f: number) => void,
): Promise<Fetched> {
  const { res, url } = await fetchFollowing(outbound, start, signal);
  const contentType = res.headers.get('content-type') ?? '';
  await refuseDeclaredTooLarge(res, limits.maxBytes);
  // A page announced as HTML is not fetched whole: it is a page, not media.
  const mime = contentType.split(';')[0].trim().toLowerCase();
  if (mime === 'text/html' || mime === 'application/xhtml+xml') {
    await res.body?.cancel();
    return { temp: '', type: 'html', res, url };
  }
  const temp = tempPathIn(dir, 'download');
  const head = await streamToFile(res, temp, limits.maxBytes, signal, onProgress);
  return { temp, type: mediaTypeOf(sniff(head), contentType, url), res, url };
}

/** Maps fetch's failures to the service's errors: our time limit or a client/job abort as it stopped, the rest 502. */
function transferError(err: unknown, limit: TimeLimit, url: URL): unknown {
  const stopped = limit.stopped();
  if (stopped) return stopped;
  if (err instanceof DomainError) return err;
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
  return new UpstreamFailed('unreachable', `Could not fetch ${url.href}: ${why}`);
}

/**
 * Downloads a URL onto a board. A direct media file is streamed to a temp file in the board folder (size and time
 * limited, type from its bytes and headers). A web page goes to yt-dlp when it is installed (social-media posts give
 * one element per image/video); without yt-dlp a page is a 415.
 */
export async function downloadToBoard(
  ctx: AppContext,
  req: { board_id: string; url: string },
  opts: { signal?: AbortSignal; onProgress?: (fraction: number) => void } = {},
): Promise<{ elements: DownloadedElement[] }> {
  const start = parseHttpUrl(req.url);
  ctx.boards.requireBoard(req.board_id);
  const dir = await ctx.media.boardDir(req.board_id);
  const limits = downloadLimits(ctx);
  const limit = timeLimit(
    opts.signal,
    limits.timeoutMs,
    () => new TimedOut(`Downloading ${start.href} took longer than ${limits.timeoutMs} ms`),
    'The download was cancelled',
  );
  let fetched: Fetched;
  try {
    fetched = await fetchToTemp(ctx.outbound, start, dir, limits, limit.signal, opts.onProgress);
  } catch (err) {
    throw transferError(err, limit, start);
  }
  if (fetched.type === 'html') {
    if (fetched.temp) await fsp.rm(fetched.temp, { force: true });
    return { elements: await extractWithYtdlp(ctx, req.board_id, fetched.url, limits, limit) };
  }
  if (!fetched.type) {
    await fsp.rm(fetched.temp, { force: true });
    const declared = fetched.res.headers.get('content-type') || 'no Content-Type';
    throw new Unsupported(
      'not_media',
      `${fetched.url.href} is not an image, video or audio file (${declared}, unrecognised content)`,
    );
  }
  const name = fileNameFor(fetched.res, fetched.url, fetched.type.ext);
  const out = await outputsOf(ctx).adopt(req.board_id, fetched.temp, name);
  return { elements: [await addElement(ctx, out, fetched.type.kind, req.url)] };
}

const outputsOf = (ctx: AppContext) => new BoardOutputs(ctx.media, ctx.boards);

/** A downloaded file, pending in the board folder, committed under a unique name as an element naming its source. */
async function addElement(
  ctx: AppContext,
  out: PendingOutput,
  kind: Sniffed['kind'],
  source: string,
): Promise<DownloadedElement> {
  const { element: el } = await outputsOf(ctx).commit(out, { type: kind, data: { source_url: source } });
  return { id: el.id, type: el.type, url: el.url!, name: el.name };
}

async function extractWithYtdlp(
  ctx: AppContext,
  boardId: string,
  page: URL,
  limits: DownloadLimits,
  limit: TimeLimit,
): Promise<DownloadedElement[]> {
  const ytdlp = await ctx.tools.info('ytdlp');
  if (!ytdlp.found) {
    throw new Unsupported(
      'not_media',
      `${page.href} is a web page, not a media file; install yt-dlp to extract media from pages`,
      { hint: ytdlp.hint },
    );
  }
  const tmpRoot = path.join(ctx.config.dataDir, 'tmp');
  await fsp.mkdir(tmpRoot, { recursive: true });
  const outDir = await fsp.mkdtemp(path.join(tmpRoot, 'ytdlp-'));
  try {
    // yt-dlp connects by itself (the page again, the media it names, their redirects): through the policy's proxy.
    const proxy = await startPolicyProxy(ctx.outbound);
    let files: string[];
    try {
      files = await ytdlpDownload(ctx.tools, page.href, outDir, {
        signal: limit.signal,
        maxBytes: limits.maxBytes,
        proxy: proxy.url,
      });
    } catch (err) {
      throw limit.stopped() ?? proxy.refused() ?? transferError(err, limit, page);
    } finally {
      await proxy.close();
    }
    // A page that leads to a forbidden address is refused whole, whatever else it gave.
    const refused = proxy.refused();
    if (refused) throw refused;
    const elements: DownloadedElement[] = [];
    for (const file of files) {
      const handle = await fsp.open(file, 'r');
      const head = Buffer.alloc(SNIFF_BYTES);
      const { bytesRead } = await handle.read(head, 0, SNIFF_BYTES, 0).finally(() => handle.close());
      const type = sniff(head.subarray(0, bytesRead));
      if (!type || type === 'html') continue; // yt-dlp's side files (descriptions, info json)
      const name = withExtension(sanitizeFilename(path.basename(file).replace(/^\d{3}-/, ''), 'download'), type.ext);
      elements.push(await addElement(ctx, await outputsOf(ctx).adopt(boardId, file, name), type.kind, page.href));
    }
    if (elements.length === 0)
      throw new Unprocessable('no_media', `yt-dlp found no image, video or audio at ${page.href}`);
    return elements;
  } finally {
    await fsp.rm(outDir, { recursive: true, force: true });
  }
}
