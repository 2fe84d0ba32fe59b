import { renderHtmlFrameJob, renderHtmlJob } from '../html/render.js';
import type { JobHandler } from '../jobs/runner.js';
import { concatVideos } from '../media/concat.js';
import { convertVideo } from '../media/convert-video.js';
import { renderMockup } from '../mockups/render.js';
import { renderMotion } from '../motion/render.js';
import { renderPreviewJob } from '../motion/preview/job.js';
import { exportJob } from '../motion/lottie/job.js';
import { renderProject } from '../timeline/render.js';

/**
 * The handlers a render worker runs: every job kind the service defines as `portable`, the same functions (a test
 * checks the two lists agree). Like src/features.ts, the one place that names them all.
 */
export const PORTABLE_HANDLERS: Record<string, JobHandler<never>> = {
  'timeline.render': renderProject,
  'media.convert-video': convertVideo,
  'media.concat-videos': concatVideos,
  'html.render': renderHtmlJob,
  'html.render-frame': renderHtmlFrameJob,
  'mockups.render': renderMockup,
  'motion.render': renderMotion,
  'motion.preview': renderPreviewJob,
  'motion.export': exportJob,
};
