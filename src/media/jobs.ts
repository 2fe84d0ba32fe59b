import type { NewMediaResult, WithSources } from './new-element.js';
import type { ConcatParams, ConvertVideoRequest } from './schemas.js';

export const JOB_CONVERT = 'media.convert-video';
export const JOB_CONCAT = 'media.concat-videos';

declare module '../jobs/kinds.js' {
  interface JobKinds {
    'media.convert-video': WithSources<ConvertVideoRequest>;
    'media.concat-videos': WithSources<ConcatParams>;
  }
  interface JobResults {
    'media.convert-video': NewMediaResult;
    'media.concat-videos': NewMediaResult;
  }
}
