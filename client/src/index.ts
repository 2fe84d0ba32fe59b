import createClient from 'openapi-fetch';
import { chat, type ChatOptions } from './chat.js';
import { Connection, type ClientOptions } from './connection.js';
import { BoardMediaError } from './errors.js';
import { subscribeEvents, type EventStreamOptions } from './events.js';
import type { paths } from './generated/openapi.js';
import { JobWaits, type JobRef, type WaitOptions } from './jobs.js';
import type { ChatRequest, CompletedJob, JobKind } from './types.js';
import { upload, type UploadOptions, type UploadedToBoard } from './upload.js';

type Json<R> = R extends { content: { 'application/json': infer T } } ? T : never;
/** The paths whose POST may answer 202: a request that becomes a job. */
export type JobPath = {
  [P in keyof paths]: paths[P] extends { post: { responses: { 202: unknown } } } ? P : never;
}[keyof paths];
type PostOf<P extends JobPath> = paths[P] extends { post: infer O } ? O : never;
type BodyOf<P extends JobPath> = PostOf<P> extends { requestBody?: infer B } ? Json<B> : never;
type ParamsOf<P extends JobPath> = PostOf<P> extends { parameters: infer Q } ? Q : never;
/** The 202 answer of a job path: `{job_id, kind, status: 'queued'}` with its kind. */
export type QueuedOf<P extends JobPath> = PostOf<P> extends { responses: { 202: infer R } } ? Json<R> : never;
/** What `startJob` takes: the path's parameters and body, with `async: true` where the body has that switch. */
export type StartJobInit<P extends JobPath> = (P extends `${string}{${string}`
  ? { params: ParamsOf<P> }
  : { params?: ParamsOf<P> }) & {
  body: BodyOf<P> extends { async?: unknown } ? BodyOf<P> & { async: true } : BodyOf<P>;
};

/**
 * The Board Media Service's client: `api` is every endpoint, typed from the OpenAPI document (openapi-fetch: paths,
 * parameters, bodies and answers checked by the compiler); the rest is what a generator does not do well.
 */
export function createBoardMediaClient(options: ClientOptions) {
  const conn = new Connection(options);
  const api = createClient<paths>({ baseUrl: conn.baseUrl, headers: conn.headers(), fetch: conn.fetch });
  if (options.throwOnError)
    api.use({
      async onResponse({ response }) {
        if (!response.ok) throw await BoardMediaError.fromResponse(response.clone());
        return undefined;
      },
    });
  const jobs = new JobWaits(conn);
  return {
    api,
    /**
     * POST a request that becomes a job (every path that may answer 202), typed: resolves with its 202 answer,
     * `{job_id, kind, status: 'queued'}`, which `waitForJob` takes; rejects with a BoardMediaError otherwise.
     */
    async startJob<P extends JobPath>(path: P, init: StartJobInit<P>): Promise<QueuedOf<P>> {
      const res = await conn.fetch(conn.url(fillPath(path, (init.params as { path?: object } | undefined)?.path)), {
        method: 'POST',
        headers: { ...conn.headers(), 'content-type': 'application/json' },
        body: JSON.stringify(init.body),
      });
      if (res.status !== 202) {
        if (res.ok) await res.body?.cancel();
        throw res.ok
          ? new BoardMediaError(res.status, `http_${res.status}`, `${path} answered ${res.status}, not 202`)
          : await BoardMediaError.fromResponse(res);
      }
      return (await res.json()) as QueuedOf<P>;
    },
    /** POST /api/upload with progress (XMLHttpRequest in browsers, a streamed fetch body in Node). */
    upload: ((opts: UploadOptions) => upload(conn, opts)) as UploadedToBoard,
    /** One streamed turn of an agent's chat: deltas and cards as they come, the whole turn at the end. */
    chat: (request: ChatRequest, opts?: ChatOptions) => chat(conn, request, opts),
    /** The live event stream, reconnecting with Last-Event-ID. */
    events: (opts: EventStreamOptions) => subscribeEvents(conn, opts),
    /**
     * A job's end, through the event stream (polling while it is down), typed by its kind when given the 202 answer.
     * Every wait shares one stream (or the app's, `{events}`).
     */
    waitForJob: <K extends JobKind = JobKind>(job: JobRef<K>, opts?: WaitOptions<K>): Promise<CompletedJob<K>> =>
      jobs.wait(job, opts),
  };
}

/** `/api/moodboards/{id}/render` with `{id: 'bd_1'}` -> `/api/moodboards/bd_1/render`. */
function fillPath(path: string, params: object = {}): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    encodeURIComponent(String((params as Record<string, unknown>)[name])),
  );
}

export type BoardMediaClient = ReturnType<typeof createBoardMediaClient>;
export { BoardMediaError, type ClientErrorCode } from './errors.js';
export { readSse, type SseMessage } from './sse.js';
export type { ClientOptions } from './connection.js';
export type { ChatOptions } from './chat.js';
export type { EventStream, EventStreamOptions, StreamListener, StreamState } from './events.js';
export type { JobRef, WaitOptions } from './jobs.js';
export type { UploadOptions, UploadProgress } from './upload.js';
export type * from './types.js';
export type { components, paths } from './generated/openapi.js';
