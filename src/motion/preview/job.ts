import fsp from 'node:fs/promises';
import type { JobContext, JobOutcome } from '../../jobs/runner.js';
import { renderPage } from '../../render/render-page.js';
import { previewElement, previewFilename, type PreviewData, type PreviewParams } from './contract.js';
import { prepareFrames } from './frames.js';
import { previewHtml } from './page.js';

/** Share of the progress bar taken by decoding, sampling and preparing footage, before the first frame. */
const PREPARE_SHARE = 0.15;

/**
 * The `motion.preview` job, queued or run in the request (`JobRunner.runNow`): only its job (params, declared inputs,
 * scratch, output, env), so render workers run it too. Decode the project, apply the edits, sample every output
 * frame's display list (frames.ts), prepare footage and fonts in the scratch folder, then capture the page (page.ts)
 * on the virtual clock: one PNG, or every frame into ffmpeg, all under the preview's time limit. The file is handed
 * back pending: the runner names it in the board folder (and adds an element with add_to_board).
 */
export async function renderPreviewJob(job: JobContext<PreviewParams>): Promise<JobOutcome> {
  const p = job.params;
  const video = p.format !== 'png';
  const env = { tools: job.env.tools, pool: job.env.browsers };
  const opts = { signal: job.signal, timeoutMs: p.timeoutMs, what: 'preview', failedAsRender: true };
  const { file, data } = await renderPage(env, opts, async (page) => {
    const out = await job.output(p.boardId, previewFilename(p));
    const work = await job.scratch();
    const io = { tools: job.env.tools, input: (url: string) => job.input(url), signal: page.signal };
    const prepared = await prepareFrames(io, p, work, page.files, (f) => job.progress(f * PREPARE_SHARE));
    const spec = { html: previewHtml(p, prepared), width: p.width, height: p.height, fps: p.fps, ownPage: true };
    if (!video) {
      const { png } = await page.png({ ...spec, frame: 0 });
      await fsp.writeFile(out.temp, png, { flag: 'wx' });
    } else {
      const frames = prepared.frames.length;
      // Frame ranges report their frames side by side, so progress counts them rather than reading an index.
      let done = 0;
      await page.video(
        spec,
        {
          fps: p.fps,
          format: p.format as 'mp4' | 'webm',
          output: out.temp,
          frameCount: frames,
          // A preview video is lossy and has no alpha: lossless PNG frames would only cost time.
          frames: 'jpeg',
        },
        () => job.progress(PREPARE_SHARE + ((1 - PREPARE_SHARE) * ++done) / frames),
      );
    }
    const data: PreviewData = {
      type: video ? 'video' : 'image',
      width: p.width,
      height: p.height,
      fps: p.fps,
      ...(video ? { duration: prepared.frames.length / p.fps } : { time: prepared.times[0] }),
      approximations: prepared.approximations,
    };
    return { file: out, data };
  });
  return {
    output: {
      file,
      element: p.addToBoard ? previewElement(p, data) : false,
      data: data as unknown as Record<string, unknown>,
    },
  };
}
