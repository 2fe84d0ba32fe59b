import { Type } from 'typebox';
import type { App, AppContext, Feature } from '../context.js';
import { ELEMENT_TYPES } from '../boards/types.js';
import { ErrorBody, errorResponses } from '../http/errors.js';
import { abortOnDisconnect } from '../http/client-abort.js';
import { answerNowOrQueued } from '../http/now-or-queued.js';
import { checkConcatRequest, concatVideos } from './concat.js';
import { convertImage, IMAGE_FORMATS } from './convert-image.js';
import { checkVideoElement, convertVideo, validateConvertVideo, VIDEO_CODECS, VIDEO_FORMATS, type ConvertVideoRequest } from './convert-video.js';
import { downloadToBoard, parseHttpUrl } from './download.js';
import { extractAudio } from './extract-audio.js';
import { boardIo, elementUrls, jobIo, type MediaContext } from './new-element.js';
import { ProbeCache } from './probe-cache.js';
import { SimilarityService } from './similarity.js';
import { trimMedia } from './trim.js';

const Id = Type.String({ minLength: 1, maxLength: 64 });
const ElementRef = { board_id: Id, element_id: Id };
/** A time in a media file: a week is far beyond any file the service handles, and keeps the number finite. */
const MAX_MEDIA_SECONDS = 7 * 24 * 3600;
const Async = Type.Optional(Type.Boolean({ description: 'answer at once with a job to poll at GET /api/jobs/{job_id}' }));

const NewElement = Type.Object(
  {
    element: Type.Object({
      id: Type.String(),
      type: Type.Enum(ELEMENT_TYPES),
      url: Type.Union([Type.String(), Type.Null()]),
      name: Type.Union([Type.String(), Type.Null()]),
      data: Type.Record(Type.String(), Type.Unknown()),
    }),
    filename: Type.String({ description: 'name of the new file in the board folder' }),
    url: Type.String({ description: '/media/<board_id>/<filename>' }),
  },
  { description: 'The element added to the board for the new file (the source is never modified)' },
);
const Queued = Type.Object(
  { job_id: Type.String(), status: Type.Enum(['queued']) },
  { description: 'With async: true. The job result holds the same body as the synchronous answer.' },
);
const Downloaded = Type.Object({
  elements: Type.Array(Type.Object({ id: Type.String(), type: Type.String(), url: Type.String(), name: Type.Union([Type.String(), Type.Null()]) })),
});
const Match = Type.Object({
  board_id: Type.String(),
  element_id: Type.String(),
  url: Type.Union([Type.String(), Type.Null()]),
  name: Type.Union([Type.String(), Type.Null()]),
  distance: Type.Integer({ description: 'Hamming distance over pHash + dHash, 0 (same picture) to 128' }),
  score: Type.Number({ description: '1 - distance / 128' }),
});

/** Statuses the media operations answer besides 200 and the usual 400/404. */
const mediaErrors = { ...errorResponses, 422: ErrorBody, 503: ErrorBody };

const JOB_CONVERT = 'media.convert-video';
const JOB_CONCAT = 'media.concat-videos';
const JOB_DOWNLOAD = 'media.download';

interface ConcatParams {
  board_id: string;
  element_ids: string[];
}
interface DownloadParams {
  board_id: string;
  url: string;
}

declare module '../jobs/kinds.js' {
  interface JobKinds {
    'media.convert-video': ConvertVideoRequest;
    'media.concat-videos': ConcatParams;
    'media.download': DownloadParams;
  }
}

function defineJobs(ctx: MediaContext): void {
  // Their sources come resolved from the runner and their new file goes back to it (jobIo): the remote-worker seam.
  ctx.jobs.define(JOB_CONVERT, (job) => convertVideo(ctx, job.params, jobIo(ctx, job), { signal: job.signal, onProgress: job.progress }), {
    inputs: (p) => elementUrls(ctx, p.board_id, [p.element_id]),
  });
  ctx.jobs.define(JOB_CONCAT, (job) => concatVideos(ctx, job.params, jobIo(ctx, job), { signal: job.signal, onProgress: job.progress }), {
    inputs: (p) => elementUrls(ctx, p.board_id, p.element_ids),
  });
  ctx.jobs.define(JOB_DOWNLOAD, async (job) => {
    const result = await downloadToBoard(ctx, job.params, { signal: job.signal, onProgress: job.progress });
    return { output_url: result.elements[0]?.url, result };
  });
}

export const registerMedia: Feature = (app: App, appCtx: AppContext) => {
  const tags = ['media'];
  const ctx: MediaContext = { ...appCtx, probes: new ProbeCache(appCtx.tools) };
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
        body: Type.Object({ board_id: Id, url: Type.String({ minLength: 1, maxLength: 8192 }), async: Async }, { additionalProperties: false }),
        response: { 200: Downloaded, 202: Queued, ...mediaErrors, 413: ErrorBody, 415: ErrorBody, 502: ErrorBody, 504: ErrorBody },
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
        run: (signal) => downloadToBoard(ctx, p, { signal }),
      });
    },
  );

  app.post(
    '/api/extract-audio',
    {
      schema: {
        tags,
        summary: "Save an element's audio as a new MP3 element",
        body: Type.Object(ElementRef, { additionalProperties: false }),
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
        body: Type.Object(
          { ...ElementRef, start_seconds: Type.Number({ minimum: 0, maximum: MAX_MEDIA_SECONDS }), end_seconds: Type.Number({ exclusiveMinimum: 0, maximum: MAX_MEDIA_SECONDS }) },
          { additionalProperties: false },
        ),
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
        description: 'One of width/height keeps the aspect ratio; both fit the image inside the box. EXIF orientation is applied.',
        body: Type.Object(
          {
            ...ElementRef,
            format: Type.Enum(IMAGE_FORMATS),
            width: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 16384 }), Type.Null()])),
            height: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 16384 }), Type.Null()])),
          },
          { additionalProperties: false },
        ),
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
        description: 'Pairs: mp4 with h264, h265, av1; webm with vp9, av1; mov with h264, h265, prores. bitrate like 2M or 800k (50k..500M).',
        body: Type.Object(
          {
            ...ElementRef,
            format: Type.Enum(VIDEO_FORMATS),
            codec: Type.Enum(VIDEO_CODECS),
            bitrate: Type.Optional(Type.Union([Type.String({ maxLength: 16 }), Type.Null()])),
            async: Async,
          },
          { additionalProperties: false },
        ),
        response: { 200: NewElement, 202: Queued, ...mediaErrors },
      },
    },
    async (req, reply) => {
      const { async: isAsync, ...p } = req.body;
      return answerNowOrQueued(ctx.jobs, reply, isAsync, {
        kind: JOB_CONVERT,
        params: p,
        boardId: p.board_id,
        check: () => {
          validateConvertVideo(p);
          checkVideoElement(ctx, p);
        },
        run: (signal) => convertVideo(ctx, p, boardIo(ctx), { signal }),
      });
    },
  );

  app.post(
    '/api/concat-videos',
    {
      schema: {
        tags,
        summary: 'Join video elements in order into a new element',
        description: 'Stream copy when codec, size, frame rate and audio layout match; otherwise normalised to the first clip (letterboxed) and re-encoded.',
        body: Type.Object({ board_id: Id, element_ids: Type.Array(Id, { maxItems: 200 }), async: Async }, { additionalProperties: false }),
        response: { 200: NewElement, 202: Queued, ...mediaErrors },
      },
    },
    async (req, reply) => {
      const { async: isAsync, ...p } = req.body;
      return answerNowOrQueued(ctx.jobs, reply, isAsync, {
        kind: JOB_CONCAT,
        params: p,
        boardId: p.board_id,
        check: () => checkConcatRequest(ctx, p),
        run: (signal) => concatVideos(ctx, p, boardIo(ctx), { signal }),
      });
    },
  );

  app.post(
    '/api/find-similar',
    {
      schema: {
        tags,
        summary: 'Images and video key frames on any board that look like this element',
        description: 'Local perceptual index (DCT pHash + dHash). At most 50 matches, best first, distance <= 32; the element itself is excluded.',
        body: Type.Object(ElementRef, { additionalProperties: false }),
        response: { 200: Type.Object({ matches: Type.Array(Match) }), ...mediaErrors },
      },
    },
    async (req) => similarity.findSimilar(req.body.board_id, req.body.element_id),
  );
};
