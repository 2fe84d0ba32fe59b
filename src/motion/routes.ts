import { Type } from 'typebox';
import type { Feature } from '../context.js';
import { asPlainJson, errorResponses } from '../http/schemas.js';
import { abortOnDisconnect } from '../http/client-abort.js';
import {
  DetectAnswer,
  ExportBody,
  exportErrors,
  ExportQueued,
  ExportResult,
  InspectAnswer,
  MotionJobParams,
  MotionQueued,
  Preset,
  PresetBody,
  PresetList,
  PresetParams,
  PresetQuery,
  PreviewBody,
  PreviewQueued,
  PreviewResult,
  previewErrors,
  ProjectRef,
  RenderBody,
  RenderJobAnswer,
  RenderResult,
  renderErrors,
} from './schemas.js';
import { MotionService } from './service.js';
import { answerNowOrQueued } from '../http/now-or-queued.js';
import { MOTION_PREVIEW_JOB } from './preview/contract.js';
import { MOTION_RENDER_JOB } from './render.js';
import { MOTION_EXPORT_JOB } from './lottie/job.js';

/** The motion editor (After Effects): detect aerender, inspect projects without it, render them with edits, presets. */
export const registerMotion: Feature = (app, ctx) => {
  const motion = new MotionService(ctx);
  const tags = ['motion editor'];

  app.get(
    '/api/motion/detect',
    {
      schema: {
        tags,
        summary: 'Whether After Effects (aerender) is installed, where, and its version (cached 30 s)',
        response: { 200: DetectAnswer },
      },
    },
    async () => motion.aerender.detect(),
  );

  app.post(
    '/api/motion/projects/inspect',
    {
      schema: {
        tags,
        summary:
          'Compositions, layers, footage and editable parts of an .aep/.aepx project (read-only; needs no After Effects)',
        body: ProjectRef,
        response: { 200: InspectAnswer, ...errorResponses },
      },
    },
    async (req) => motion.inspect(req.body),
  );

  app.post(
    '/api/motion/projects/preview',
    {
      schema: {
        tags,
        summary:
          'Draw a composition (one PNG frame, or an mp4/webm video) with text and media edits, without After Effects; the file lands in the board folder',
        body: PreviewBody,
        response: { 200: PreviewResult, 202: PreviewQueued, ...previewErrors },
      },
    },
    async (req, reply) => {
      // The checks run first either way (project, composition, times, sizes, edits): a bad request queues nothing.
      const params = await motion.previews.check(req.body);
      return answerNowOrQueued(ctx.jobs, reply, req.body.async, {
        kind: MOTION_PREVIEW_JOB,
        params,
        boardId: params.boardId,
        check: () => undefined,
      });
    },
  );

  app.post(
    '/api/motion/projects/export',
    {
      schema: {
        tags,
        summary:
          'Write a composition as Lottie (.json) or dotLottie (.lottie) without After Effects, with text and media edits; the file lands in the board folder',
        body: ExportBody,
        response: { 200: ExportResult, 202: ExportQueued, ...exportErrors },
      },
    },
    async (req, reply) => {
      // The checks run first either way (project, composition, edits, size): a bad request queues nothing.
      const params = await motion.exports.check(req.body);
      return answerNowOrQueued(ctx.jobs, reply, req.body.async, {
        kind: MOTION_EXPORT_JOB,
        params,
        boardId: params.boardId,
        check: () => undefined,
      });
    },
  );

  app.post(
    '/api/motion/projects/render',
    {
      schema: {
        tags,
        summary:
          'Render a composition with edits applied to a copy of the project; waits, then answers the video element added to the board',
        body: RenderBody,
        response: { 200: RenderResult, ...renderErrors },
      },
    },
    async (req, reply) => motion.renderAndWait(req.body, abortOnDisconnect(reply)),
  );

  app.post(
    '/api/motion/render-jobs',
    {
      schema: {
        tags,
        summary: 'Queue the same render as a background job',
        body: RenderBody,
        response: { 202: MotionQueued, ...renderErrors },
      },
    },
    async (req, reply) => {
      const job = await motion.enqueueRender(req.body);
      return reply.status(202).send({ id: job.id, job_id: job.id, kind: MOTION_RENDER_JOB, status: 'queued' as const });
    },
  );

  app.get(
    '/api/motion/render-jobs/:job_id',
    {
      schema: {
        tags,
        summary: 'Poll a motion render job (cancel it with POST /api/jobs/{id}/cancel)',
        params: MotionJobParams,
        response: { 200: RenderJobAnswer, ...errorResponses },
      },
      ...asPlainJson,
    },
    async (req) => motion.jobStatus(req.params.job_id),
  );

  app.get(
    '/api/motion/projects/presets',
    {
      schema: {
        tags,
        summary: 'Saved input presets of a project element, by name',
        querystring: PresetQuery,
        response: { 200: PresetList, ...errorResponses },
      },
    },
    async (req) => motion.listPresets(req.query.board_id, req.query.element_id),
  );

  app.post(
    '/api/motion/projects/presets',
    {
      schema: {
        tags,
        summary:
          'Save a named input preset (checked against the project like a render); the same name replaces the old one',
        body: PresetBody,
        response: { 200: Preset, 201: Preset, ...errorResponses },
      },
    },
    async (req, reply) => {
      const { preset, created } = await motion.savePreset(req.body);
      return reply.status(created ? 201 : 200).send(preset);
    },
  );

  app.delete(
    '/api/motion/projects/presets/:preset_id',
    {
      schema: {
        tags,
        summary: 'Delete a preset',
        params: PresetParams,
        querystring: PresetQuery,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (req, reply) => {
      motion.deletePreset(req.query.board_id, req.query.element_id, req.params.preset_id);
      return reply.status(204).send(null);
    },
  );
};
