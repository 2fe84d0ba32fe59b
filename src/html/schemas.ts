import { Type, type Static } from 'typebox';
import { ElementSchema } from '../boards/schemas.js';
import { ErrorBody, errorResponses, Id } from '../http/schemas.js';
import { RENDER_LIMITS as L } from './limits.js';

export const renderErrors = { ...errorResponses, 422: ErrorBody, 503: ErrorBody, 504: ErrorBody };

const Html = Type.String({ minLength: 1, maxLength: L.maxHtmlLength, description: 'a full HTML document' });
const Width = Type.Integer({
  minimum: L.minSize,
  maximum: L.maxWidth,
  multipleOf: 2,
  default: 1280,
  description: 'pixels, even',
});
const Height = Type.Integer({
  minimum: L.minSize,
  maximum: L.maxHeight,
  multipleOf: 2,
  default: 720,
  description: 'pixels, even',
});
const Fps = Type.Integer({ minimum: L.minFps, maximum: L.maxFps, default: 30 });
const Title = Type.String({ maxLength: 200, description: 'names the output file' });
const Async = (kind: string, progress: string) =>
  Type.Optional(
    Type.Boolean({
      description:
        `answer 202 {job_id} at once and render as an \`${kind}\` job (GET /api/jobs/{job_id}: progress is the share of ` +
        `${progress}, with an eta; the result is the same body as the synchronous answer)`,
    }),
  );

export const RenderBody = Type.Object(
  {
    html: Html,
    width: Type.Optional(Width),
    height: Type.Optional(Height),
    fps: Type.Optional(Fps),
    duration: Type.Number({ exclusiveMinimum: 0, maximum: L.maxDurationSeconds, description: 'seconds' }),
    format: Type.Optional(Type.Enum(['mp4', 'webm'], { default: 'mp4' })),
    title: Type.Optional(Title),
    board_id: Id,
    async: Async('html.render', 'frames captured'),
  },
  { additionalProperties: false },
);

export const RenderFrameBody = Type.Object(
  {
    html: Html,
    width: Type.Optional(Width),
    height: Type.Optional(Height),
    fps: Type.Optional(Fps),
    frame: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: L.maxFps * L.maxDurationSeconds,
        description: 'frame index; the page shows t = frame / fps seconds. Default 0',
      }),
    ),
    duration: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: L.maxDurationSeconds,
        description: 'when given, frame must lie inside it',
      }),
    ),
    title: Type.Optional(Title),
    board_id: Id,
    async: Async('html.render-frame', 'frames stepped through up to `frame`'),
  },
  { additionalProperties: false },
);

const BlockedRequests = Type.Array(Type.String(), { description: 'URLs the card asked for that the sandbox refused' });

export const VideoResponse = Type.Object(
  {
    type: Type.Literal('video'),
    filename: Type.String(),
    url: Type.String(),
    proxy_url: Type.Optional(Type.String({ description: `H.264, ${L.proxyHeight} px high; only for taller videos` })),
    thumbnail_url: Type.Optional(Type.String()),
    element: ElementSchema,
    frames: Type.Integer(),
    blocked_requests: BlockedRequests,
  },
  { title: 'HtmlRenderResult' },
);

export const FrameResponse = Type.Object(
  {
    type: Type.Literal('image'),
    filename: Type.String(),
    url: Type.String(),
    blocked_requests: BlockedRequests,
  },
  { title: 'HtmlFrameResult' },
);

export const CardParams = Type.Object({ board_id: Id, element_id: Id });
export const VersionParams = Type.Object({
  board_id: Id,
  element_id: Id,
  n: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
});

export const WriteResponse = Type.Object({
  htmlUrl: Type.String(),
  htmlVersion: Type.Integer(),
  element: ElementSchema,
});
export type HtmlWriteResult = Static<typeof WriteResponse>;

export const WriteBody = Type.Object(
  { html: Type.String({ maxLength: L.maxHtmlLength }) },
  { additionalProperties: false },
);
export const VersionHtml = Type.Object({ version: Type.Integer(), html: Type.String() });

const VersionInfo = Type.Object({
  version: Type.Integer(),
  size: Type.Integer(),
  created_at: Type.String(),
  current: Type.Boolean(),
});
export type HtmlVersionInfo = Static<typeof VersionInfo>;

export const VersionList = Type.Object({
  htmlUrl: Type.String(),
  htmlVersion: Type.Integer({ description: 'the current version' }),
  versions: Type.Array(VersionInfo),
});
