import { Type, type TSchema } from 'typebox';
import { ERROR_CODES, type ErrorCode } from './error-codes.js';

/**
 * Schema pieces every feature shares: ids, the error body with the statuses that answer it, the queued answer and
 * the public view of a job. Features build their own request/response schemas in `src/<feature>/schemas.ts` from these.
 */

/**
 * An object whose keys follow `key` (a pattern, a length) and whose values are `value`. TypeBox's Record keeps a key
 * schema's pattern only as `patternProperties` (a key that does not match then passes unchecked) and drops its
 * length limits; `propertyNames` checks every key.
 */
export const RecordOf = <V extends TSchema>(
  key: { pattern?: string; minLength?: number; maxLength?: number },
  value: V,
  options: { maxProperties?: number; description?: string } = {},
) => Type.Record(Type.String(), value, { ...options, propertyNames: { type: 'string', ...key } });

/** A board, element, project or job id in a path or body. */
export const Id = Type.String({ minLength: 1, maxLength: 64 });

/** One field of the request that was wrong: `body.width`, `querystring.types`, `params.job_id`, `headers.last-event-id`. */
export const ErrorDetail = Type.Object(
  {
    field: Type.String({
      description: 'where in the request: `body.`, `querystring.`, `params.` or `headers.` and the path',
    }),
    message: Type.String({ description: 'what is wrong with it' }),
  },
  { title: 'ErrorDetail' },
);

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.Enum(Object.keys(ERROR_CODES) as ErrorCode[], {
        description: 'stable machine-readable code, one per class of mistake or failure (docs/errors.md)',
      }),
      message: Type.String({ description: 'human-readable explanation' }),
      details: Type.Optional(
        Type.Array(ErrorDetail, { description: 'the fields of the request that were wrong, when the request was' }),
      ),
      info: Type.Optional(
        Type.Record(Type.String(), Type.Unknown(), {
          description: 'facts beyond the fields, for some codes (`retry_after` seconds, a `reason`, the `bot_ids`)',
        }),
      ),
    }),
  },
  { title: 'Error', description: 'The body of every 4xx and 5xx answer' },
);

/** Response schemas for the usual error statuses, to spread into a route's `response`. */
export const errorResponses = {
  400: ErrorBody,
  404: ErrorBody,
} as const;

/** `html.render-frame` -> `HtmlRenderFrame`: the stem of the named schemas of a job kind. */
const schemaName = (kind: string) =>
  kind
    .split(/[.\-_]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');

/**
 * 202 answer of a request that became a job of `kind` (every 202 of the API has these three fields), polled at
 * GET /api/jobs/{job_id} or the feature's own poll route. Named `<Kind>Queued` in the OpenAPI document, so a typed
 * client knows the kind of the job it waits for.
 */
export const queuedOf = <K extends string>(kind: K) =>
  Type.Object(
    { job_id: Type.String(), kind: Type.Literal(kind), status: Type.Literal('queued') },
    {
      title: `${schemaName(kind)}Queued`,
      description:
        'The request became a job; when it completes, its result holds the body the request would have answered.',
    },
  );

export const JOB_STATUSES = ['queued', 'running', 'complete', 'error', 'cancelled'] as const;

/** The public view of a job: its record without the params (typed by kind: `jobOf`). */
export const JobSchema = Type.Object({
  id: Type.String(),
  kind: Type.String(),
  board_id: Type.Union([Type.String(), Type.Null()]),
  status: Type.Enum(JOB_STATUSES),
  progress: Type.Number({ minimum: 0, maximum: 1 }),
  eta_seconds: Type.Union([Type.Number(), Type.Null()]),
  output_url: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  error_code: Type.Union([Type.String(), Type.Null()], {
    description: "the failure's stable code (`ffmpeg_failed`, `timeout`, `cancelled`, ...)",
  }),
  result: Type.Unknown(),
  created_at: Type.String(),
  started_at: Type.Union([Type.String(), Type.Null()]),
  finished_at: Type.Union([Type.String(), Type.Null()]),
});

/**
 * The public view of a job of `kind`, its `result` typed (null until it completed): `<Kind>Job` in the OpenAPI
 * document, the members of the `Job` union that GET /api/jobs/{job_id} answers.
 */
export const jobOf = <K extends string, R extends TSchema>(kind: K, result: R) =>
  Type.Object(
    {
      ...JobSchema.properties,
      kind: Type.Literal(kind),
      error_code: Type.Union([Type.Enum(Object.keys(ERROR_CODES) as ErrorCode[]), Type.Null()], {
        description: "the failure's stable code (docs/errors.md)",
      }),
      result: Type.Union([result, Type.Null()], { description: 'what the job made, once `status` is `complete`' }),
    },
    { title: `${schemaName(kind)}Job` },
  );

/** The result of a job whose output file became a board element (the runner's default result). */
export const OutputResult = Type.Object(
  {
    element_id: Type.String({ description: 'the element the file was added to the board as' }),
    filename: Type.String({ description: 'the file in the board folder' }),
  },
  { title: 'OutputResult' },
);

/**
 * Route option for answers that carry jobs: written with JSON.stringify, not a serializer compiled from the schema,
 * which would pick a branch of the typed `result` unions and coerce or drop what does not fit. The schemas document
 * the answers; test/helpers/service.ts checks each job a test waits for against them.
 */
export const asPlainJson = { serializerCompiler: () => (data: unknown) => JSON.stringify(data) };
