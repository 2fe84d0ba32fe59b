import type { AddressInfo } from 'node:net';
import type { FastifyReply } from 'fastify';
import type { App, AppContext, Feature } from '../context.js';
import { badRequest } from '../http/errors.js';
import { errorResponses } from '../http/schemas.js';
import { cardHtml } from './card-html.js';
import { RENDER_LIMITS as L } from './limits.js';
import { frameCount, HtmlRenderer, registerHtmlRenderer } from './render.js';
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
/** Aborts when the client goes away before the answer was sent, so an abandoned render stops. */
function clientGone(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) ac.abort();
  });
  return ac.signal;
}

/** This service's own origins, whose absolute /media URLs a card may use besides relative ones. */
function serviceOrigins(app: App): string[] {
  const address = app.server.address() as AddressInfo | null;
  if (!address || typeof address === 'string') return [];
  return [`http://127.0.0.1:${address.port}`, `http://localhost:${address.port}`, `http://[::1]:${address.port}`];
}

export const registerHtml: Feature = (app: App, ctx: AppContext) => {
  const renderer = new HtmlRenderer(ctx, () => serviceOrigins(app));
  registerHtmlRenderer(ctx, renderer);
  const cards = cardHtml(ctx);
  ctx.events.on('element-added', (element) => cards.keepInitialVersion(element));
  ctx.onClose(() => cards.idle());

  app.post(
    '/api/html/render',
    {
      schema: {
        tags,
        summary: 'Render an HTML card to a video on virtual time',
        description:
          'Frame f shows the page at t = f / fps s. The video (H.264 mp4 or VP9 webm) goes to the board folder, named from `title`, ' +
          `and is added to the board as a video element. A ${L.proxyHeight}p proxy is made for taller videos; the thumbnail is the middle frame.`,
        body: RenderBody,
        response: { 200: VideoResponse, ...renderErrors },
      },
    },
    async (req, reply) => {
      const b = req.body;
      return renderer.renderVideo(
        {
          html: b.html,
          width: b.width ?? 1280,
          height: b.height ?? 720,
          fps: b.fps ?? 30,
          duration: b.duration,
          format: b.format ?? 'mp4',
          title: b.title,
          boardId: b.board_id,
        },
        clientGone(reply),
      );
    },
  );

  app.post(
    '/api/html/render-frame',
    {
      schema: {
        tags,
        summary: 'Render one frame of an HTML card to a PNG',
        description:
          'The same pixels as frame `frame` of a video rendered with the same html, size and fps. The PNG goes to the board folder (not added as an element).',
        body: RenderFrameBody,
        response: { 200: FrameResponse, ...renderErrors },
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
      return renderer.renderFrame(
        {
          html: b.html,
          width: b.width ?? 1280,
          height: b.height ?? 720,
          fps,
          frame,
          title: b.title,
          boardId: b.board_id,
        },
        clientGone(reply),
      );
    },
  );

  app.put(
    '/api/moodboards/:board_id/elements/:element_id/html',
    {
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
};
