import createClient from 'openapi-fetch';
import { chat, type ChatOptions } from './chat.js';
import { Connection, type ClientOptions } from './connection.js';
import { subscribeEvents, type EventStreamOptions } from './events.js';
import type { paths } from './generated/openapi.js';
import { waitForJob, type WaitOptions } from './jobs.js';
import type { ChatRequest } from './types.js';
import { upload, type UploadOptions } from './upload.js';

/**
 * The Board Media Service's client: `api` is every endpoint, typed from the OpenAPI document (openapi-fetch: paths,
 * parameters, bodies and answers checked by the compiler); the rest is what a generator does not do well.
 */
export function createBoardMediaClient(options: ClientOptions) {
  const conn = new Connection(options);
  return {
    api: createClient<paths>({ baseUrl: conn.baseUrl, headers: conn.headers(), fetch: conn.fetch }),
    /** POST /api/upload with progress (XMLHttpRequest in browsers, a streamed fetch body in Node). */
    upload: (opts: UploadOptions) => upload(conn, opts),
    /** One streamed turn of an agent's chat: deltas and cards as they come, the whole turn at the end. */
    chat: (request: ChatRequest, opts?: ChatOptions) => chat(conn, request, opts),
    /** The live event stream, reconnecting with Last-Event-ID. */
    events: (opts: EventStreamOptions) => subscribeEvents(conn, opts),
    /** A job's end, through the event stream (polling while it is down). */
    waitForJob: (jobId: string, opts?: WaitOptions) => waitForJob(conn, jobId, opts),
  };
}

export type BoardMediaClient = ReturnType<typeof createBoardMediaClient>;
export { BoardMediaError } from './errors.js';
export { readSse, type SseMessage } from './sse.js';
export type { ClientOptions } from './connection.js';
export type { ChatOptions } from './chat.js';
export type { EventStream, EventStreamOptions, StreamState } from './events.js';
export type { WaitOptions } from './jobs.js';
export type { UploadOptions, UploadProgress } from './upload.js';
export type * from './types.js';
export type { paths } from './generated/openapi.js';
