import { Type } from 'typebox';
import type { Feature } from '../context.js';
import { badRequest, notFound } from '../http/errors.js';
import { asPlainJson, errorResponses, queuedOf } from '../http/schemas.js';
import { TimelineService } from './service.js';
import { renderSettings } from './render-options.js';
import { RENDER_JOB, renderInputs, renderProject, type RenderParams } from './render.js';
import {
  BoardParams,
  JobParams,
  NewProjectBody,
  ProjectParams,
  ProjectReplaceBody,
  ProjectSchema,
  ProjectSummarySchema,
  RenderBody,
  RenderStatus,
  toRenderStatus,
} from './schemas.js';
import { timelineDuration, visibleItemCount } from './timeline.js';
import { PROJECT_LIMITS } from './project.js';

/** Video timeline projects of a board and their render jobs. */
export const registerTimeline: Feature = async (app, ctx) => {
  const projects = new TimelineService(ctx.db, ctx.boards);
  ctx.jobs.define(RENDER_JOB, renderProject, { inputs: renderInputs, portable: true });
  const tags = ['video projects'];
  const base = '/api/moodboards/:id/video-projects';

  app.get(
    base,
    {
      schema: {
        tags,
        summary: 'Project summaries of a board, most recently saved first',
        params: BoardParams,
        response: { 200: Type.Array(ProjectSummarySchema), ...errorResponses },
      },
    },
    async (req) => projects.list(req.params.id),
  );

  app.post(
    base,
    {
      schema: {
        tags,
        summary: 'Create a project with an empty timeline and default settings',
        params: BoardParams,
        body: NewProjectBody,
        response: { 201: ProjectSchema, ...errorResponses },
      },
    },
    async (req, reply) => reply.status(201).send(projects.create(req.params.id, req.body.name)),
  );

  app.get(
    `${base}/:pid`,
    {
      schema: {
        tags,
        summary: 'A project with its data (older layouts migrated)',
        params: ProjectParams,
        response: { 200: ProjectSchema, ...errorResponses },
      },
    },
    async (req) => projects.get(req.params.id, req.params.pid),
  );

  app.put(
    `${base}/:pid`,
    {
      bodyLimit: PROJECT_LIMITS.jsonBytes + 64 * 1024,
      config: { maxJsonValues: PROJECT_LIMITS.jsonValues },
      schema: {
        tags,
        summary: 'Replace the whole project state; answers the saved project',
        description: `Limits (400 naming the field): ${PROJECT_LIMITS.channels} channels, ${PROJECT_LIMITS.clips} clips, ${PROJECT_LIMITS.items} items, ${PROJECT_LIMITS.keyframes} keyframes, items ending by ${PROJECT_LIMITS.durationSeconds} s, ${PROJECT_LIMITS.jsonBytes} bytes of data JSON; a larger body is a 413, one of more than ${PROJECT_LIMITS.jsonValues} JSON values a 400.`,
        params: ProjectParams,
        body: ProjectReplaceBody,
        response: { 200: ProjectSchema, ...errorResponses },
      },
    },
    async (req) =>
      projects.replace(req.params.id, req.params.pid, req.body as { id?: string; name?: string; data: unknown }),
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
    `${base}/:pid/render`,
    {
      schema: {
        tags,
        summary: 'Render the project to a video file in the board folder (a job)',
        description: `At most ${PROJECT_LIMITS.renderLayers} items on visible channels and ${PROJECT_LIMITS.durationSeconds} s of output (400).`,
        params: ProjectParams,
        body: RenderBody,
        response: { 202: queuedOf(RENDER_JOB), ...errorResponses },
      },
    },
    async (req, reply) => {
      const project = projects.get(req.params.id, req.params.pid);
      const settings = renderSettings(req.body ?? {});
      const layers = visibleItemCount(project.data);
      if (layers > PROJECT_LIMITS.renderLayers)
        throw badRequest(
          `The project has ${layers} items on visible channels; a render composes at most ${PROJECT_LIMITS.renderLayers}`,
          { field: 'data.channels' },
        );
      const duration = timelineDuration(project.data);
      if (duration <= 0) throw badRequest('The project has no visible items to render');
      // A row saved before saves were limited may end past any finite time, or past the longest timeline.
      if (!(duration <= PROJECT_LIMITS.durationSeconds))
        throw badRequest(
          `The project lasts ${duration} s; a render may last at most ${PROJECT_LIMITS.durationSeconds} s (12 hours)`,
          { field: 'data.channels' },
        );
      const params: RenderParams = {
        ...settings,
        boardId: req.params.id,
        projectId: project.id,
        projectName: project.name,
        data: project.data,
      };
      const job = ctx.jobs.enqueue(RENDER_JOB, params, { boardId: req.params.id });
      return reply.status(202).send({ job_id: job.id, kind: RENDER_JOB, status: 'queued' as const });
    },
  );

  app.get(
    `${base}/:pid/render/:job_id`,
    {
      schema: {
        tags,
        summary: 'Poll a render job',
        params: JobParams,
        response: { 200: RenderStatus, ...errorResponses },
      },
      ...asPlainJson,
    },
    async (req) => {
      projects.get(req.params.id, req.params.pid);
      const job = ctx.jobs.require(req.params.job_id, RENDER_JOB);
      const params = job.params;
      if (params.projectId !== req.params.pid || params.boardId !== req.params.id)
        throw notFound(`Job ${req.params.job_id} not found`);
      return toRenderStatus(RenderStatus, job);
    },
  );
};
