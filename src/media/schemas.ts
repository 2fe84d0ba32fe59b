import { Type, type Static } from 'typebox';
import { ELEMENT_TYPES } from '../boards/schemas.js';
import { ErrorBody, errorResponses, Id } from '../http/schemas.js';
import { IMAGE_FORMATS } from './convert-image.js';
import { VIDEO_CODECS, VIDEO_FORMATS } from './convert-video.js';

const ElementRef = { board_id: Id, element_id: Id };
/** A time in a media file: a week is far beyond any file the service handles, and keeps the number finite. */
const MAX_MEDIA_SECONDS = 7 * 24 * 3600;
const Async = Type.Optional(
  Type.Boolean({ description: 'answer at once with a job to poll at GET /api/jobs/{job_id}' }),
);

export const NewElement = Type.Object(
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
  {
    title: 'NewElementResult',
    description: 'The element added to the board for the new file (the source is never modified)',
  },
);
export const Downloaded = Type.Object(
  {
    elements: Type.Array(
      Type.Object({
        id: Type.String(),
        type: Type.String(),
        url: Type.String(),
        name: Type.Union([Type.String(), Type.Null()]),
      }),
    ),
  },
  { title: 'DownloadResult' },
);
const Match = Type.Object({
  board_id: Type.String(),
  element_id: Type.String(),
  url: Type.Union([Type.String(), Type.Null()]),
  name: Type.Union([Type.String(), Type.Null()]),
  distance: Type.Integer({ description: 'Hamming distance over pHash + dHash, 0 (same picture) to 128' }),
  score: Type.Number({ description: '1 - distance / 128' }),
});

/** Statuses the media operations answer besides 200 and the usual 400/404. */
export const mediaErrors = { ...errorResponses, 422: ErrorBody, 503: ErrorBody };

export const SimilarMatches = Type.Object({ matches: Type.Array(Match) });

export const ElementRefBody = Type.Object(ElementRef, { additionalProperties: false });

export const DownloadBody = Type.Object(
  { board_id: Id, url: Type.String({ minLength: 1, maxLength: 8192 }), async: Async },
  { additionalProperties: false },
);
export type DownloadParams = Omit<Static<typeof DownloadBody>, 'async'>;

export const TrimBody = Type.Object(
  {
    ...ElementRef,
    start_seconds: Type.Number({ minimum: 0, maximum: MAX_MEDIA_SECONDS }),
    end_seconds: Type.Number({ exclusiveMinimum: 0, maximum: MAX_MEDIA_SECONDS }),
  },
  { additionalProperties: false },
);

export const ConvertImageBody = Type.Object(
  {
    ...ElementRef,
    format: Type.Enum(IMAGE_FORMATS),
    width: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 16384 }), Type.Null()])),
    height: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 16384 }), Type.Null()])),
  },
  { additionalProperties: false },
);
export type ConvertImageRequest = Static<typeof ConvertImageBody>;

export const ConvertVideoBody = Type.Object(
  {
    ...ElementRef,
    format: Type.Enum(VIDEO_FORMATS),
    codec: Type.Enum(VIDEO_CODECS),
    bitrate: Type.Optional(Type.Union([Type.String({ maxLength: 16 }), Type.Null()])),
    async: Async,
  },
  { additionalProperties: false },
);
export type ConvertVideoRequest = Omit<Static<typeof ConvertVideoBody>, 'async'>;

export const ConcatBody = Type.Object(
  { board_id: Id, element_ids: Type.Array(Id, { maxItems: 200 }), async: Async },
  { additionalProperties: false },
);
export type ConcatParams = Omit<Static<typeof ConcatBody>, 'async'>;
