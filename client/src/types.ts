import type { components, paths } from './generated/openapi.js';

/** Every named schema of the OpenAPI document (`components.schemas`), by its name. */
export type Schemas = components['schemas'];

/** The error body of every 4xx and 5xx answer: `{error: {code, message, details?}}`. */
export type ErrorBody = Schemas['Error'];
/** The service's error codes (docs/errors.md). */
export type ErrorCode = ErrorBody['error']['code'];
/** What `details` lists: each field of the request that was wrong (`body.width`, `query.types`, `path.job_id`). */
export type ErrorDetail = NonNullable<ErrorBody['error']['details']>[number];

export type Board = Schemas['Board'];
export type BoardSummary = Schemas['BoardSummary'];
export type Element = Schemas['Element'];
/** What the service fills in an element's `data` (the probe's facts, an HTML card's file); other keys are the app's. */
export type ElementData = Schemas['ElementData'];
export type MockupProject = Schemas['MockupProject'];
export type VideoProject = Schemas['VideoProject'];
export type InspectResult = Schemas['InspectResult'];
export type PreviewResult = Schemas['PreviewResult'];
/** What POST /api/upload answers: the stored file's name and URL, and the element when it was added. */
export type UploadResult = Schemas['UploadResult'];
export type ChatRequest = paths['/api/agents/chat']['post']['requestBody']['content']['application/json'];
/** The end of a chat turn: the whole message and every card of the turn. */
export type ChatResult = Schemas['ChatResult'];
export type ActionCard = Schemas['ActionCard'];

/** A background job of any kind; `kind` tells them apart, and with it the type of `result`. */
export type Job = Schemas['Job'];
export type JobKind = Job['kind'];
/** A job of one kind. */
export type JobOf<K extends JobKind> = Extract<Job, { kind: K }>;
/** What a job of kind `K` made. */
export type JobResult<K extends JobKind> = NonNullable<JobOf<K>['result']>;
/** A job that completed: its `result` is there. */
export type CompletedJob<K extends JobKind = JobKind> = JobOf<K> & { status: 'complete'; result: JobResult<K> };
/** Every 202 answer: the job a request became. */
export type Queued<K extends JobKind = JobKind> = { job_id: string; kind: K; status: 'queued' };

/** One event of GET /api/events: `{id, type, at, board_id?, data}`, `type` telling the kinds apart. */
export type LiveEvent = Schemas['LiveEvent'];
export type EventType = LiveEvent['type'];
export type EventOf<T extends EventType> = Extract<LiveEvent, { type: T }>;
