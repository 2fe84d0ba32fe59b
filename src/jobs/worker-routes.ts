import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import type { App, AppContext } from '../context.js';
import type { BoardOutputs, PendingOutput } from '../boards/outputs.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Conflict, DomainError } from '../errors.js';
import { ContentHashes } from '../files/content-hash.js';
import { newId } from '../ids.js';
import { badRequest } from '../http/errors.js';
import { errorResponses, JobSchema } from '../http/schemas.js';
import { jobView } from './routes.js';
import {
  JobParams,
  WorkerComplete,
  WorkerFailure,
  WorkerHello,
  WorkerInput,
  WorkerJob,
  WorkerMediaQuery,
  WorkerUploaded,
  WorkerUploadQuery,
} from './schemas.js';
import { SERVICE_VERSION } from '../version.js';

/**
 * The endpoints render workers on other machines talk to (docs/workers.md): they learn a job's params and inputs,
 * upload its output, and report how it ended. The guard requires API_TOKEN on every one (JOB_QUEUE needs a token);
 * without JOB_QUEUE they answer 409 `no_queue`.
 */
export function registerWorkerRoutes(app: App, ctx: AppContext, outputs: BoardOutputs): void {
  const tags = ['workers'];
  const hashes = new ContentHashes();
  /** Uploaded outputs waiting for their job's `complete`, by upload id (two workers may race on one job). */
  const uploads = new Map<string, { jobId: string; out: PendingOutput }>();
  const requireQueue = () => {
    if (!ctx.config.jobQueue)
      throw new Conflict('This service has no JOB_QUEUE: it takes no render workers', undefined, 'no_queue');
  };
  const discardUploads = async (jobId: string) => {
    for (const [id, upload] of uploads) {
      if (upload.jobId !== jobId) continue;
      uploads.delete(id);
      await outputs.discard(upload.out);
    }
  };
  // Job records end here or in the runner; an upload whose job ended without using it is removed.
  ctx.jobs.on('update', (job) => {
    if (['complete', 'error', 'cancelled'].includes(job.status)) void discardUploads(job.id);
  });

  app.get(
    '/api/workers/hello',
    {
      schema: {
        tags,
        summary: 'A render worker checks its token and learns the queued kinds',
        response: { 200: WorkerHello, ...errorResponses },
      },
    },
    async () => {
      requireQueue();
      return {
        service_version: SERVICE_VERSION,
        queue: ctx.config.jobQueue!.name,
        kinds: ctx.jobs.portableKinds(),
        tools: ctx.jobs.toolsNeeded(),
      };
    },
  );

  app.get(
    '/api/workers/jobs/:job_id',
    {
      schema: {
        tags,
        summary: "A job's params and inputs (with content hashes), for the worker that took it from the queue",
        params: JobParams,
        response: { 200: WorkerJob, ...errorResponses },
      },
    },
    async (req) => {
      requireQueue();
      const { job, cancelled, inputs } = ctx.jobs.forWorker(req.params.job_id);
      const files = [];
      for (const url of new Set(await inputs)) {
        try {
          const { path } = await ctx.media.resolveUrl(url);
          files.push({ url, ...(await hashes.of(path)) });
        } catch (err) {
          const e = err instanceof DomainError ? err : undefined;
          const message = err instanceof Error ? err.message : String(err);
          files.push({ url, error: { kind: e?.kind ?? 'internal', code: e?.code ?? 'internal', message } });
        }
      }
      return {
        id: job.id,
        kind: job.kind,
        board_id: job.board_id,
        status: job.status,
        cancelled,
        params: job.params,
        inputs: files,
      };
    },
  );

  app.get(
    '/api/workers/jobs/:job_id/media',
    {
      schema: {
        tags,
        summary: "A /media file a running job's page reads beyond its inputs (a card's image), with its content hash",
        description: 'Resolved through the media root with every containment check; the worker then fetches /media.',
        params: JobParams,
        querystring: WorkerMediaQuery,
        response: { 200: WorkerInput, ...errorResponses },
      },
    },
    async (req) => {
      requireQueue();
      const { job } = ctx.jobs.forWorker(req.params.job_id);
      if (job.status !== 'queued' && job.status !== 'running')
        throw new Conflict(`Job ${job.id} is ${job.status}`, undefined, 'job_finished');
      const { path } = await ctx.media.resolveUrl(req.query.url);
      return { url: req.query.url, ...(await hashes.of(path)) };
    },
  );

  // The output's bytes as they come, into a pending file in the job's board folder; never buffered.
  app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    scope.addContentTypeParser('application/octet-stream', (_req, _payload, done) => done(null));
    scope.put(
      '/api/workers/jobs/:job_id/output',
      {
        schema: {
          tags,
          summary: "Upload a job's output file (application/octet-stream); committed by .../complete",
          params: JobParams,
          querystring: WorkerUploadQuery,
          response: { 200: WorkerUploaded, ...errorResponses },
        },
      },
      async (req) => {
        requireQueue();
        const max = ctx.config.maxUploadBytes;
        const tooLarge = () =>
          new DomainError('too_large', 'payload_too_large', `The output is over MAX_UPLOAD_BYTES (${max} bytes)`);
        // A declared length over the limit is refused before anything is reserved; a chunked body is counted below.
        if (Number(req.headers['content-length']) > max) throw tooLarge();
        const { job } = ctx.jobs.forWorker(req.params.job_id);
        if (job.status !== 'queued' && job.status !== 'running')
          throw new Conflict(`Job ${job.id} is ${job.status}`, undefined, 'job_finished');
        const boardId = req.query.board_id;
        if (boardId !== job.board_id)
          throw new Conflict(`Job ${job.id} belongs to another board`, undefined, 'wrong_board');
        const out = await outputs.reserve(boardId, req.query.name);
        let received = 0;
        const meter = new Transform({
          transform(chunk: Buffer, _enc, done) {
            received += chunk.length;
            done(received > max ? tooLarge() : null, chunk);
          },
        });
        try {
          await pipeline(req.raw, meter, fs.createWriteStream(out.temp, { flags: 'wx' }));
        } catch (err) {
          await outputs.discard(out);
          throw err;
        }
        const now = ctx.jobs.require(job.id).status;
        if (now !== 'queued' && now !== 'running') {
          await outputs.discard(out);
          throw new Conflict(`Job ${job.id} is ${now}`, undefined, 'job_finished');
        }
        const id = newId('upl_');
        uploads.set(id, { jobId: job.id, out });
        return { upload_id: id };
      },
    );
  });

  app.post(
    '/api/workers/jobs/:job_id/complete',
    {
      schema: {
        tags,
        summary: 'A worker finished a job: its uploaded output is committed into the board, once per job',
        params: JobParams,
        body: WorkerComplete,
        response: { 200: JobSchema, ...errorResponses },
      },
    },
    async (req) => {
      requireQueue();
      const id = req.params.job_id;
      ctx.jobs.forWorker(id);
      const b = req.body;
      if (b.upload_id === undefined) return jobView(ctx.jobs.completeFromWorker(id, b));
      const named = [b.upload_id, ...Object.values(b.sides ?? {})];
      if (new Set(named).size !== named.length)
        throw badRequest('An upload is named twice (as the output or in body.sides)', { field: 'body.sides' });
      const missing = named.find((u) => uploads.get(u)?.jobId !== id);
      if (missing !== undefined) {
        const job = await ctx.jobs.afterCommit(id);
        // A duplicated complete of a job done (or being committed) answers it as it is; otherwise the upload is gone.
        if (job.status === 'complete') return jobView(job);
        throw new Conflict(
          `Upload ${missing} of job ${id} is not waiting (upload the output again)`,
          undefined,
          'upload_missing',
        );
      }
      const take = (u: string) => {
        const { out } = uploads.get(u)!;
        uploads.delete(u);
        return out;
      };
      const sides = Object.fromEntries(Object.entries(b.sides ?? {}).map(([name, u]) => [name, take(u)]));
      return jobView(
        await ctx.jobs.commitFromWorker(id, { file: take(b.upload_id), element: b.element ?? {}, data: b.data, sides }),
      );
    },
  );

  app.post(
    '/api/workers/jobs/:job_id/fail',
    {
      schema: {
        tags,
        summary: 'A worker reports that a job failed for good, or stopped because it was cancelled',
        params: JobParams,
        body: WorkerFailure,
        response: { 200: JobSchema, ...errorResponses },
      },
    },
    async (req) => {
      requireQueue();
      ctx.jobs.forWorker(req.params.job_id);
      ctx.jobs.remoteFailed(req.params.job_id, req.body);
      return jobView(ctx.jobs.require(req.params.job_id));
    },
  );
}
