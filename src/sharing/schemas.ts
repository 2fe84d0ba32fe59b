import { Type, type Static } from 'typebox';
import { ErrorBody, errorResponses, RecordOf } from '../http/schemas.js';
import { ELEMENT_TYPES } from '../boards/schemas.js';

/** A file of a shared page: `media/<hash>[-suffix].<ext>` or `cards/<hash>.html`. */
export const SHARED_PATH = '^(media|cards)/[0-9a-f]{32}(-w[0-9]{1,5}|-poster)?\\.[a-z0-9]{1,5}$';
const SharedPath = Type.String({ pattern: SHARED_PATH, maxLength: 64 });
const Coord = Type.Number({ minimum: -1e7, maximum: 1e7 });
const Size = Type.Union([Type.Number({ minimum: 0, maximum: 1e7 }), Type.Null()]);
const Pixels = Type.Integer({ minimum: 1, maximum: 100_000 });

const SharedElementSchema = Type.Object({
  id: Type.String({ maxLength: 64 }),
  type: Type.Enum(ELEMENT_TYPES),
  name: Type.Union([Type.String({ maxLength: 1000 }), Type.Null()]),
  x: Coord,
  y: Coord,
  width: Size,
  height: Size,
  data: RecordOf({ maxLength: 200 }, Type.Unknown()),
  /** The element's own file (image, video, audio, file). */
  file: Type.Optional(
    Type.Object({
      path: SharedPath,
      size: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
      sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
      name: Type.String({ minLength: 1, maxLength: 255 }),
    }),
  ),
  media: Type.Optional(
    Type.Object({ width: Pixels, height: Pixels, duration: Type.Optional(Type.Number({ minimum: 0, maximum: 1e7 })) }),
  ),
  thumbs: Type.Optional(Type.Array(Type.Object({ width: Pixels, height: Pixels, path: SharedPath }), { maxItems: 8 })),
  poster: Type.Optional(SharedPath),
  /** html cards: the current version's document and its rendered video. */
  html: Type.Optional(Type.Object({ path: SharedPath, version: Type.Integer({ minimum: 1, maximum: 1e9 }) })),
  video: Type.Optional(
    Type.Object({
      path: SharedPath,
      width: Pixels,
      height: Pixels,
      duration: Type.Number({ minimum: 0, maximum: 1e7 }),
    }),
  ),
  /** With include_history: every version of an html card. */
  history: Type.Optional(
    Type.Array(
      Type.Object({
        version: Type.Integer({ minimum: 1, maximum: 1e9 }),
        created_at: Type.String({ maxLength: 40 }),
        path: SharedPath,
      }),
      {
        maxItems: 10_000,
      },
    ),
  ),
});
export type SharedElement = Static<typeof SharedElementSchema>;

/** With include_history: one generation request made on the board (the generation feature's history). */
const SharedGeneration = Type.Object({
  model: Type.String({ maxLength: 200 }),
  provider: Type.String({ maxLength: 64 }),
  kind: Type.String({ maxLength: 32 }),
  prompt: Type.String({ maxLength: 100_000 }),
  negative_prompt: Type.Union([Type.String({ maxLength: 100_000 }), Type.Null()]),
  aspect_ratio: Type.Union([Type.String({ maxLength: 16 }), Type.Null()]),
  params: RecordOf({ maxLength: 200 }, Type.Unknown()),
  status: Type.String({ maxLength: 32 }),
  cost_estimate: Type.Number({ minimum: 0, maximum: 1e9 }),
  element_id: Type.Union([Type.String({ maxLength: 64 }), Type.Null()]),
  created_at: Type.String({ maxLength: 40 }),
  finished_at: Type.Union([Type.String({ maxLength: 40 }), Type.Null()]),
});

/** board.json of a shared page: what the page shows and what an import reads. */
export const BoardJsonSchema = Type.Object({
  format: Type.Literal('board-share'),
  version: Type.Literal(1),
  board: Type.Object({ name: Type.String({ maxLength: 1000 }) }),
  cover: Type.Union([SharedPath, Type.Null()]),
  elements: Type.Array(SharedElementSchema, { maxItems: 10_000 }),
  generations: Type.Optional(Type.Array(SharedGeneration, { maxItems: 100_000 })),
});
export type BoardJson = Static<typeof BoardJsonSchema>;

export const BoardParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

const Async = Type.Optional(
  Type.Boolean({ description: 'answer 202 {job_id} at once and run as a job (poll /api/jobs/{job_id})' }),
);

export const ShareBody = Type.Object(
  {
    kind: Type.Enum(['live', 'archive']),
    include_history: Type.Optional(
      Type.Boolean({
        default: false,
        description: "add html card versions and the board's generation history to board.json",
      }),
    ),
    async: Async,
  },
  { additionalProperties: false },
);

export const ReshareBody = Type.Object(
  {
    include_history: Type.Optional(Type.Boolean({ description: 'default: what the share was created with' })),
    async: Async,
  },
  { additionalProperties: false },
);

export const ShareAnswer = Type.Object(
  {
    share_id: Type.String(),
    kind: Type.Enum(['live', 'archive']),
    url: Type.Union([Type.String(), Type.Null()], { description: 'live: the public page' }),
    download_url: Type.Union([Type.String(), Type.Null()], {
      description: 'archive: /media/share-archive-<share_id>.zip; live: null',
    }),
    files: Type.Integer({ description: 'files of the page' }),
    uploaded: Type.Optional(Type.Integer({ description: 'live: files sent to the worker by this call' })),
    skipped: Type.Optional(Type.Integer({ description: 'live: files already there with the same content' })),
    bytes_uploaded: Type.Optional(Type.Integer()),
  },
  { title: 'ShareResult' },
);
export type ShareAnswerT = Static<typeof ShareAnswer>;

/** A share as the live event stream announces it (`share.updated`), at each change of its state. */
export const ShareStateSchema = Type.Object({
  share_id: Type.String(),
  board_id: Type.String(),
  kind: Type.Enum(['live', 'archive']),
  state: Type.Enum(['uploading', 'complete', 'failed', 'deleted'], {
    description:
      'live: `uploading` while the page is sent, then `complete` (or `failed`: a later POST resumes it); `deleted` once it is gone',
  }),
  url: Type.Union([Type.String(), Type.Null()], { description: 'live: the public page' }),
  download_url: Type.Union([Type.String(), Type.Null()], { description: 'archive: the ZIP under /media' }),
  updated_at: Type.String(),
});
export type ShareState = Static<typeof ShareStateSchema>;

export const ImportBody = Type.Object(
  {
    from_url: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2048, description: 'a live share URL (http or https)' }),
    ),
    from_zip: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2048, description: 'a /media URL of an uploaded share archive' }),
    ),
    mode: Type.Enum(['replace', 'append', 'new-board']),
    async: Async,
  },
  { additionalProperties: false },
);
export type ImportBodyT = Static<typeof ImportBody>;

export const ImportAnswer = Type.Object(
  {
    board_id: Type.String({ description: 'the board imported into (the new board for new-board)' }),
    mode: Type.Enum(['replace', 'append', 'new-board']),
    imported: Type.Integer({ description: 'elements added' }),
  },
  { title: 'ImportResult' },
);
export type ImportAnswerT = Static<typeof ImportAnswer>;

export const shareErrors = { ...errorResponses, 409: ErrorBody, 413: ErrorBody, 502: ErrorBody, 503: ErrorBody };
export const Unshared = Type.Object({
  share_id: Type.String(),
  deleted: Type.Integer({ description: 'objects removed' }),
});
