import type { AddressInfo } from 'node:net';
import type { App, AppContext } from '../context.js';
import { badRequest } from '../http/errors.js';
import { answerNowOrQueued } from '../http/now-or-queued.js';
import { errorResponses, queuedOf } from '../http/schemas.js';
import { HtmlCardService } from './card-html.js';
import { CardVideos } from './card-video.js';
import { RENDER_LIMITS as L } from './limits.js';
import { frameCount } from '../render/capture.js';
import {
  HTML_FRAME_JOB,
  HTML_RENDER_JOB,
  renderHtmlFrameJob,
  HtmlRenderer,
  renderHtmlJob,
  type FrameRequest,
  type VideoRequest,
} from './render.js';
import {
  CardParams,
  FrameResponse,
  RenderBody,
  RenderFrameBody,
  renderErrors,
  VersionHtml,
  VersionList,
  VersionParams,
  VideoResponse,
  WriteBody,
  WriteResponse,
} from './schemas.js';

const tags = ['html'];

/** This service's own origins, whose absolute /media URLs a card may use besides relative ones. */
function serviceOrigins(app: App): string[] {
  const address = app.server.address() as AddressInfo | null;
  if (!address || typeof address === 'string') return [];
  return [`http://127.0.0.1:${address.port}`, `http://localhost:${address.port}`, `http://[::1]:${address.port}`];
}

/** What the html feature builds that other features use, handed on by `registerFeatures`. */
export interface HtmlParts {
  /** Card HTML with versions: the agents' `update_element_html` writes through it, sharing reads the versions. */
  cards: HtmlCardService;
  /** The renderer: the agents' card previews. */
  renderer: HtmlRenderer;
  /** Cached card videos: sharing and the motion-editor panel. */
  cardVideos: CardVideos;
}

export const registerHtml = (app: App, ctx: AppContext): HtmlParts => {
  const timeoutMs = ctx.config.htmlRenderTimeoutMs;
  const renderer = (origins: () => string[]) =>
    new HtmlRenderer(ctx.tools, ctx.browsers, ctx.media, ctx.boards, origins, timeoutMs);
  const ownRenderer = renderer(() => serviceOrigins(app));
  const cards = new HtmlCardService(ctx);
  const cardVideos = new CardVideos(
    ctx.media,
    ctx.boards,
    cards,
    renderer(() => []),
  );
  ctx.events.on('element-added', (element) => cards.keepInitialVersion(element));
  ctx.onClose(() => cards.idle());
  // The renders use only their job, so render workers run them too; the renderer files a video's proxy and thumbnail
  // here once the runner committed it.
  ctx.jobs.define(HTML_RENDER_JOB, renderHtmlJob, {
    portable: true,
    result: (committed, data, params, sides) => ownRenderer.jobResult(params, committed, data, sides),
  });
  ctx.jobs.define(HTML_FRAME_JOB, renderHtmlFrameJob, { portable: true });
  /** What a queued render carries of this service (see JobRenderSettings). */
  const settings = () => ({ serviceOrigins: serviceOrigins(app), timeoutMs });

  app.post(
    '/api/html/render',
    {
      bodyLimit: L.maxBodyBytes,
      schema: {
        tags,
        summary: 'Render an HTML card to a video on virtual time',
        description:
          'Frame f shows the page at t = f / fps s. The video (H.264 mp4 or VP9 webm) goes to the board folder, named from `title`, ' +
          `and is added to the board as a video element. A ${L.proxyHeight}p proxy is made for taller videos; the thumbnail is the middle frame. ` +
          'With `async: true` the answer is 202 and the render an `html.render` job (progress = frames done / total).',
        body: RenderBody,
        response: { 200: VideoResponse, 202: queuedOf(HTML_RENDER_JOB), ...renderErrors },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const params: VideoRequest = {
        html: b.html,
        width: b.width ?? 1280,
        height: b.height ?? 720,
        fps: b.fps ?? 30,
        duration: b.duration,
        format: b.format ?? 'mp4',
        title: b.title,
        boardId: b.board_id,
      };
      return answerNowOrQueued(ctx.jobs, reply, b.async, {
        kind: HTML_RENDER_JOB,
        params: { ...params, ...settings() },
        boardId: b.board_id,
        check: () => ownRenderer.check(params),
      });
    },
  );

  app.post(
    '/api/html/render-frame',
    {
      bodyLimit: L.maxBodyBytes,
      schema: {
        tags,
        summary: 'Render one frame of an HTML card to a PNG',
        description:
          'The same pixels as frame `frame` of a video rendered with the same html, size and fps. The PNG goes to the board folder (not added as an element). ' +
          'With `async: true` the answer is 202 and the render an `html.render-frame` job (progress = frames stepped through / frame + 1).',
        body: RenderFrameBody,
        response: { 200: FrameResponse, 202: queuedOf(HTML_FRAME_JOB), ...renderErrors },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const fps = b.fps ?? 30;
      const frame = b.frame ?? 0;
      const last = b.duration !== undefined ? frameCount(fps, b.duration) - 1 : fps * L.maxDurationSeconds - 1;
      if (frame > last) {
        throw badRequest(
          b.duration !== undefined
            ? `frame ${frame} is past the last frame (${last}) of ${b.duration} s at ${fps} fps`
            : `frame ${frame} is past the longest render (${L.maxDurationSeconds} s at ${fps} fps)`,
          { field: 'body.frame', last },
        );
      }
      const params: FrameRequest = {
        html: b.html,
        width: b.width ?? 1280,
        height: b.height ?? 720,
        fps,
        frame,
        title: b.title,
        boardId: b.board_id,
      };
      return answerNowOrQueued(ctx.jobs, reply, b.async, {
        kind: HTML_FRAME_JOB,
        params: { ...params, ...settings() },
        boardId: b.board_id,
        check: () => ownRenderer.check(params),
      });
    },
  );

  app.put(
    '/api/moodboards/:board_id/elements/:element_id/html',
    {
      bodyLimit: L.maxBodyBytes,
      schema: {
        tags,
        summary: "Write an html card's HTML as its next version",
        params: CardParams,
        body: WriteBody,
        response: { 200: WriteResponse, ...errorResponses },
      },
    },
    async (req) => cards.write(req.params.board_id, req.params.element_id, req.body.html),
  );

  app.post(
    '/api/moodboards/:board_id/elements/:element_id/html-changed',
    {
      schema: {
        tags,
        summary: 'Record a direct edit of the backing file as the next version',
        params: CardParams,
        response: { 200: WriteResponse, ...errorResponses },
      },
    },
    async (req) => cards.changed(req.params.board_id, req.params.element_id),
  );

  app.get(
    '/api/moodboards/:board_id/elements/:element_id/html/versions',
    {
      schema: {
        tags,
        summary: "List an html card's versions",
        params: CardParams,
        response: { 200: VersionList, ...errorResponses },
      },
    },
    async (req) => cards.list(req.params.board_id, req.params.element_id),
  );

  app.get(
    '/api/moodboards/:board_id/elements/:element_id/html/versions/:n',
    {
      schema: {
        tags,
        summary: 'The HTML of one version',
        params: VersionParams,
        response: { 200: VersionHtml, ...errorResponses },
      },
    },
    async (req) => cards.read(req.params.board_id, req.params.element_id, req.params.n),
  );

  app.post(
    '/api/moodboards/:board_id/elements/:element_id/html/versions/:n/restore',
    {
      schema: {
        tags,
        summary: 'Write version n back as a new version',
        params: VersionParams,
        response: { 200: WriteResponse, ...errorResponses },
      },
    },
    async (req) => cards.restore(req.params.board_id, req.params.element_id, req.params.n),
  );
  return { cards, renderer: ownRenderer, cardVideos };
};
