import type { FastifyReply } from 'fastify';
import type { JobKind, JobKinds } from '../jobs/kinds.js';
import type { JobRunner } from '../jobs/runner.js';
import { abortOnDisconnect } from './client-abort.js';

export interface NowOrQueuedWork<K extends JobKind, R> {
  kind: K;
  params: JobKinds[K];
  /** The board the job belongs to (listed with GET /api/jobs?board_id=). */
  boardId?: string;
  idPrefix?: string;
  /**
   * The checks that need no long work, run before a job is queued so that those mistakes stay an immediate 4xx
   * rather than a job that fails later. The synchronous path makes the same checks inside `run`.
   */
  check(): unknown;
  /** The work itself, in the request: the signal aborts when the client goes away (nobody would get the answer). */
  run(signal: AbortSignal): Promise<R>;
}

/**
 * Answer now or queued, the one way an operation that accepts `async: true` is served: without it the work runs in
 * the request and its result is the answer; with it the checks run, a job of `kind` is queued and the answer is
 * 202 `{job_id, kind, status: "queued"}`, the job's result later holding the same body as the synchronous answer.
 */
export async function answerNowOrQueued<K extends JobKind, R>(
  jobs: JobRunner,
  reply: FastifyReply,
  isAsync: boolean | undefined,
  work: NowOrQueuedWork<K, R>,
): Promise<R | FastifyReply> {
  if (!isAsync) return work.run(abortOnDisconnect(reply));
  await work.check();
  const job = jobs.enqueue(work.kind, work.params, { boardId: work.boardId, idPrefix: work.idPrefix });
  return reply.status(202).send({ job_id: job.id, kind: work.kind, status: 'queued' as const });
}
