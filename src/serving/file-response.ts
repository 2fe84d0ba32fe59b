import fs from 'node:fs';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { isUtf8MimeType, mime } from '@fastify/send';
import fresh from 'fresh';
import parseRange from 'range-parser';

/** What to answer for a file: status, headers, and the bytes to send (none for HEAD and 304). */
export interface FileAnswer {
  /** 412: a precondition failed; 416: the range is outside the file (`content-range` says its size). */
  status: 200 | 206 | 304 | 412 | 416;
  headers: Record<string, string | number>;
  body?: { start: number; length: number };
}

interface Described {
  ino: number;
  size: number;
  mtimeMs: number;
  etag: string;
  lastModified: string;
  type: string;
}

/** The last files described, by path: a range request per video frame asks the same file again and again. */
const described = new Map<string, Described>();
const DESCRIBED_MAX = 1024;

/**
 * Validators and Content-Type of a file, kept while its inode, size and mtime are those of `stat`. The ETag has the
 * same form as @fastify/send's, which served these files before, so that clients' cached validators stay valid.
 */
function describe(file: string, stat: fs.Stats): Described {
  const known = described.get(file);
  if (known && known.ino === stat.ino && known.size === stat.size && known.mtimeMs === stat.mtimeMs) return known;
  let type = mime.getType(file) ?? 'application/octet-stream';
  if (isUtf8MimeType(type)) type += '; charset=utf-8';
  const d = {
    ino: stat.ino,
    size: stat.size,
    mtimeMs: stat.mtimeMs,
    etag: `W/"${stat.size.toString(16)}-${stat.mtime.getTime().toString(16)}"`,
    lastModified: stat.mtime.toUTCString(),
    type,
  };
  if (described.size >= DESCRIBED_MAX) described.clear();
  described.set(file, d);
  return d;
}

function tokens(list: string): string[] {
  return list
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

/** If-Match and If-Unmodified-Since (RFC 9110 13.1.1, 13.1.4): true when the request must fail with 412. */
function preconditionFails(h: IncomingHttpHeaders, etag: string, mtimeMs: number): boolean {
  const ifMatch = h['if-match'];
  if (ifMatch && ifMatch.trim() !== '*') return !tokens(ifMatch).some((t) => t === etag || `W/${t}` === etag);
  const since = h['if-unmodified-since'] ? Date.parse(h['if-unmodified-since']) : NaN;
  return !Number.isNaN(since) && Math.floor(mtimeMs / 1000) * 1000 > since;
}

/** If-Range (RFC 9110 13.1.5): a range is honoured only while the validator it names still matches. */
function rangeStillValid(h: IncomingHttpHeaders, etag: string, lastModified: string): boolean {
  const ifRange = h['if-range'] === undefined ? undefined : String(h['if-range']);
  if (ifRange === undefined) return true;
  if (ifRange.includes('"')) return ifRange.includes(etag);
  const at = Date.parse(ifRange);
  return !Number.isNaN(at) && Date.parse(lastModified) <= at;
}

/**
 * The HTTP decisions for serving one file: validators (weak ETag, Last-Modified), conditional requests (304, 412),
 * a single byte range (206; 416 when unsatisfiable; other units, malformed and multi-range headers get the whole
 * file), Content-Type from the extension.
 */
export function answerFor(method: string, h: IncomingHttpHeaders, file: string, stat: fs.Stats): FileAnswer {
  const { etag, lastModified, type } = describe(file, stat);
  if ((h['if-match'] || h['if-unmodified-since']) && preconditionFails(h, etag, stat.mtimeMs))
    return { status: 412, headers: {} };
  if ((h['if-none-match'] || h['if-modified-since']) && fresh(h, { etag, 'last-modified': lastModified }))
    return { status: 304, headers: { etag, 'last-modified': lastModified } };

  const headers: Record<string, string | number> = {
    'accept-ranges': 'bytes',
    etag,
    'last-modified': lastModified,
    'content-type': type,
  };
  let status: 200 | 206 = 200;
  let start = 0;
  let length = stat.size;
  const range = h.range;
  if (range !== undefined && /^ *bytes=/.test(range) && rangeStillValid(h, etag, lastModified)) {
    const ranges = parseRange(stat.size, range, { combine: true });
    if (ranges === -1) return { status: 416, headers: { 'content-range': `bytes */${stat.size}` } };
    if (ranges !== -2 && ranges.length === 1) {
      status = 206;
      start = ranges[0].start;
      length = ranges[0].end - start + 1;
      headers['content-range'] = `bytes ${start}-${ranges[0].end}/${stat.size}`;
    }
  }
  headers['content-length'] = length;
  return { status, headers, ...(method === 'HEAD' ? {} : { body: { start, length } }) };
}

/**
 * Files are served from an opaque origin: an HTML card or SVG opened from /media runs its scripts sandboxed, so it
 * cannot call this API as if it were the service's own page (its requests carry `Origin: null`, which the guard refuses).
 */
const MEDIA_CSP = 'sandbox allow-scripts allow-popups allow-forms';

const SAFETY_HEADERS = [
  'cache-control',
  'no-cache',
  'x-content-type-options',
  'nosniff',
  'content-security-policy',
  MEDIA_CSP,
];

/**
 * The headers of a served file as node's flat [name, value, ...] list: `before` (the guard's CORS headers), the
 * answer's, the safety headers every served file gets, then `extra`.
 */
export function fileHeaderList(
  answer: FileAnswer,
  before: Record<string, string> = {},
  extra: Record<string, string> = {},
): (string | number)[] {
  const list: (string | number)[] = [];
  for (const k in before) list.push(k, before[k]);
  for (const k in answer.headers) list.push(k, answer.headers[k]);
  list.push(...SAFETY_HEADERS);
  for (const k in extra) list.push(k, extra[k]);
  return list;
}

/** fileHeaderList as an object, for fastify's reply (later names win, as in the list). */
export function fileHeaders(answer: FileAnswer, extra: Record<string, string> = {}): Record<string, string | number> {
  const list = fileHeaderList(answer, {}, extra);
  const headers: Record<string, string | number> = {};
  for (let i = 0; i < list.length; i += 2) headers[list[i]] = list[i + 1];
  return headers;
}

/**
 * Bodies up to this size are read with one read into one buffer and sent with one write (headers included); larger
 * ones stream in reads of this size. fs streams read 64 KiB by default: a whole-file GET then made 16 reads, 16 socket
 * writes and 16 trips through the stream machinery per MiB, which held it at a tenth of nginx's rate.
 */
export const CHUNK = 1024 * 1024;

/**
 * Ranges up to this size are read synchronously. Each asynchronous file call is a round trip through libuv's thread
 * pool, and on a busy machine the wake-ups of those round trips, not the copying, were most of a small range's cost
 * (64 KiB ranges: a third of the throughput). From the page cache such a read takes tens of microseconds; from a
 * cold disk it holds the event loop for one disk read, as nginx's own blocking reads hold its worker.
 */
const SYNC_READ = 256 * 1024;

/**
 * Buffers of sync reads, used again once their answer has been handed to the kernel. A fresh 64 KiB buffer per range
 * cost a bare node server about 40 µs of page faults and garbage collection, a quarter of its whole answer.
 */
const spare: Buffer[] = [];
const SPARE_MAX = 32; // 8 MiB at most
const pooled = new WeakSet<ArrayBufferLike>();

function syncReadBuffer(): Buffer {
  const reused = spare.pop();
  if (reused) return reused;
  const buf = Buffer.allocUnsafeSlow(SYNC_READ);
  pooled.add(buf.buffer);
  return buf;
}

/**
 * Gives back a buffer `readAt` returned, once nothing reads it any more: after its response's `finish` (node emits it
 * when the last bytes were handed to the operating system). A response that never finishes (the client went away)
 * keeps its buffer, which the garbage collector then takes.
 */
export function reuseAfter(res: ServerResponse, buf: Buffer): void {
  if (!pooled.has(buf.buffer)) return;
  res.once('finish', () => {
    if (spare.length < SPARE_MAX) spare.push(Buffer.from(buf.buffer, 0, SYNC_READ));
  });
}

/** Reads `length` bytes at `start` (synchronously up to SYNC_READ); a shorter buffer when the file shrank. */
export function readAt(fd: number, start: number, length: number): Buffer | Promise<Buffer> {
  if (length <= SYNC_READ) {
    const buf = syncReadBuffer();
    return buf.subarray(0, fs.readSync(fd, buf, 0, length, start));
  }
  const buf = Buffer.allocUnsafe(length);
  const done = (n: number) => (n === length ? buf : buf.subarray(0, n));
  return new Promise((resolve, reject) =>
    fs.read(fd, buf, 0, length, start, (err, n) => (err ? reject(err) : resolve(done(n)))),
  );
}

/**
 * Writes a body above CHUNK to `res` in CHUNK reads into two buffers used in turn: one is read into while the other
 * is being written, and a buffer is read into again once its last write was handed to the kernel (so at most two
 * chunks are in flight). An fs stream allocates a fresh buffer per read, and the page faults of that fresh memory cost
 * a bare node server a quarter of its CPU per MiB (0.82 → 0.61 ms/MiB, 1.48 → 1.92 GB/s with 4 connections). It owns
 * `fd` and closes it at the end, on an error (which cuts the connection: the headers promised the whole length) or
 * when the client goes away.
 */
export function pumpBody(fd: number, body: { start: number; length: number }, res: ServerResponse): void {
  const size = Math.min(CHUNK, body.length);
  const buffers = [Buffer.allocUnsafeSlow(size), Buffer.allocUnsafeSlow(size)];
  const written: Promise<unknown>[] = [Promise.resolve(), Promise.resolve()];
  // Write callbacks of a connection that died may never come: its close ends every wait.
  let gone = false;
  const closed = new Promise<void>((resolve) =>
    res.once('close', () => {
      gone = true;
      resolve();
    }),
  );
  const read = (buf: Buffer, length: number, position: number) =>
    new Promise<number>((resolve, reject) =>
      fs.read(fd, buf, 0, length, position, (err, n) => (err ? reject(err) : resolve(n))),
    );
  void (async () => {
    const end = body.start + body.length;
    try {
      for (let at = body.start, k = 0; at < end && !gone; k++) {
        const buf = buffers[k & 1];
        await Promise.race([written[k & 1], closed]);
        if (gone) break;
        const n = await read(buf, Math.min(size, end - at), at);
        if (n === 0) throw new Error('the file shrank while it was served');
        at += n;
        written[k & 1] = new Promise((resolve) => res.write(buf.subarray(0, n), resolve));
      }
      if (!gone) res.end();
    } catch {
      res.destroy();
    } finally {
      fs.close(fd, () => undefined);
    }
  })();
}

/** A stream of a body above CHUNK, in CHUNK reads; it owns `fd` and closes it at the end, on error or on destroy. */
export const bodyStream = (fd: number, body: { start: number; length: number }) =>
  fs.createReadStream('', { fd, start: body.start, end: body.start + body.length - 1, highWaterMark: CHUNK });
