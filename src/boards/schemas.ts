import { Type, type Static } from 'typebox';
import { Id } from '../http/schemas.js';

export const ELEMENT_TYPES = ['image', 'video', 'audio', 'html', 'text', 'file'] as const;
export type ElementType = (typeof ELEMENT_TYPES)[number];

/** Types whose element points at a media file that is probed and thumbnailed. */
export const MEDIA_TYPES: readonly ElementType[] = ['image', 'video', 'audio'];

const Opt = Type.Optional;
/**
 * What the service writes into an element's `data` (free-form otherwise): the probe's facts for image, video and
 * audio elements (`probe_status` pending, then done or error), an HTML card's backing file. A client that writes one
 * of these keys itself (PATCH) replaces the service's value until the next probe.
 */
export const ElementData = Type.Object(
  {
    probe_status: Opt(Type.Enum(['pending', 'done', 'error'])),
    probe_error: Opt(Type.Union([Type.String(), Type.Null()])),
    width: Opt(Type.Number({ description: 'pixels (images: as displayed, EXIF orientation applied)' })),
    height: Opt(Type.Number()),
    duration: Opt(Type.Number({ description: 'seconds (video, audio)' })),
    thumbnail_url: Opt(Type.String({ description: 'a JPEG under /media/thumbs/' })),
    format: Opt(Type.String({ description: 'images: jpeg, png, webp, ...' })),
    has_alpha: Opt(Type.Boolean()),
    container: Opt(Type.String()),
    has_audio: Opt(Type.Boolean()),
    has_video: Opt(Type.Boolean()),
    codec: Opt(Type.String()),
    fps: Opt(Type.Number()),
    audio_codec: Opt(Type.String()),
    audio_channels: Opt(Type.Number()),
    sample_rate: Opt(Type.Number()),
    htmlUrl: Opt(Type.String({ description: 'html cards: the backing file' })),
    htmlVersion: Opt(Type.Number({ description: 'html cards: the stored version of the backing file' })),
  },
  { title: 'ElementData', additionalProperties: true },
);

export const ElementSchema = Type.Object(
  {
    id: Type.String(),
    board_id: Type.String(),
    type: Type.Enum(ELEMENT_TYPES),
    url: Type.Union([Type.String(), Type.Null()], {
      description: '/media/<board_id>/<filename>, or null for text elements',
    }),
    name: Type.Union([Type.String(), Type.Null()]),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description: 'free-form; what the service fills in is typed in ElementData',
      // Served as written (a client may store any key), documented with the keys the service fills in.
      'x-document-as': ElementData,
    }),
    x: Type.Number(),
    y: Type.Number(),
    width: Type.Union([Type.Number(), Type.Null()]),
    height: Type.Union([Type.Number(), Type.Null()]),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { title: 'Element' },
);
export type Element = Static<typeof ElementSchema>;

export const BoardSummarySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    created_at: Type.String(),
    updated_at: Type.String(),
    element_count: Type.Integer(),
  },
  { title: 'BoardSummary' },
);
export type BoardSummary = Static<typeof BoardSummarySchema>;

export const BoardSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    created_at: Type.String(),
    updated_at: Type.String(),
    connected_folder: Type.Union([Type.String(), Type.Null()]),
    elements: Type.Array(ElementSchema),
  },
  { title: 'Board' },
);

export const BoardParams = Type.Object({ id: Id });
export const ElementParams = Type.Object({ id: Id, eid: Id });
const ElementTypeSchema = Type.Enum(ELEMENT_TYPES);
const Data = Type.Record(Type.String(), Type.Unknown(), {
  description: 'merged into the stored data, which may hold at most 1 MiB of JSON (a larger result is a 400)',
});
const Coord = Type.Number({ minimum: -1e7, maximum: 1e7 });
const Size = Type.Union([Type.Number({ minimum: 0, maximum: 1e7 }), Type.Null()]);

/** Fields a client may set on an element, shared by POST (plus type and url) and PATCH. */
const EditableElementFields = {
  name: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
  data: Type.Optional(Data),
  x: Type.Optional(Coord),
  y: Type.Optional(Coord),
  width: Type.Optional(Size),
  height: Type.Optional(Size),
};

/** A board without its elements (the answer of create and update). */
export const BoardRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  connected_folder: Type.Union([Type.String(), Type.Null()]),
});

export type Board = Static<typeof BoardRecord>;

export const NewBoardBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);

export const BoardPatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    connected_folder: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 4096 }), Type.Null()])),
  },
  { additionalProperties: false },
);

export const ElementTypeQuery = Type.Object({ type: Type.Optional(ElementTypeSchema) });

export const NewElementBody = Type.Object(
  {
    type: ElementTypeSchema,
    url: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 4096 }), Type.Null()])),
    ...EditableElementFields,
  },
  { additionalProperties: false },
);
export type NewElement = Static<typeof NewElementBody>;

export const ElementPatchBody = Type.Object(EditableElementFields, { additionalProperties: false });
/** A client's patch, or a feature's, which may also point the element at a new file. */
export type ElementPatch = Static<typeof ElementPatchBody> & { url?: string };
