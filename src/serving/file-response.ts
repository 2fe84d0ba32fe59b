import type fs from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
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

/** Same form as @fastify/send's, which served these files before, so that clients' cached validators stay valid. */
const etagOf = (stat: fs.Stats) => `W/"${stat.size.toString(16)}-${stat.mtime.getTime().toString(16)}"`;

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
  const etag = etagOf(stat);
  const lastModified = stat.mtime.toUTCString();
  const validators = { etag, 'last-modified': lastModified };
  if (preconditionFails(h, etag, stat.mtimeMs)) return { status: 412, headers: {} };
  if ((h['if-none-match'] || h['if-modified-since']) && fresh(h, validators))
    return { status: 304, headers: validators };

  let type = mime.getType(file) ?? 'application/octet-stream';
  if (isUtf8MimeType(type)) type += '; charset=utf-8';
  const headers: Record<string, string | number> = { 'accept-ranges': 'bytes', ...validators, 'content-type': type };
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
