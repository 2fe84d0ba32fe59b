import type { Static } from 'typebox';
import type { App, AppContext } from '../context.js';
import { errorResponses, JobSchema } from '../http/schemas.js';
import { JobList, JobListQuery, JobParams } from './schemas.js';
import type { JobSummary } from './store.js';

const PUBLIC_FIELDS = Object.keys(JobSchema.properties) as (keyof typeof JobSchema.properties)[];

/**
 * The public view of a job: the fields of JobSchema (its params and the error's kind and details stay internal, and
 * params are not even read: they are parsed on first read).
 */
export const jobView = (job: JobSummary): Static<typeof JobSchema> =>
  Object.fromEntries(PUBLIC_FIELDS.map((field) => [field, job[field]])) as Static<typeof JobSchema>;

/** Generic job endpoints: every job of every feature can be polled and cancelled here too. */
export function registerJobs(app: App, ctx: AppContext): void {
  const tags = ['jobs'];
  app.get(
    '/api/jobs',
    {
      schema: {
        tags,
        summary: 'Recent jobs, newest first',
        querystring: JobListQuery,
        response: { 200: JobList },
      },
    },
    async (req) => ({ jobs: ctx.jobs.list(req.query).map(jobView) }),
  );
  app.get(
    '/api/jobs/:job_id',
    { schema: { tags, summary: 'One job', params: JobParams, response: { 200: JobSchema, ...errorResponses } } },
    async (req) => jobView(ctx.jobs.require(req.params.job_id)),
  );
  app.post(
    '/api/jobs/:job_id/cancel',
    {
      schema: {
        tags,
        summary: 'Cancel a queued or running job (its partial output is removed)',
        params: JobParams,
        response: { 200: JobSchema, ...errorResponses },
      },
    },
    async (req) => jobView(ctx.jobs.cancel(req.params.job_id)),
  );
}
