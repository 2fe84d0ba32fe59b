import { Type } from 'typebox';
import { ELEMENT_TYPES } from '../boards/schemas.js';
import { Id, RecordOf } from '../http/schemas.js';
import { ERROR_KINDS } from '../errors.js';

export const JobParams = Type.Object({ job_id: Id });

export const JobListQuery = Type.Object({
  board_id: Type.Optional(Type.String()),
  kind: Type.Optional(Type.String()),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
});

// The render workers' side (src/jobs/worker-routes.ts); every route needs API_TOKEN, which JOB_QUEUE requires.

export const WorkerHello = Type.Object({
  service_version: Type.String(),
  /** The BullMQ queue the service's jobs are on (JOB_QUEUE_NAME): the worker takes jobs from it. */
  queue: Type.String(),
  /** The job kinds that go to the shared queue. */
  kinds: Type.Array(Type.String()),
  /** Kinds whose handler needs a program not every machine has (`aerender`): a worker without it leaves them. */
  tools: Type.Record(Type.String(), Type.Array(Type.String())),
});

export const WorkerInput = Type.Object({
  url: Type.String(),
  /** SHA-256 of the file's bytes, the worker's cache key; absent with `error`. */
  sha256: Type.Optional(Type.String()),
  size: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Why the input cannot be had (a missing file): the handler names it when it asks for the input. */
  error: Type.Optional(Type.Object({ kind: Type.String(), code: Type.String(), message: Type.String() })),
});

export const WorkerJob = Type.Object({
  id: Type.String(),
  kind: Type.String(),
  board_id: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  /** The job was cancelled (or its cancel asked): the worker stops and reports it. */
  cancelled: Type.Boolean(),
  params: Type.Unknown(),
  inputs: Type.Array(WorkerInput),
});

export const WorkerUploadQuery = Type.Object({
  board_id: Type.String({ minLength: 1, maxLength: 64 }),
  name: Type.String({ minLength: 1, maxLength: 255 }),
});

export const WorkerUploaded = Type.Object({ upload_id: Type.String() });

/** A media URL a job's page reads beyond its declared inputs (GET .../media). */
export const WorkerMediaQuery = Type.Object({ url: Type.String({ minLength: 1, maxLength: 2048 }) });

const UploadId = Type.String({ minLength: 1, maxLength: 64 });

export const WorkerComplete = Type.Object(
  {
    /** The file uploaded with PUT .../output, committed into the board with this element. */
    upload_id: Type.Optional(UploadId),
    /** `false`: the file only gets its unique name in the board folder, no element. */
    element: Type.Optional(
      Type.Union([
        Type.Object(
          {
            type: Type.Optional(Type.Union(ELEMENT_TYPES.map((t) => Type.Literal(t)))),
            data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          },
          { additionalProperties: false },
        ),
        Type.Literal(false),
      ]),
    ),
    data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /** Side files of the output (uploaded like it), by the name the kind's result knows them by. */
    sides: Type.Optional(RecordOf({ pattern: '^[a-z][a-z0-9_-]{0,31}$' }, UploadId, { maxProperties: 8 })),
    /** For a job that produced no file. */
    output_url: Type.Optional(Type.String({ maxLength: 2048 })),
    result: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

export const WorkerFailure = Type.Object(
  {
    kind: Type.Union(ERROR_KINDS.map((k) => Type.Literal(k))),
    code: Type.String({ minLength: 1, maxLength: 100 }),
    message: Type.String({ maxLength: 10_000 }),
    details: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);
