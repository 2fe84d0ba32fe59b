import type { GenerationContext } from '../generation/context.js';
import type { HtmlParts } from '../html/routes.js';
import type { App, AppContext } from '../context.js';
import { abortOnDisconnect } from '../http/client-abort.js';
import { queuedOf } from '../http/schemas.js';
import { answerNowOrQueued } from '../http/now-or-queued.js';
import { Importer } from './import.js';
import {
  BoardParams,
  ImportAnswer,
  ImportBody,
  ReshareBody,
  shareErrors,
  ShareAnswer,
  ShareBody,
  Unshared,
  type ImportAnswerT,
  type ImportBodyT,
  type ShareAnswerT,
} from './schemas.js';
import { SharingService } from './service.js';

const tags = ['sharing'];

const JOB_SHARE = 'sharing.share';
const JOB_RESHARE = 'sharing.reshare';
const JOB_IMPORT = 'sharing.import';

interface ShareParams {
  board_id: string;
  kind: 'live' | 'archive';
  include_history: boolean;
}
interface ReshareParams {
  board_id: string;
  include_history?: boolean;
}
type ImportParams = ImportBodyT & { board_id: string };

declare module '../jobs/kinds.js' {
  interface JobKinds {
    'sharing.share': ShareParams;
    'sharing.reshare': ReshareParams;
    'sharing.import': ImportParams;
  }
  interface JobResults {
    'sharing.share': ShareAnswerT;
    'sharing.reshare': ShareAnswerT;
    'sharing.import': ImportAnswerT;
  }
}

export const registerSharing = (
  app: App,
  ctx: AppContext,
  uses: { generation: GenerationContext; html: Pick<HtmlParts, 'cards' | 'cardVideos'> },
): void => {
  const shares = new SharingService(ctx, uses.generation.history, uses.html);
  const importer = new Importer(ctx);
  ctx.events.on('board-deleted', (board) => shares.endSharesOf(board.id));
  const share = (p: ShareParams, signal: AbortSignal, onProgress?: (f: number) => void) =>
    p.kind === 'live'
      ? shares.createLive(p.board_id, p.include_history, { signal, onProgress })
      : shares.createArchive(p.board_id, p.include_history, { signal, onProgress });

  ctx.jobs.define(JOB_SHARE, async (job) => {
    const result = await share(job.params, job.signal, job.progress);
    return { output_url: result.url ?? result.download_url ?? undefined, result };
  });
  ctx.jobs.define(JOB_RESHARE, async (job) => {
    const result = await shares.updateLive(job.params.board_id, job.params.include_history, {
      signal: job.signal,
      onProgress: job.progress,
    });
    return { output_url: result.url ?? undefined, result };
  });
  ctx.jobs.define(JOB_IMPORT, async (job) => ({
    result: await importer.run(job.params.board_id, job.params, { signal: job.signal, onProgress: job.progress }),
  }));

  app.post(
    '/api/moodboards/:id/share',
    {
      schema: {
        tags,
        summary: 'Share a board as a live page on your share worker, or as a ZIP archive',
        description:
          'live: builds the static page (index.html, board.json, content-hashed media) and uploads it to SHARE_WORKER_URL; `url` serves the page. ' +
          'archive: writes /media/share-archive-<share_id>.zip. Runs in the request (the upload stops if the client leaves and resumes on the next ' +
          'POST or PUT), or with `async: true` as a job. 409 when the board already has a complete live share (PUT updates it).',
        params: BoardParams,
        body: ShareBody,
        response: { 200: ShareAnswer, 202: queuedOf(JOB_SHARE), ...shareErrors },
      },
    },
    async (req, reply) => {
      const params: ShareParams = {
        board_id: req.params.id,
        kind: req.body.kind,
        include_history: req.body.include_history ?? false,
      };
      return answerNowOrQueued(ctx.jobs, reply, req.body.async, {
        kind: JOB_SHARE,
        params,
        boardId: params.board_id,
        check: () =>
          params.kind === 'live' ? shares.checkLive(params.board_id, false) : ctx.boards.requireBoard(params.board_id),
      });
    },
  );

  app.put(
    '/api/moodboards/:id/share',
    {
      schema: {
        tags,
        summary: 'Upload what changed since the last upload of the live share',
        description:
          'Compares the page with the manifest of what the worker holds (content hashes): answers `uploaded` and `skipped` file counts. The URL stays the same.',
        params: BoardParams,
        body: ReshareBody,
        response: { 200: ShareAnswer, 202: queuedOf(JOB_RESHARE), ...shareErrors },
      },
      // Every field is optional, so no body at all means `{}`.
      preValidation: async (req) => {
        req.body ??= {};
      },
    },
    async (req, reply) => {
      const params: ReshareParams = { board_id: req.params.id, include_history: req.body.include_history };
      return answerNowOrQueued(ctx.jobs, reply, req.body.async, {
        kind: JOB_RESHARE,
        params,
        boardId: params.board_id,
        check: () => shares.checkLive(params.board_id, true),
      });
    },
  );

  app.delete(
    '/api/moodboards/:id/share',
    {
      schema: {
        tags,
        summary: 'End the live share: every object of it is removed from the bucket, the URL answers 404',
        params: BoardParams,
        response: { 200: Unshared, ...shareErrors },
      },
    },
    async (req, reply) => shares.deleteLive(req.params.id, abortOnDisconnect(reply)),
  );

  app.post(
    '/api/moodboards/:id/import',
    {
      schema: {
        tags,
        summary: 'Import a shared board from a live share URL or an uploaded share archive',
        description:
          "All or nothing. replace: the board's elements become the imported ones (the old files stay in the board folder); append: added; " +
          'new-board: a fresh board named like the shared one (`board_id`). Archives are checked entry by entry before anything is read (see docs/sharing.md).',
        params: BoardParams,
        body: ImportBody,
        response: { 200: ImportAnswer, 202: queuedOf(JOB_IMPORT), ...shareErrors },
      },
    },
    async (req, reply) => {
      const { async: isAsync, ...body } = req.body;
      return answerNowOrQueued(ctx.jobs, reply, isAsync, {
        kind: JOB_IMPORT,
        params: { ...body, board_id: req.params.id },
        boardId: req.params.id,
        check: () => importer.check(req.params.id, body),
      });
    },
  );
};
