import type { FastifyReply } from 'fastify';
import type { JobKind, JobKinds, JobResult } from '../jobs/kinds.js';
import type { JobRunner } from '../jobs/runner.js';
import { abortOnDisconnect } from './client-abort.js';

export interface NowOrQueuedWork<K extends JobKind> {
  kind: K;
  params: JobKinds[K];
  /** The board the job belongs to (listed with GET /api/jobs?board_id=). */
  boardId?: string;
  idPrefix?: string;
  /**
   * The checks that need no long work, run before the work either way: those mistakes are an immediate 4xx rather
   * than a job that fails later.
   */
  check(): unknown;
}

/**
 * Answer now or queued, the one way an operation that accepts `async: true` is served: the checks run, then without
 * it the kind's handler runs in the request (`JobRunner.runNow`: the same handler and context as the job, its signal
 * the client going away) and the job's result is the answer; with it a job of `kind` is queued and the answer is 202
 * `{job_id, kind, status: "queued"}`, the job's result later holding the same body as the synchronous answer.
 */
export async function answerNowOrQueued<K extends JobKind>(
  jobs: JobRunner,
  reply: FastifyReply,
  isAsync: boolean | undefined,
  work: NowOrQueuedWork<K>,
): Promise<JobResult<K> | FastifyReply> {
  await work.check();
  if (!isAsync) return jobs.runNow(work.kind, work.params, abortOnDisconnect(reply));
  const job = jobs.enqueue(work.kind, work.params, { boardId: work.boardId, idPrefix: work.idPrefix });
  return reply.status(202).send({ job_id: job.id, kind: work.kind, status: 'queued' as const });
}
