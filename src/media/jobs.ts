import type { JobContext } from '../jobs/runner.js';
import { concatVideos } from './concat.js';
import { convertVideo } from './convert-video.js';
import { jobIo, type WithSources } from './new-element.js';
import { ProbeCache } from './probe-cache.js';
import type { ConcatParams, ConvertVideoRequest } from './schemas.js';

export const JOB_CONVERT = 'media.convert-video';
export const JOB_CONCAT = 'media.concat-videos';

declare module '../jobs/kinds.js' {
  interface JobKinds {
    'media.convert-video': WithSources<ConvertVideoRequest>;
    'media.concat-videos': WithSources<ConcatParams>;
  }
}

// Portable handlers: they use only their job (the service and a render worker run them alike).
const toolsOf = (job: JobContext<unknown>) => ({ tools: job.env.tools, probes: new ProbeCache(job.env.tools) });

export const convertVideoJob = (job: JobContext<WithSources<ConvertVideoRequest>>) =>
  convertVideo(toolsOf(job), job.params, jobIo(job), { signal: job.signal, onProgress: job.progress });

export const concatVideosJob = (job: JobContext<WithSources<ConcatParams>>) =>
  concatVideos(toolsOf(job), job.params, jobIo(job), { signal: job.signal, onProgress: job.progress });
