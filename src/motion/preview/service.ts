import fsp from 'node:fs/promises';
import type { CommittedOutput } from '../../boards/outputs.js';
import type { AppContext } from '../../context.js';
import type { InspectedProject, PreviewBody, PreviewResult } from '../schemas.js';
import { MOTION_PREVIEW_JOB, previewInputs, type PreviewData, type PreviewParams } from './contract.js';
import { renderPreviewJob } from './job.js';
import { checkPreview } from './request.js';
import { inspectFile, type ProjectFile } from '../inspect.js';

/** Inspected projects a service keeps for the checks of the next previews. */
const KEEP_INSPECTED = 4;

/** The answer from the file's final name (and element) and what the drawing handed back. */
export function previewAnswer(filed: CommittedOutput, data: PreviewData): PreviewResult {
  return {
    type: data.type,
    filename: filed.filename,
    url: filed.url,
    width: data.width,
    height: data.height,
    fps: data.fps,
    ...(data.time !== undefined ? { time: data.time } : {}),
    ...(data.duration !== undefined ? { duration: data.duration } : {}),
    approximations: data.approximations,
    element: filed.element,
  };
}

/**
 * Previews of compositions drawn by the service itself (no After Effects): checked in the request, drawn by the
 * portable `motion.preview` job, queued or run in the request (`answerNowOrQueued`).
 */
export class MotionPreviews {
  /**
   * Projects read for the checks, kept by path, size and modification time: previews of one template follow each
   * other (a text changed, then another), and reading a large project again costs a worker thread each time.
   */
  private readonly inspected = new Map<string, Promise<InspectedProject>>();

  constructor(private readonly ctx: AppContext) {
    ctx.jobs.define(MOTION_PREVIEW_JOB, renderPreviewJob, {
      inputs: previewInputs,
      portable: true,
      result: (committed, data) => previewAnswer(committed, data as unknown as PreviewData),
    });
  }

  /** Every check that needs no drawing; the job's params. */
  check(body: PreviewBody): Promise<PreviewParams> {
    return checkPreview(this.ctx, body, this.ctx.config.htmlRenderTimeoutMs, (file) => this.inspect(file));
  }

  private async inspect(file: ProjectFile): Promise<InspectedProject> {
    const stat = await fsp.stat(file.path);
    const key = `${file.path}\u0000${stat.size}\u0000${stat.mtimeMs}`;
    let read = this.inspected.get(key);
    if (read) this.inspected.delete(key);
    else read = inspectFile(file);
    this.inspected.set(key, read);
    for (const old of this.inspected.keys()) if (this.inspected.size > KEEP_INSPECTED) this.inspected.delete(old);
    try {
      return await read;
    } catch (err) {
      this.inspected.delete(key);
      throw err;
    }
  }
}
