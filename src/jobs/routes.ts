import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import { errorResponses } from '../http/errors.js';
import type { JobRecord } from './store.js';

export const JobSchema = Type.Object(
  {
    id: Type.String(),
    kind: Type.String(),
    board_id: Type.Union([Type.String(), Type.Null()]),
    status: Type.Enum(['queued', 'running', 'complete', 'error', 'cancelled']),
    progress: Type.Number({ minimum: 0, maximum: 1 }),
    eta_seconds: Type.Union([Type.Number(), Type.Null()]),
    output_url: Type.Union([Type.String(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    error_code: Type.Union([Type.String(), Type.Null()], { description: 'the failure\'s stable code (`ffmpeg_failed`, `timeout`, `cancelled`, ...)' }),
    result: Type.Unknown(),
    created_at: Type.String(),
    started_at: Type.Union([Type.String(), Type.Null()]),
    finished_at: Type.Union([Type.String(), Type.Null()]),
  },
);

/** The public view of a job (its params and the error's kind and details stay internal). */
export const jobView = (job: JobRecord) => {
  const { params: _params, error_kind: _kind, error_details: _details, ...rest } = job;
  return rest;
};

/** Generic job endpoints: every job of every feature can be polled and cancelled here too. */
export function registerJobRoutes(app: App, ctx: AppContext): void {
  const tags = ['jobs'];
  const Params = Type.Object({ job_id: Type.String({ minLength: 1, maxLength: 64 }) });
  app.get(
    '/api/jobs',
    {
      schema: {
        tags,
        summary: 'Recent jobs, newest first',
        querystring: Type.Object({
          board_id: Type.Optional(Type.String()),
          kind: Type.Optional(Type.String()),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
        }),
        response: { 200: Type.Object({ jobs: Type.Array(JobSchema) }) },
      },
    },
    async (req) => ({ jobs: ctx.jobs.list(req.query).map(jobView) }),
  );
  app.get(
    '/api/jobs/:job_id',
    { schema: { tags, summary: 'One job', params: Params, response: { 200: JobSchema, ...errorResponses } } },
    async (req) => jobView(ctx.jobs.require(req.params.job_id)),
  );
  app.post(
    '/api/jobs/:job_id/cancel',
    {
      schema: {
        tags,
        summary: 'Cancel a queued or running job (its partial output is removed)',
        params: Params,
        response: { 200: JobSchema, ...errorResponses },
      },
    },
    async (req) => jobView(ctx.jobs.cancel(req.params.job_id)),
  );
}
