import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import { badRequest } from '../http/errors.js';
import { asPlainJson, ErrorBody, errorResponses, OutputResult, queuedOf } from '../http/schemas.js';
import { MockupService } from './projects.js';
import { RENDER_JOB, renderMockup, type MockupRenderParams } from './render.js';
import { encodersFor, mediaRefs, requireEncoders, resolveRefs, screenKind } from './media.js';
import {
  ALPHA_FORMATS,
  BoardParams,
  CreateBody,
  JobParams,
  MAX_PROJECT_BYTES,
  Project,
  ProjectParams,
  PutBody,
  RenderBody,
  Summary,
} from './schemas.js';
import { renderStatusOf, toRenderStatus } from '../timeline/schemas.js';

/** Mockup projects of a board (a device showing a board file, moved in 3D) and their render jobs. */
/** The spec's mockup render poll: "same pattern as the video project render poll". */
const MockupRenderStatus = renderStatusOf(RENDER_JOB, OutputResult, 'MockupRenderStatus');

export const registerMockups = (app: App, ctx: AppContext): void => {
  const projects = new MockupService(ctx.db, ctx.boards);
  // The project's files are declared inputs and the video handed back: render workers run it too.
  ctx.jobs.define(RENDER_JOB, renderMockup, {
    inputs: (p) => mediaRefs(p.project).map((ref) => ref.url),
    portable: true,
  });
  const tags = ['mockups'];
  const base = '/api/moodboards/:id/mockup-projects';

  app.get(
    base,
    {
      schema: {
        tags,
        summary: 'Project summaries of a board, most recently saved first',
        params: BoardParams,
        response: { 200: Type.Array(Summary), ...errorResponses },
      },
    },
    async (req) => projects.list(req.params.id),
  );

  app.post(
    base,
    {
      schema: {
        tags,
        summary: 'Create a project: the device at rest on a gradient, no depth of field, no keyframes, 5 s',
        params: BoardParams,
        body: CreateBody,
        response: { 201: Project, ...errorResponses },
      },
    },
    async (req, reply) => reply.status(201).send(projects.create(req.params.id, req.body.name, req.body.device)),
  );

  app.get(
    `${base}/:pid`,
    { schema: { tags, summary: 'A project', params: ProjectParams, response: { 200: Project, ...errorResponses } } },
    async (req) => projects.get(req.params.id, req.params.pid),
  );

  app.put(
    `${base}/:pid`,
    {
      schema: {
        tags,
        summary: 'Replace the whole project state; answers the saved project',
        description:
          "Every field is type-checked (400 naming the field); fields the service does not know are kept as sent. id, created_at and updated_at are the service's. " +
          `The state stored may be at most ${MAX_PROJECT_BYTES} bytes of JSON (400).`,
        params: ProjectParams,
        body: PutBody,
        response: { 200: Project, ...errorResponses },
      },
    },
    async (req) => projects.replace(req.params.id, req.params.pid, req.body),
  );

  app.delete(
    `${base}/:pid`,
    {
      schema: {
        tags,
        summary: 'Delete a project (rendered videos stay on the board)',
        params: ProjectParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (req, reply) => {
      projects.delete(req.params.id, req.params.pid);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/mockup/render',
    {
      schema: {
        tags,
        summary: 'Render a mockup project to a video in the board folder (a job)',
        description:
          'Sizes: 1080p 1920x1080, square 1080x1080, vertical 1080x1920, 4k 3840x2160. mp4 is H.264, webm VP9, mov H.264 ' +
          '(ProRes 4444 when transparent_background). transparent_background needs webm or mov. The files the project uses are checked now (400 naming the url).',
        body: RenderBody,
        response: {
          202: queuedOf(RENDER_JOB),
          ...errorResponses,
          503: ErrorBody,
        },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const transparent = b.transparent_background ?? false;
      if (transparent && !ALPHA_FORMATS.includes(b.format)) {
        throw badRequest(
          `${b.format} cannot carry an alpha channel; transparent_background needs one of: ${ALPHA_FORMATS.join(', ')}`,
          {
            field: 'body.format',
            formats: ALPHA_FORMATS,
          },
        );
      }
      const project = projects.get(b.board_id, b.project_id);
      const files = await resolveRefs(ctx, b.board_id, project);
      const screen = project.screen_source_url ? files.get(project.screen_source_url) : undefined;
      const videoScreen = screen ? (await screenKind(ctx.tools, screen.path, screen.url)) === 'video' : false;
      await requireEncoders(ctx.tools, encodersFor(b.format, transparent, videoScreen));
      const { id: _id, created_at: _c, updated_at: _u, ...state } = project;
      const params: MockupRenderParams = {
        boardId: b.board_id,
        projectId: project.id,
        project: state,
        format: b.format,
        size_preset: b.size_preset,
        fps: b.fps,
        transparent,
      };
      const job = ctx.jobs.enqueue(RENDER_JOB, params, { boardId: b.board_id });
      return reply.status(202).send({ job_id: job.id, kind: RENDER_JOB, status: 'queued' as const });
    },
  );

  app.get(
    '/api/mockup/render/:job_id',
    {
      schema: {
        tags,
        summary: 'Poll a mockup render job',
        params: JobParams,
        response: { 200: MockupRenderStatus, ...errorResponses },
      },
      ...asPlainJson,
    },
    async (req) => {
      const job = ctx.jobs.require(req.params.job_id, RENDER_JOB);
      return toRenderStatus(MockupRenderStatus, job);
    },
  );
};
