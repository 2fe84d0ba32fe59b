import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Ajv } from 'ajv';
import type { AddressInfo, LookupFunction } from 'node:net';
import { loadConfig } from '../../src/config.js';
import { buildService, type BuildOptions, type Service } from '../../src/app.js';

export interface TestService {
  service: Service;
  baseUrl: string;
  port: number;
  dataDir: string;
  /** JSON request helper: parses JSON answers, keeps the raw text otherwise. */
  api<T = any>(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<ApiAnswer<T>>;
  /** Creates a board and returns its id. */
  createBoard(name?: string): Promise<string>;
  /** Uploads a file from disk (or a buffer) to a board; `addToBoard` also creates the element. */
  upload(
    boardId: string,
    file: string | { name: string; data: Buffer | string },
    opts?: { addToBoard?: boolean; data?: Record<string, unknown> },
  ): Promise<ApiAnswer<any>>;
  close(): Promise<void>;
}

/** Node's arguments that run a .ts file as the tests run (scripts/ts-hooks.mjs): for the processes tests start. */
export const RUN_TS = ['--import', new URL('../../scripts/ts-hooks.mjs', import.meta.url).href];

/** The API token of services started on a shared queue by TEST_JOB_QUEUE. */
export const TEST_QUEUE_TOKEN = 'test-queue-token-0123456789';

export interface ApiAnswer<T> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/**
 * Starts a real service on 127.0.0.1 with an ephemeral port and a fresh DATA_DIR. `env` is layered over the
 * process environment, so FFMPEG_PATH/CHROMIUM_PATH overrides from the outside still apply.
 */
export async function startService(
  env: Record<string, string | undefined> = {},
  opts: {
    dataDir?: string;
    logStream?: NodeJS.WritableStream;
    lookup?: LookupFunction;
    discardLimits?: BuildOptions['discardLimits'];
  } = {},
): Promise<TestService> {
  const dataDir = opts.dataDir ?? (await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-test-')));
  // TEST_JOB_QUEUE=redis://...: the same tests with jobs on the shared queue (test/workers/renders-on-queue.test.ts),
  // each service on a queue of its own.
  const onQueue = process.env.TEST_JOB_QUEUE
    ? {
        JOB_QUEUE: process.env.TEST_JOB_QUEUE,
        API_TOKEN: TEST_QUEUE_TOKEN,
        JOB_QUEUE_NAME: `test-${path.basename(dataDir)}`,
      }
    : {};
  const config = loadConfig({
    ...process.env,
    HOST: '127.0.0.1',
    PORT: '0',
    API_TOKEN: '',
    ALLOWED_ORIGINS: '',
    LOG_LEVEL: 'silent',
    ...onQueue,
    ...env,
    DATA_DIR: dataDir,
  });
  const service = await buildService(config, {
    ...(opts.logStream ? { logStream: opts.logStream } : { logger: false }),
    lookup: opts.lookup,
    discardLimits: opts.discardLimits,
  });
  await service.app.listen({ host: config.host, port: config.port });
  // With API_TOKEN set, the helpers send it like any client of the service would.
  const auth: Record<string, string> = config.apiToken ? { authorization: `Bearer ${config.apiToken}` } : {};
  const port = (service.app.server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;

  const api = async <T>(
    method: string,
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiAnswer<T>> => {
    const init: RequestInit = { method, headers: { ...auth, ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const res = await fetch(baseUrl + url, init);
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  };

  const t: TestService = {
    service,
    baseUrl,
    port,
    dataDir,
    api,
    async createBoard(name = 'Test board') {
      const res = await api<{ id: string }>('POST', '/api/moodboards', { name });
      if (res.status !== 201) throw new Error(`createBoard failed: ${res.status} ${res.text}`);
      return res.body.id;
    },
    async upload(boardId, file, o = {}) {
      const form = new FormData();
      form.set('board_id', boardId);
      if (o.addToBoard) form.set('add_to_board', 'true');
      if (o.data) form.set('data', JSON.stringify(o.data));
      if (typeof file === 'string')
        form.set('file', new Blob([new Uint8Array(await fsp.readFile(file))]), path.basename(file));
      else
        form.set('file', new Blob([typeof file.data === 'string' ? file.data : new Uint8Array(file.data)]), file.name);
      const res = await fetch(`${baseUrl}/api/upload`, { method: 'POST', body: form, headers: auth });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, text };
    },
    async close() {
      await service.close();
      if (!opts.dataDir) await fsp.rm(dataDir, { recursive: true, force: true });
    },
  };
  return t;
}

/** Polls until `check` returns a value (not undefined), or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves once no process `pid` exists any more (killed with the tree it belonged to). */
export function processGone(pid: number, timeoutMs = 5000): Promise<true> {
  return eventually(
    () => {
      try {
        process.kill(pid, 0);
        return undefined;
      } catch {
        return true;
      }
    },
    timeoutMs,
    `process ${pid} to be gone`,
  );
}

/** A stream that keeps every log line the service writes, parsed. */
export function logCapture(): { stream: NodeJS.WritableStream; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { stream, lines };
}

const FINISHED = ['complete', 'error', 'cancelled'];

const documentChecks = new WeakMap<object, Promise<Ajv>>();

/**
 * Every finished job a test waits for is checked against the OpenAPI document's schema of its kind (`<Kind>Job`,
 * its typed `result`): the typed client's promise about results holds for real jobs, kind by kind. Jobs of kinds
 * only tests define, and the per-kind polls' own bodies, are left alone.
 */
async function checkJobAgainstDocument(t: Pick<TestService, 'api'>, body: any): Promise<void> {
  if (typeof body?.kind !== 'string' || typeof body?.id !== 'string') return;
  let ajv = documentChecks.get(t);
  if (!ajv) {
    ajv = t.api('GET', '/api/openapi.json').then(({ body: doc }) => {
      // The document is OpenAPI 3.0: `nullable` is its keyword, and its schemas carry titles and descriptions.
      const a = new Ajv({ strict: false, allErrors: true });
      a.addSchema(nullableToTypes(doc), 'openapi');
      return a;
    });
    documentChecks.set(t, ajv);
  }
  const a = await ajv;
  const name =
    body.kind
      .split(/[.\-_]/)
      .map((w: string) => w.charAt(0).toUpperCase() + w.slice(1))
      .join('') + 'Job';
  const validate = a.getSchema(`openapi#/components/schemas/${name}`);
  if (!validate) return;
  if (!validate(body))
    throw new Error(`job ${body.id} (${body.kind}) does not fit ${name}: ${a.errorsText(validate.errors)}`);
}

/** OpenAPI 3.0's `nullable: true` as JSON Schema's `anyOf` with null, for Ajv. */
function nullableToTypes(node: any): any {
  if (Array.isArray(node)) return node.map(nullableToTypes);
  if (typeof node !== 'object' || node === null) return node;
  const { nullable, ...rest } = node;
  const out = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, nullableToTypes(v)]));
  return nullable === true ? { anyOf: [out, { type: 'null' }] } : out;
}

/**
 * Polls a job until it has finished (complete, error or cancelled), or until `until` holds, and answers the poll's
 * body. `job` is a job id (polled at GET /api/jobs/{id}) or a feature's own poll path (`/api/ai/jobs/...`). Every
 * poll must answer 200; `each` sees every body (to check progress on the way).
 */
export async function waitForJob<T = any>(
  t: Pick<TestService, 'api'>,
  job: string,
  opts: { timeoutMs?: number; what?: string; until?: (body: any) => boolean; each?: (body: any) => void } = {},
): Promise<T> {
  const url = job.startsWith('/') ? job : `/api/jobs/${job}`;
  const done = opts.until ?? ((body: any) => FINISHED.includes(body.status));
  return eventually(
    async () => {
      const poll = await t.api('GET', url);
      if (poll.status !== 200) throw new Error(`GET ${url} answered ${poll.status}: ${poll.text}`);
      opts.each?.(poll.body);
      if (!done(poll.body)) return undefined;
      await checkJobAgainstDocument(t, poll.body);
      return poll.body as T;
    },
    opts.timeoutMs ?? 60_000,
    opts.what ?? `job ${job}`,
  );
}
