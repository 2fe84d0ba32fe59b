import fsp from 'node:fs/promises';
import path from 'node:path';
import { BoardOutputs, type CommittedOutput, type FiledOutput, type PendingOutput } from '../../boards/outputs.js';
import type { AppContext } from '../../context.js';
import type { InspectedProject, PreviewBody, PreviewResult } from '../schemas.js';
import {
  MOTION_PREVIEW_JOB,
  previewElement,
  renderPreviewFile,
  renderPreviewJob,
  type PreviewData,
  type PreviewParams,
} from './job.js';
import { checkPreview, previewInputs } from './request.js';
import { inspectFile, type ProjectFile } from '../inspect.js';

/** Inspected projects a service keeps for the checks of the next previews. */
const KEEP_INSPECTED = 4;

/** The answer from the file's final name (and element) and what the drawing handed back. */
export function previewAnswer(filed: FiledOutput | CommittedOutput, data: PreviewData): PreviewResult {
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
    ...('element' in filed ? { element: filed.element } : {}),
  };
}

/**
 * Previews of compositions drawn by the service itself (no After Effects): checked in the request, drawn in it or as
 * a portable `motion.preview` job, through the same `renderPreviewFile`.
 */
export class MotionPreviews {
  private readonly outputs: BoardOutputs;
  /**
   * Projects read for the checks, kept by path, size and modification time: previews of one template follow each
   * other (a text changed, then another), and reading a large project again costs a worker thread each time.
   */
  private readonly inspected = new Map<string, Promise<InspectedProject>>();

  constructor(private readonly ctx: AppContext) {
    this.outputs = new BoardOutputs(ctx.media, ctx.boards);
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

  /** A preview drawn in the request: the same file and answer as the job. */
  async preview(p: PreviewParams, signal: AbortSignal): Promise<PreviewResult> {
    const inputs = new Map<string, string>();
    for (const url of previewInputs(p)) inputs.set(url, (await this.ctx.media.resolveUrl(url)).path);
    const tmp = path.join(this.ctx.config.dataDir, 'tmp');
    let scratch: string | undefined;
    let reserved: PendingOutput | undefined;
    try {
      const { file, data } = await renderPreviewFile(
        {
          tools: this.ctx.tools,
          pool: this.ctx.browsers,
          input: (url) => inputs.get(url)!,
          scratch: async () => {
            await fsp.mkdir(tmp, { recursive: true });
            return (scratch ??= await fsp.mkdtemp(path.join(tmp, 'preview-')));
          },
          signal,
          progress: () => undefined,
        },
        p,
        async (name) => (reserved = await this.outputs.reserve(p.boardId, name)),
      );
      const filed = p.addToBoard
        ? await this.outputs.commit(file, previewElement(p, data))
        : await this.outputs.file(file);
      return previewAnswer(filed, data);
    } finally {
      if (reserved) await this.outputs.discard(reserved);
      if (scratch) await fsp.rm(scratch, { recursive: true, force: true });
    }
  }
}
