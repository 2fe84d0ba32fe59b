import type { AddressInfo } from 'node:net';
import { create as contentDisposition } from 'content-disposition';
import type { App, AppContext } from '../context.js';
import type { CardVideos } from '../html/card-video.js';
import { notFound } from '../http/errors.js';
import { errorResponses } from '../http/schemas.js';
import { abortOnDisconnect } from '../http/client-abort.js';
import { downloadToBoard } from '../media/download.js';
import { serveOpenFile } from '../serving/routes.js';
import { openRegularFile } from '../files/media-root.js';
import { SERVICE_VERSION } from '../version.js';
import { listPanelEntries, panelFile } from './elements.js';
import {
  BoardQuery,
  PanelFileParams,
  PanelList,
  PanelStatus,
  ResolvedMedia,
  ResolveMediaBody,
  resolveErrors,
} from './schemas.js';

/** Endpoints the motion editor's extension panel polls and imports through. */
export const registerMotionPanel = (app: App, ctx: AppContext, uses: { cardVideos: CardVideos }): void => {
  const tags = ['motion editor panel'];
  const base = '/api/integrations/motion-editor';

  app.post(
    `${base}/resolve-media`,
    {
      schema: {
        tags,
        summary:
          'Download a URL onto the board through the download pipeline (yt-dlp for pages); the elements are added to the board',
        body: ResolveMediaBody,
        response: { 200: ResolvedMedia, ...resolveErrors },
      },
    },
    async (req, reply) => downloadToBoard(ctx, req.body, { signal: abortOnDisconnect(reply) }),
  );

  app.get(
    `${base}/elements`,
    {
      schema: {
        tags,
        summary:
          'Flat list of the board elements the panel can import: images, videos, and html cards as their rendered video',
        querystring: BoardQuery,
        response: { 200: PanelList, ...errorResponses },
      },
    },
    async (req, reply) => {
      ctx.boards.requireBoard(req.query.board_id);
      return listPanelEntries(ctx, uses.cardVideos, req.query.board_id, abortOnDisconnect(reply));
    },
  );

  app.get(
    `${base}/elements/:eid/download`,
    {
      schema: {
        tags,
        summary:
          'The element file as an attachment named after it (byte ranges, conditional requests); a card streams its video',
        params: PanelFileParams,
        querystring: BoardQuery,
      },
    },
    async (req, reply) => {
      const file = await panelFile(ctx, uses.cardVideos, req.query.board_id, req.params.eid, abortOnDisconnect(reply));
      const opened = openRegularFile(file.path);
      if (!opened) throw notFound(`The file of element ${req.params.eid} is gone`);
      return serveOpenFile(
        req,
        reply,
        { ...opened, path: file.path },
        { 'content-disposition': contentDisposition(file.filename) },
      );
    },
  );

  app.get(
    `${base}/status`,
    { schema: { tags, summary: 'Polled by the panel to find the running service', response: { 200: PanelStatus } } },
    async () => ({
      version: SERVICE_VERSION,
      backend_port: (app.server.address() as AddressInfo | null)?.port ?? ctx.config.port,
      boards_count: ctx.boards.listBoards().length,
    }),
  );
};
