import type { paths } from './generated/openapi.js';

/** The JSON body of a response object in the generated types. */
type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;

/** The error body of every 4xx and 5xx answer. */
export type ErrorBody = JsonOf<paths['/api/jobs/{job_id}']['get']['responses'][404]>;
/** A background job as GET /api/jobs/{job_id} answers it. */
export type Job = JsonOf<paths['/api/jobs/{job_id}']['get']['responses'][200]>;
/** What POST /api/upload answers: the stored file's name and URL, and the element when it was added. */
export type UploadResult = JsonOf<paths['/api/upload']['post']['responses'][200]>;
export type Element = NonNullable<UploadResult['element']>;
export type ChatRequest = paths['/api/agents/chat']['post']['requestBody']['content']['application/json'];
/** The end of a chat turn: the whole message and every card of the turn. */
export type ChatResult = JsonOf<paths['/api/agents/chat']['post']['responses'][200]>;
export type ActionCard = ChatResult['actions'][number];
/** One event of GET /api/events: `{id, type, at, board_id?, data}`, `type` telling the kinds apart. */
export type LiveEvent = paths['/api/events']['get']['responses'][200]['content']['text/event-stream'];
export type EventType = LiveEvent['type'];
export type EventOf<T extends EventType> = Extract<LiveEvent, { type: T }>;
