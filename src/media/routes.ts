import type { App, AppContext, Feature } from '../context.js';
import { ErrorBody, queuedOf } from '../http/schemas.js';
import { abortOnDisconnect } from '../http/client-abort.js';
import { answerNowOrQueued } from '../http/now-or-queued.js';
import { checkConcatRequest, concatVideos } from './concat.js';
import { convertImage } from './convert-image.js';
import { checkVideoElement, convertVideo, validateConvertVideo } from './convert-video.js';
import { downloadToBoard, parseHttpUrl } from './download.js';
import { extractAudio } from './extract-audio.js';
import { JOB_CONCAT, JOB_CONVERT } from './jobs.js';
import { elementSources, newMediaResult, sourceUrls } from './new-element.js';
import {
  ConcatBody,
  ConvertImageBody,
  ConvertVideoBody,
  Downloaded,
  DownloadBody,
  ElementRefBody,
  mediaErrors,
  NewElement,
  SimilarMatches,
  TrimBody,
  type DownloadParams,
} from './schemas.js';
import { SimilarityService } from './similarity.js';
import { trimMedia } from './trim.js';

const JOB_DOWNLOAD = 'media.download';

declare module '../jobs/kinds.js' {
  interface JobKinds {
    'media.download': DownloadParams;
  }
  interface JobResults {
    'media.download': Awaited<ReturnType<typeof downloadToBoard>>;
  }
}

function defineJobs(ctx: AppContext): void {
  // Sources resolved by the runner, the new file handed back to it: render workers can run them (portable).
  ctx.jobs.define(JOB_CONVERT, convertVideo, { inputs: sourceUrls, portable: true, result: newMediaResult });
  ctx.jobs.define(JOB_CONCAT, concatVideos, { inputs: sourceUrls, portable: true, result: newMediaResult });
  ctx.jobs.define(JOB_DOWNLOAD, async (job) => {
    const result = await downloadToBoard(ctx, job.params, { signal: job.signal, onProgress: job.progress });
    return { output_url: result.elements[0]?.url, result };
  });
}

export const registerMedia: Feature = (app: App, ctx: AppContext) => {
  const tags = ['media'];
  const similarity = new SimilarityService(ctx);
  similarity.listen();
  defineJobs(ctx);

  app.post(
    '/api/download',
    {
      schema: {
        tags,
        summary: 'Download a URL onto a board',
        description:
          'http(s) only, at most 5 redirects, DOWNLOAD_MAX_BYTES / DOWNLOAD_TIMEOUT_MS limits. The type comes from the bytes and the ' +
          'Content-Type. A web page is handed to yt-dlp when it is installed (one element per image/video of a post), else 415.',
        body: DownloadBody,
        response: {
          200: Downloaded,
          202: queuedOf(JOB_DOWNLOAD),
          ...mediaErrors,
          413: ErrorBody,
          415: ErrorBody,
          502: ErrorBody,
          504: ErrorBody,
        },
      },
    },
    async (req, reply) => {
      const { async: isAsync, ...p } = req.body;
      return answerNowOrQueued(ctx.jobs, reply, isAsync, {
        kind: JOB_DOWNLOAD,
        params: p,
        boardId: p.board_id,
        check: () => {
          parseHttpUrl(p.url);
          ctx.boards.requireBoard(p.board_id);
        },
      });
    },
  );

  app.post(
    '/api/extract-audio',
    {
      schema: {
        tags,
        summary: "Save an element's audio as a new MP3 element",
        body: ElementRefBody,
        response: { 200: NewElement, ...mediaErrors },
      },
    },
    async (req, reply) => extractAudio(ctx, req.body.board_id, req.body.element_id, abortOnDisconnect(reply)),
  );

  app.post(
    '/api/trim-media',
    {
      schema: {
        tags,
        summary: 'Frame-accurate cut of a video or audio element into a new element',
        body: TrimBody,
        response: { 200: NewElement, ...mediaErrors },
      },
    },
    async (req, reply) => trimMedia(ctx, req.body, abortOnDisconnect(reply)),
  );

  app.post(
    '/api/convert-image',
    {
      schema: {
        tags,
        summary: 'Convert (and optionally resize) an image element into a new element',
        description:
          'One of width/height keeps the aspect ratio; both fit the image inside the box. EXIF orientation is applied.',
        body: ConvertImageBody,
        response: { 200: NewElement, ...mediaErrors },
      },
    },
    async (req) => convertImage(ctx, req.body),
  );

  app.post(
    '/api/convert-video',
    {
      schema: {
        tags,
        summary: 'Re-encode a video element into another container/codec as a new element',
        description:
          'Pairs: mp4 with h264, h265, av1; webm with vp9, av1; mov with h264, h265, prores. bitrate like 2M or 800k (50k..500M).',
        body: ConvertVideoBody,
        response: { 200: NewElement, 202: queuedOf(JOB_CONVERT), ...mediaErrors },
      },
    },
    async (req, reply) => {
      const { async: isAsync, ...p } = req.body;
      return answerNowOrQueued(ctx.jobs, reply, isAsync, {
        kind: JOB_CONVERT,
        params: { ...p, sources: elementSources(ctx, p.board_id, [p.element_id]) },
        boardId: p.board_id,
        check: () => {
          validateConvertVideo(p);
          checkVideoElement(ctx, p);
        },
      });
    },
  );

  app.post(
    '/api/concat-videos',
    {
      schema: {
        tags,
        summary: 'Join video elements in order into a new element',
        description:
          'Stream copy when codec, size, frame rate and audio layout match; otherwise normalised to the first clip (letterboxed) and re-encoded.',
        body: ConcatBody,
        response: { 200: NewElement, 202: queuedOf(JOB_CONCAT), ...mediaErrors },
      },
    },
    async (req, reply) => {
      const { async: isAsync, ...p } = req.body;
      return answerNowOrQueued(ctx.jobs, reply, isAsync, {
        kind: JOB_CONCAT,
        params: { ...p, sources: elementSources(ctx, p.board_id, p.element_ids) },
        boardId: p.board_id,
        check: () => checkConcatRequest(ctx, p),
      });
    },
  );

  app.post(
    '/api/find-similar',
    {
      schema: {
        tags,
        summary: 'Images and video key frames on any board that look like this element',
        description:
          'Local perceptual index (DCT pHash + dHash). At most 50 matches, best first, distance <= 32; the element itself is excluded.',
        body: ElementRefBody,
        response: { 200: SimilarMatches, ...mediaErrors },
      },
    },
    async (req) => similarity.findSimilar(req.body.board_id, req.body.element_id),
  );
};
