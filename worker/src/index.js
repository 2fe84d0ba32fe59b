// Board share worker: serves shared boards from an R2 bucket and takes uploads from the Board Media Service.
// Plain JavaScript (ES modules) so that wrangler deploys it as is and miniflare runs the same file locally.
//
// Public:   GET/HEAD /s/<share_id>/[path]     objects with byte ranges, ETags and conditional requests
// Uploads:  Authorization: Bearer <SHARE_TOKEN> (a secret of the worker's owner, compared in constant time)
//   PUT    /api/objects/<share_id>/<path>                  one object (x-content-sha256 is checked by R2)
//   DELETE /api/objects/<share_id>/<path>                  one object
//   POST   /api/multipart/<share_id>/<path>                start a multipart upload -> {uploadId}
//   PUT    /api/multipart/<share_id>/<path>?uploadId&part  one part (>= 5 MiB except the last) -> {part, etag}
//   POST   /api/multipart/<share_id>/<path>?uploadId       body {parts: [{part, etag}]} completes it
//   DELETE /api/multipart/<share_id>/<path>?uploadId       aborts it
//   GET    /api/shares/<share_id>                          {objects: [{path, size, etag}]}
//   DELETE /api/shares/<share_id>                          removes every object of the share -> {deleted}

const SHARE_ID = /^[A-Za-z0-9_-]{1,64}$/;
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
const MAX_SEGMENTS = 8;

const json = (status, body) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
  });
const error = (status, code, message) => json(status, { error: { code, message } });

/** Splits `<share_id>/<a>/<b>` into a checked share id and object path (no dot segments, no odd characters). */
function parseKey(rest) {
  const parts = rest.split('/');
  const shareId = parts.shift();
  if (!shareId || !SHARE_ID.test(shareId)) return undefined;
  if (parts.length > MAX_SEGMENTS) return undefined;
  for (const p of parts) if (!SEGMENT.test(p) || p.includes('..')) return undefined;
  return { shareId, path: parts.join('/') };
}

async function sha256(text) {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
}

/** Bearer token check. Both sides are hashed first so the comparison takes the same time whatever their lengths. */
async function authorized(request, env) {
  if (typeof env.SHARE_TOKEN !== 'string' || env.SHARE_TOKEN.length < 16) return false;
  const header = request.headers.get('authorization') ?? '';
  const given = header.startsWith('Bearer ') ? header.slice(7) : '';
  const [a, b] = await Promise.all([sha256(given), sha256(env.SHARE_TOKEN)]);
  return crypto.subtle.timingSafeEqual(a, b);
}

/** The first range of a `bytes=` header against `size`: {offset, length}, 'unsatisfiable', or undefined (ignore). */
function parseRange(header, size) {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    const length = Math.min(suffix, size);
    return { offset: size - length, length };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { offset: start, length: end - start + 1 };
}

const etagList = (header) => header.split(',').map((t) => t.trim().replace(/^W\//, ''));
const dateOf = (header) => {
  const t = Date.parse(header ?? '');
  return Number.isNaN(t) ? undefined : t;
};

/** Serves one object with RFC 9110 conditional requests and single byte ranges. */
async function serve(request, env, key) {
  const head = await env.SHARES.head(key);
  if (!head) return error(404, 'not_found', 'No such shared file');
  const headers = new Headers();
  head.writeHttpMetadata(headers);
  // The uploader sets each object's type; anything else is served as bytes.
  if (!headers.has('content-type')) headers.set('content-type', 'application/octet-stream');
  headers.set('etag', head.httpEtag);
  headers.set('last-modified', head.uploaded.toUTCString());
  headers.set('accept-ranges', 'bytes');
  headers.set('cache-control', 'public, max-age=0, must-revalidate');
  headers.set('x-robots-tag', 'noindex, nofollow');
  headers.set('x-content-type-options', 'nosniff');
  // Card documents are the board owner's HTML: even opened directly they run without this origin.
  if (key.includes('/cards/')) headers.set('content-security-policy', 'sandbox allow-scripts');

  // Seconds precision, as in the Last-Modified header.
  const modified = Math.floor(head.uploaded.getTime() / 1000) * 1000;
  const ifMatch = request.headers.get('if-match');
  if (ifMatch && ifMatch.trim() !== '*' && !etagList(ifMatch).includes(head.httpEtag))
    return new Response(null, { status: 412, headers });
  const ifUnmodified = dateOf(request.headers.get('if-unmodified-since'));
  if (!ifMatch && ifUnmodified !== undefined && modified > ifUnmodified)
    return new Response(null, { status: 412, headers });
  const ifNoneMatch = request.headers.get('if-none-match');
  if (ifNoneMatch) {
    if (ifNoneMatch.trim() === '*' || etagList(ifNoneMatch).includes(head.httpEtag))
      return new Response(null, { status: 304, headers });
  } else {
    const ifModified = dateOf(request.headers.get('if-modified-since'));
    if (ifModified !== undefined && modified <= ifModified) return new Response(null, { status: 304, headers });
  }

  let range;
  const rangeHeader = request.headers.get('range');
  if (rangeHeader) {
    const ifRange = request.headers.get('if-range');
    const rangeApplies =
      !ifRange || (ifRange.startsWith('"') ? ifRange.trim() === head.httpEtag : dateOf(ifRange) === modified);
    if (rangeApplies) range = parseRange(rangeHeader, head.size);
  }
  if (range === 'unsatisfiable') {
    headers.set('content-range', `bytes */${head.size}`);
    return new Response(null, { status: 416, headers });
  }
  if (request.method === 'HEAD') {
    headers.set('content-length', String(head.size));
    return new Response(null, { status: 200, headers });
  }
  // etagMatches: the bytes sent belong to the object whose headers were computed above.
  const body = await env.SHARES.get(key, { range, onlyIf: { etagMatches: head.etag } });
  if (!body || !('body' in body)) return error(503, 'changed', 'The file changed while it was read; try again');
  if (range) {
    headers.set('content-range', `bytes ${range.offset}-${range.offset + range.length - 1}/${head.size}`);
    headers.set('content-length', String(range.length));
    return new Response(body.body, { status: 206, headers });
  }
  headers.set('content-length', String(head.size));
  return new Response(body.body, { status: 200, headers });
}

async function listShare(env, shareId) {
  const objects = [];
  let cursor;
  do {
    const page = await env.SHARES.list({ prefix: `${shareId}/`, cursor, limit: 1000 });
    for (const o of page.objects)
      objects.push({ path: o.key.slice(shareId.length + 1), size: o.size, etag: o.httpEtag });
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return objects;
}

async function api(request, env, route, rest, url) {
  if (!(await authorized(request, env))) return error(401, 'unauthorized', 'A valid bearer token is required');
  const method = request.method;
  if (route === 'shares') {
    if (!SHARE_ID.test(rest)) return error(400, 'bad_key', 'Bad share id');
    const objects = await listShare(env, rest);
    if (method === 'GET') return json(200, { objects });
    if (method === 'DELETE') {
      for (let i = 0; i < objects.length; i += 1000)
        await env.SHARES.delete(objects.slice(i, i + 1000).map((o) => `${rest}/${o.path}`));
      return json(200, { deleted: objects.length });
    }
    return error(405, 'method_not_allowed', `${method} is not allowed here`);
  }
  const parsed = parseKey(rest);
  if (!parsed || parsed.path === '') return error(400, 'bad_key', 'Bad object path');
  const key = `${parsed.shareId}/${parsed.path}`;
  const httpMetadata = { contentType: request.headers.get('content-type') || 'application/octet-stream' };
  if (route === 'objects') {
    if (method === 'PUT') {
      const sha = request.headers.get('x-content-sha256') ?? undefined;
      if (sha !== undefined && !/^[0-9a-f]{64}$/.test(sha))
        return error(400, 'bad_checksum', 'x-content-sha256 must be 64 hex digits');
      try {
        const obj = await env.SHARES.put(key, request.body ?? new Uint8Array(0), { httpMetadata, sha256: sha });
        return json(200, { path: parsed.path, size: obj.size, etag: obj.httpEtag });
      } catch (err) {
        return error(400, 'upload_failed', String(err?.message ?? err));
      }
    }
    if (method === 'DELETE') {
      await env.SHARES.delete(key);
      return json(200, { deleted: 1 });
    }
    return error(405, 'method_not_allowed', `${method} is not allowed here`);
  }
  if (route === 'multipart') {
    const uploadId = url.searchParams.get('uploadId');
    if (method === 'POST' && !uploadId) {
      const upload = await env.SHARES.createMultipartUpload(key, { httpMetadata });
      return json(200, { uploadId: upload.uploadId });
    }
    if (!uploadId) return error(400, 'bad_request', 'uploadId is required');
    const upload = env.SHARES.resumeMultipartUpload(key, uploadId);
    try {
      if (method === 'PUT') {
        const part = Number(url.searchParams.get('part'));
        if (!Number.isInteger(part) || part < 1 || part > 10000)
          return error(400, 'bad_request', 'part must be 1..10000');
        if (!request.body) return error(400, 'bad_request', 'A part needs a body');
        const uploaded = await upload.uploadPart(part, request.body);
        return json(200, { part: uploaded.partNumber, etag: uploaded.etag });
      }
      if (method === 'POST') {
        const { parts } = await request.json();
        const obj = await upload.complete(parts.map((p) => ({ partNumber: p.part, etag: p.etag })));
        return json(200, { path: parsed.path, size: obj.size, etag: obj.httpEtag });
      }
      if (method === 'DELETE') {
        await upload.abort();
        return json(200, { aborted: true });
      }
    } catch (err) {
      return error(400, 'multipart_failed', String(err?.message ?? err));
    }
    return error(405, 'method_not_allowed', `${method} is not allowed here`);
  }
  return error(404, 'not_found', 'No such route');
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    let pathname;
    try {
      pathname = decodeURIComponent(url.pathname);
    } catch {
      return error(400, 'bad_path', 'Malformed percent-encoding');
    }
    const apiMatch = /^\/api\/(objects|multipart|shares)\/(.+)$/.exec(pathname);
    if (apiMatch) return api(request, env, apiMatch[1], apiMatch[2], url);
    const shareMatch = /^\/s\/([^/]+)(\/.*)?$/.exec(pathname);
    if (shareMatch && (request.method === 'GET' || request.method === 'HEAD')) {
      const [, shareId, tail] = shareMatch;
      // Relative links of the page need the trailing slash.
      if (tail === undefined) return Response.redirect(`${url.origin}/s/${shareId}/`, 301);
      const rest = tail === '/' ? 'index.html' : tail.slice(1);
      const parsed = parseKey(`${shareId}/${rest}`);
      if (!parsed) return error(404, 'not_found', 'No such shared file');
      return serve(request, env, `${parsed.shareId}/${parsed.path}`);
    }
    return error(404, 'not_found', 'No such route');
  },
};
