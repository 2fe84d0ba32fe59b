import { Type, type Static } from 'typebox';
import { ErrorBody, errorResponses, Id } from '../http/schemas.js';

/** Schemas of the motion-editor panel endpoints (the After Effects extension panel talks to these). */

export const ResolveMediaBody = Type.Object(
  {
    board_id: Id,
    url: Type.String({
      minLength: 1,
      maxLength: 8192,
      description: 'an http(s) URL of a media file or a page yt-dlp can read',
    }),
  },
  { additionalProperties: false },
);

export const ResolvedMedia = Type.Object({
  elements: Type.Array(
    Type.Object({
      id: Type.String(),
      type: Type.String(),
      url: Type.String(),
      name: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
});

export const PanelEntry = Type.Object({
  id: Type.String({ description: 'the board element id' }),
  type: Type.Enum(['image', 'video', 'html'], { description: 'html: a card, served as its rendered mp4' }),
  name: Type.String(),
  url: Type.String({ description: '/media URL of the file to import (for a card: its cached video)' }),
  download_url: Type.String({ description: 'the download endpoint (attachment with the file name, byte ranges)' }),
  width: Type.Union([Type.Number(), Type.Null()]),
  height: Type.Union([Type.Number(), Type.Null()]),
  duration: Type.Union([Type.Number(), Type.Null()], { description: 'seconds; null for images' }),
  thumbnail_url: Type.Union([Type.String(), Type.Null()]),
});
export type PanelEntry = Static<typeof PanelEntry>;

export const BoardQuery = Type.Object({ board_id: Id });

export const PanelStatus = Type.Object({
  version: Type.String(),
  backend_port: Type.Integer(),
  boards_count: Type.Integer(),
});

export const resolveErrors = { ...errorResponses, 413: ErrorBody, 415: ErrorBody, 502: ErrorBody, 504: ErrorBody };
export const PanelList = Type.Array(PanelEntry);
export const PanelFileParams = Type.Object({ eid: Id });
