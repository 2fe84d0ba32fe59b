import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { RUN_TS, startService, type TestService } from '../helpers/service.js';
import { findRedisServer, REDIS_MISSING, startRedis } from '../helpers/redis.js';
import type { EagerAnswer, EagerRequest } from '../helpers/eager-client.js';

// A body the service refuses before reading it (413 from Content-Length, an upload over MAX_UPLOAD_BYTES) must not
// cost the client its answer: the service reads and discards the rest (src/http/lingering-close.ts). The client runs
// in a process of its own (test/helpers/eager-client.ts), as the user's app does; in this process the answer is read
// before the socket is closed and a lost answer never shows.

const MB = 1_000_000;
const MiB = 1024 * 1024;
const UPLOAD_LIMIT = MiB;
const CAPS = { maxBytes: 16 * MiB, maxMs: 1000 };

let svc: TestService;
let capped: TestService;
let board: string;
before(async () => {
  svc = await startService({ MAX_UPLOAD_BYTES: String(UPLOAD_LIMIT) });
  capped = await startService({}, { discardLimits: CAPS });
  board = await svc.createBoard();
});
after(async () => {
  await svc?.close();
  await capped?.close();
});

function eager(requests: EagerRequest[], port = svc.port): Promise<EagerAnswer[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...RUN_TS, path.join(import.meta.dirname, '../helpers/eager-client.ts'), String(port)],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(out) as EagerAnswer[]) : reject(new Error(`eager client exited ${code}`)),
    );
    child.stdin.end(JSON.stringify(requests));
  });
}

/** The error code of an answer, which must be the one error body. */
function errorCode(a: EagerAnswer): string {
  assert.ok(a.body, `no answer (${a.error ?? 'no body'})`);
  const body = JSON.parse(a.body) as { error?: { code?: string; message?: string } };
  assert.equal(typeof body.error?.message, 'string', a.body);
  return body.error!.code!;
}

/** Every route that takes a JSON body, from the OpenAPI document, with its path parameters filled in. */
function jsonRoutes(): { method: string; path: string }[] {
  const doc = svc.service.app.swagger() as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
  return Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => op.requestBody)
      .map(([method]) => ({ method: method.toUpperCase(), path: p.replace(/\{[^}]+\}/g, board) })),
  );
}

const upload = (bytes: number, connection: EagerRequest['connection']): EagerRequest => ({
  method: 'POST',
  path: '/api/upload',
  body: { kind: 'upload', bytes, boardId: board },
  connection,
});

test('every route with a JSON body answers an 8 MB body to a client that writes it all first', async () => {
  const routes = jsonRoutes();
  assert.ok(routes.length > 40, `only ${routes.length} routes found`);
  const answers = await eager(
    routes.map((r) => ({ ...r, body: { kind: 'json', bytes: 8 * MB }, connection: 'keep-alive' as const })),
  );
  answers.forEach((a, i) => {
    const where = `${routes[i].method} ${routes[i].path}`;
    // Routes that take more than 8 MB (a video project, HTML cards) read it and refuse it with their 400.
    assert.ok(a.status === 413 || a.status === 400, `${where}: ${a.status} ${a.error ?? a.body}`);
    if (a.status === 413) assert.equal(errorCode(a), 'payload_too_large', where);
    else errorCode(a);
  });
  const read = answers.filter((a) => a.status === 400).length;
  assert.ok(read <= 4, `${read} routes read an 8 MB body`);
});

for (const bytes of [8 * MB, 64 * MB]) {
  test(`100 of 100 refused ${bytes / MB} MB bodies are answered, with and without keep-alive, and nothing is stored`, async () => {
    const kinds: ((c: EagerRequest['connection']) => EagerRequest)[] = [
      (connection) => ({
        method: 'PUT',
        path: `/api/moodboards/${board}/video-projects/vp_none`,
        body: { kind: 'json', bytes },
        connection,
      }),
      (connection) => ({
        method: 'POST',
        path: '/api/motion/projects/render',
        body: { kind: 'json', bytes },
        connection,
      }),
      (connection) => ({ method: 'POST', path: '/api/motion/render-jobs', body: { kind: 'json', bytes }, connection }),
      (connection) => ({ method: 'POST', path: '/api/moodboards', body: { kind: 'json', bytes }, connection }),
      (connection) => upload(bytes, connection),
    ];
    const requests = Array.from({ length: 100 }, (_, i) => kinds[i % kinds.length](i % 2 ? 'close' : 'keep-alive'));
    const answers = await eager(requests);
    const lost = answers.filter((a) => a.status === undefined);
    assert.equal(lost.length, 0, `lost: ${lost.map((a) => a.error).join(', ')}`);
    answers.forEach((a, i) => {
      const where = `${requests[i].method} ${requests[i].path}`;
      // 8 MB is within a video project's limit (8 MiB and 64 KiB): read, then refused as JSON of too many values.
      if (bytes === 8 * MB && requests[i].method === 'PUT') {
        assert.equal(a.status, 400, where);
        errorCode(a);
      } else {
        assert.equal(a.status, 413, `${where}: ${a.body}`);
        assert.equal(errorCode(a), 'payload_too_large', where);
      }
    });

    // Nothing of a refused body is kept: no board, no element, no project, no file, no temp file.
    const boards = await svc.api('GET', '/api/moodboards');
    assert.deepEqual(
      (boards.body as { id: string }[]).map((b) => b.id),
      [board],
    );
    const one = await svc.api('GET', `/api/moodboards/${board}`);
    assert.deepEqual(one.body.elements, []);
    const projects = await svc.api('GET', `/api/moodboards/${board}/video-projects`);
    assert.equal(projects.status, 200);
    assert.deepEqual(projects.body, []);
    assert.deepEqual(fs.readdirSync(path.join(svc.dataDir, 'tmp')), []);
    const folder = path.join(svc.dataDir, 'media', 'admin', board);
    assert.deepEqual(fs.existsSync(folder) ? fs.readdirSync(folder) : [], []);
  });
}

/** Sends a body of `declared` bytes to the capped service in writes of `chunk` every `everyMs` (0: as fast as it takes them). */
function rawSender(
  declared: number,
  chunk: number,
  everyMs: number,
): Promise<{ answer: string; written: number; answeredAt: number; closedAt: number }> {
  return new Promise((resolve) => {
    // Half-open: the service's FIN after its answer must not end the sending (node would end it on its own).
    const socket = net.connect({ port: capped.port, host: '127.0.0.1', allowHalfOpen: true });
    const data = Buffer.alloc(chunk, 0x61);
    let answer = '';
    let written = 0;
    let answeredAt = 0;
    let open = true;
    socket.on('data', (c: Buffer) => {
      answer += c.toString('latin1');
      answeredAt ||= Date.now();
    });
    const done = () => {
      if (!open) return;
      open = false;
      resolve({ answer, written, answeredAt, closedAt: Date.now() });
    };
    socket.on('close', done);
    socket.on('error', done);
    socket.write(
      `POST /api/moodboards HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${declared}\r\n\r\n`,
    );
    const next = () => {
      if (!open || socket.destroyed || written >= declared) return;
      written += chunk;
      const more = socket.write(data);
      if (everyMs) setTimeout(next, everyMs);
      else if (more) setImmediate(next);
      else socket.once('drain', next);
    };
    next();
  });
}

test('a client that keeps sending is cut off once the discard passes its bytes', async () => {
  const r = await rawSender(1024 * MiB, 64 * 1024, 0);
  assert.match(r.answer, /^HTTP\/1\.1 413 /);
  assert.match(r.answer, /"payload_too_large"/);
  // The discard stops at 16 MiB; what the client wrote beyond that sat in the two sockets' buffers.
  assert.ok(r.written < 64 * MiB, `the client wrote ${r.written} bytes of the 1 GiB it declared`);
});

test('a client that sends slowly is cut off once the discard passes its time', async () => {
  const r = await rawSender(8 * MB, 1024, 50);
  assert.match(r.answer, /^HTTP\/1\.1 413 /);
  const held = r.closedAt - r.answeredAt;
  // Held while the client still sent (lingering), then closed at the time limit, not when the body would end (7 min).
  assert.ok(held >= CAPS.maxMs * 0.8, `closed ${held} ms after the answer`);
  assert.ok(held < CAPS.maxMs + 4000, `closed ${held} ms after the answer`);
  assert.ok(r.written < MB);
});

const redisBin = findRedisServer();

test(
  "a render worker's output over MAX_UPLOAD_BYTES is answered 413, and nothing is kept",
  { skip: redisBin ? false : REDIS_MISSING },
  async () => {
    const redis = await startRedis(redisBin!);
    const token = 'refused-bodies-token-0123456789';
    const queued = await startService({
      JOB_QUEUE: redis.url,
      JOB_QUEUE_NAME: 'refused-bodies',
      API_TOKEN: token,
      LOCAL_WORKER: '0',
      MAX_UPLOAD_BYTES: String(UPLOAD_LIMIT),
    });
    try {
      const b = await queued.createBoard();
      // A job no worker takes (LOCAL_WORKER=0 and none started) stays queued, so its output may be uploaded.
      const job = await queued.api('POST', '/api/html/render', {
        html: '<p>x</p>',
        width: 64,
        height: 64,
        fps: 10,
        duration: 1,
        board_id: b,
        async: true,
      });
      assert.equal(job.status, 202, job.text);
      const requests: EagerRequest[] = [8 * MB, 64 * MB].flatMap((bytes) =>
        (['keep-alive', 'close'] as const).map((connection) => ({
          method: 'PUT',
          path: `/api/workers/jobs/${job.body.job_id}/output?board_id=${b}&name=out.mp4`,
          body: { kind: 'raw' as const, bytes },
          headers: { authorization: `Bearer ${token}` },
          connection,
        })),
      );
      for (const a of await eager(requests, queued.port)) {
        assert.equal(a.status, 413, a.error ?? a.body);
        assert.equal(errorCode(a), 'payload_too_large');
      }
      // A chunked body declares no length: it is counted as it comes and refused once over the limit.
      const chunked = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port: queued.port,
            method: 'PUT',
            path: `/api/workers/jobs/${job.body.job_id}/output?board_id=${b}&name=out.mp4`,
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
          },
          (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode, body }));
          },
        );
        req.on('error', reject);
        const chunk = Buffer.alloc(64 * 1024, 0x61);
        let sent = 0;
        const more = () => {
          while (sent < 2 * UPLOAD_LIMIT) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', more);
          }
          req.end();
        };
        more();
      });
      assert.equal(chunked.status, 413, chunked.body);
      assert.equal(JSON.parse(chunked.body).error.code, 'payload_too_large');
      const folder = path.join(queued.dataDir, 'media', 'admin', b);
      assert.deepEqual(fs.existsSync(folder) ? fs.readdirSync(folder) : [], []);
    } finally {
      await queued.close();
      await redis.stop();
    }
  },
);
