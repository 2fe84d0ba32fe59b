import type { Static, TSchema } from 'typebox';
import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import { asPlainJson, errorResponses, jobOf, JobSchema } from '../http/schemas.js';
import type { JobKind } from './kinds.js';
import { JobListQuery, JobParams } from './schemas.js';
import type { JobSummary } from './store.js';

const PUBLIC_FIELDS = Object.keys(JobSchema.properties) as (keyof typeof JobSchema.properties)[];

/**
 * The public view of a job: the fields of JobSchema (its params and the error's kind and details stay internal, and
 * params are not even read: they are parsed on first read).
 */
export const jobView = (job: JobSummary): Static<typeof JobSchema> =>
  Object.fromEntries(PUBLIC_FIELDS.map((field) => [field, job[field]])) as Static<typeof JobSchema>;

/**
 * The job view typed as `schema` says a job of its kind looks (the runner keeps results untyped; the kinds' result
 * schemas describe them, and test/helpers/service.ts checks every job a test waits for against them).
 */
export const jobViewAs = <S extends TSchema>(_schema: S, job: JobSummary) => jobView(job) as unknown as Static<S>;

/**
 * Generic job endpoints: every job of every feature can be polled and cancelled here too. `results` names each
 * kind's result schema (src/features.ts): the answer is the `Job` union, discriminated by `kind`.
 */
export function registerJobs(app: App, ctx: AppContext, results: Partial<Record<JobKind, TSchema>>): void {
  const tags = ['jobs'];
  const Job = Type.Union(
    Object.entries(results).map(([kind, result]) => jobOf(kind, result as TSchema)),
    { title: 'Job', description: 'A background job; `kind` tells the kinds apart, and with it the shape of `result`' },
  );
  const JobList = Type.Object({ jobs: Type.Array(Job) }, { title: 'JobList' });
  app.get(
    '/api/jobs',
    {
      ...asPlainJson,
      schema: {
        tags,
        summary: 'Recent jobs, newest first',
        querystring: JobListQuery,
        response: { 200: JobList },
      },
    },
    async (req) => ({ jobs: ctx.jobs.list(req.query).map((job) => jobViewAs(Job, job)) }),
  );
  app.get(
    '/api/jobs/:job_id',
    {
      ...asPlainJson,
      schema: { tags, summary: 'One job', params: JobParams, response: { 200: Job, ...errorResponses } },
    },
    async (req) => jobViewAs(Job, ctx.jobs.require(req.params.job_id)),
  );
  app.post(
    '/api/jobs/:job_id/cancel',
    {
      ...asPlainJson,
      schema: {
        tags,
        summary: 'Cancel a queued or running job (its partial output is removed)',
        params: JobParams,
        response: { 200: Job, ...errorResponses },
      },
    },
    async (req) => jobViewAs(Job, ctx.jobs.cancel(req.params.job_id)),
  );
}
