import fsp from 'node:fs/promises';
import type { AppContext } from '../../context.js';
import { InvalidInput } from '../../errors.js';
import type { MotionPreviews } from '../preview/service.js';
import type { ExportBody, ExportResult } from '../schemas.js';
import {
  exportInputs,
  exportJob,
  MAX_EXPORT_BYTES,
  MOTION_EXPORT_JOB,
  tooLarge,
  type ExportData,
  type ExportParams,
} from './job.js';

/** The answer from the file's final name (and element) and what the writing handed back. */
export function exportAnswer(
  filed: { filename: string; url: string; element?: unknown },
  data: ExportData,
): ExportResult {
  return {
    filename: filed.filename,
    url: filed.url,
    bytes: data.bytes,
    frames: data.frames,
    approximations: data.approximations,
    ...(filed.element ? { element: filed.element as ExportResult['element'] } : {}),
  };
}

/**
 * Lottie exports of compositions (no After Effects): checked in the request exactly as a preview is checked (the
 * project, the composition, the edits, the footage found), written in it or as a portable `motion.export` job.
 */
export class MotionExports {
  constructor(
    private readonly ctx: AppContext,
    private readonly previews: MotionPreviews,
  ) {
    ctx.jobs.define(MOTION_EXPORT_JOB, exportJob, {
      inputs: exportInputs,
      portable: true,
      result: (committed, data) => exportAnswer(committed, data as unknown as ExportData),
    });
  }

  /**
   * Every check before any work: the preview's (board, project readable or 400, composition 404, edits 400, footage
   * found), the format's, and the size: the pictures (a third more as data URIs) and the project file itself (what
   * the vector part can reach at most, bodymovin's files being smaller than their projects) over 50 MB is a 400.
   */
  async check(body: ExportBody): Promise<ExportParams> {
    const format = body.format ?? 'lottie';
    const images = body.images ?? (format === 'dotlottie' ? 'files' : 'embed');
    if (format === 'lottie' && images === 'files')
      throw new InvalidInput(
        'images: "files" puts the pictures beside the animation in a .lottie archive; use format "dotlottie", or images "embed"',
        { field: 'images' },
        'invalid_request',
      );
    const p = await this.previews.check({
      board_id: body.board_id,
      ...(body.element_id !== undefined ? { element_id: body.element_id } : {}),
      ...(body.url !== undefined ? { url: body.url } : {}),
      composition: body.composition,
      ...(body.textEdits ? { textEdits: body.textEdits } : {}),
      ...(body.mediaEdits ? { mediaEdits: body.mediaEdits } : {}),
    });
    const params: ExportParams = {
      boardId: p.boardId,
      project: p.project,
      composition: p.composition,
      format,
      images,
      expressions: body.expressions ?? 'bake',
      text: p.text,
      media: p.media,
      footage: p.footage,
      addToBoard: body.add_to_board ?? false,
      hasExpressions: p.expressions ?? false,
      glyphs: body.glyphs ?? false,
      cameras: body.cameras ?? false,
      fonts: p.fonts ?? [],
    };
    const size = async (url: string) => (await fsp.stat((await this.ctx.media.resolveUrl(url)).path)).size;
    let estimate = await size(p.project.url);
    for (const url of [...p.footage.map((f) => f.url), ...p.media.map((m) => m.url)])
      estimate += Math.ceil((await size(url)) * (images === 'embed' ? 4 / 3 : 1));
    if (estimate > MAX_EXPORT_BYTES) throw tooLarge(estimate);
    return params;
  }
}
