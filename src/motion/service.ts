import type { AppContext } from '../context.js';
import { jobViewAs } from '../jobs/routes.js';
import { failureOf } from '../jobs/runner.js';
import type { JobRecord } from '../jobs/store.js';
import { AerenderLocator } from './detect.js';
import { approximateFile, inspectFile, resolveProjectFile } from './inspect.js';
import { buildPlan } from './plan.js';
import { MotionPresetStore } from './presets.js';
import {
  MOTION_RENDER_JOB,
  motionRenderInputs,
  renderMotion,
  type MotionRenderParams,
  type MotionRenderResult,
} from './render.js';
import { RenderJobAnswer, type PresetBody, type RenderBody } from './schemas.js';
import type { Static } from 'typebox';
import { Conflict } from '../errors.js';
import { MotionPreviews } from './preview/service.js';
import { MotionExports } from './lottie/service.js';

/** The motion editor's logic behind its routes: detect, inspect, validate-and-enqueue renders, presets. */
export class MotionService {
  readonly aerender: AerenderLocator;
  readonly presets: MotionPresetStore;
  /** Previews drawn by the service itself (docs/motion.md, "Preview"). */
  readonly previews: MotionPreviews;
  /** Lottie exports written by the service itself (docs/lottie.md). */
  readonly exports: MotionExports;

  constructor(private readonly ctx: AppContext) {
    this.aerender = new AerenderLocator(ctx.tools);
    this.presets = new MotionPresetStore(ctx.db);
    this.previews = new MotionPreviews(ctx);
    this.exports = new MotionExports(ctx, this.previews);
    ctx.jobs.define(MOTION_RENDER_JOB, renderMotion, {
      inputs: motionRenderInputs,
      portable: true,
      tools: ['aerender'],
      result: (c): MotionRenderResult => ({ element: c.element, url: c.url }),
    });
  }

  async inspect(ref: { board_id: string; element_id?: string; url?: string }) {
    const file = await resolveProjectFile(this.ctx, ref);
    const project = await inspectFile(file);
    const approximations = await approximateFile(file, project);
    return { ...project, installed: (await this.aerender.detect()).installed, approximations };
  }

  /**
   * Checks everything a render needs (aerender first), then queues it. Nothing runs when a check fails. With JOB_QUEUE
   * the render workers bring their own After Effects, so this machine needs none (docs/workers.md).
   */
  async enqueueRender(body: RenderBody): Promise<JobRecord> {
    if (!this.ctx.config.jobQueue) await this.aerender.require();
    const file = await resolveProjectFile(this.ctx, body);
    const project = await inspectFile(file);
    const preset = this.presets.find(body.board_id, file.elementId, { id: body.preset_id, name: body.preset_name });
    const plan = await buildPlan(this.ctx, file, project, body, preset);
    const params: MotionRenderParams = { plan, stallSeconds: this.ctx.config.motionRenderStallSeconds };
    return this.ctx.jobs.enqueue(MOTION_RENDER_JOB, params, { boardId: body.board_id, idPrefix: 'motionjob_' });
  }

  /**
   * Queues a render and waits for it; a failed render answers the error it failed with. A client that goes away
   * (`signal`) cancels the render: nobody would receive its answer.
   */
  async renderAndWait(body: RenderBody, signal?: AbortSignal): Promise<MotionRenderResult> {
    const queued = await this.enqueueRender(body);
    const cancel = () => this.ctx.jobs.cancel(queued.id);
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      const job = await this.ctx.jobs.wait(queued.id);
      if (job.status === 'complete') return job.result as MotionRenderResult;
      // A render cancelled while someone waits for it answers 409: the cancel came from elsewhere (POST .../cancel).
      if (job.status === 'cancelled') throw new Conflict(job.error ?? 'Cancelled', undefined, 'cancelled');
      throw failureOf(job);
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
  }

  jobStatus(id: string) {
    const job = this.ctx.jobs.require(id, MOTION_RENDER_JOB);
    return { ...jobViewAs(RenderJobAnswer, job), job_id: job.id };
  }

  /** Saves a preset after checking its composition and edits against the project, as a render would. */
  async savePreset(body: Static<typeof PresetBody>) {
    const file = await resolveProjectFile(this.ctx, { board_id: body.board_id, element_id: body.element_id });
    const project = await inspectFile(file);
    await buildPlan(this.ctx, file, project, {
      board_id: body.board_id,
      composition: body.composition,
      ...body.inputs,
    });
    return this.presets.save(body.board_id, body.element_id, {
      name: body.name,
      composition: body.composition,
      inputs: body.inputs,
    });
  }

  listPresets(boardId: string, elementId: string) {
    this.ctx.boards.requireElement(boardId, elementId);
    return this.presets.list(boardId, elementId);
  }

  deletePreset(boardId: string, elementId: string, id: string): void {
    this.ctx.boards.requireElement(boardId, elementId);
    this.presets.delete(boardId, elementId, id);
  }
}
