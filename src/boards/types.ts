import { Type, type Static } from 'typebox';

export const ELEMENT_TYPES = ['image', 'video', 'audio', 'html', 'text', 'file'] as const;
export type ElementType = (typeof ELEMENT_TYPES)[number];

/** Types whose element points at a media file that is probed and thumbnailed. */
export const MEDIA_TYPES: readonly ElementType[] = ['image', 'video', 'audio'];

export const ElementSchema = Type.Object(
  {
    id: Type.String(),
    board_id: Type.String(),
    type: Type.Enum(ELEMENT_TYPES),
    url: Type.Union([Type.String(), Type.Null()], { description: '/media/<board_id>/<filename>, or null for text elements' }),
    name: Type.Union([Type.String(), Type.Null()]),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'free-form; the service adds width, height, duration, codec, thumbnail_url (probe), htmlUrl/htmlVersion (html cards), bridge_origin',
    }),
    x: Type.Number(),
    y: Type.Number(),
    width: Type.Union([Type.Number(), Type.Null()]),
    height: Type.Union([Type.Number(), Type.Null()]),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
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
);
export type BoardSummary = Static<typeof BoardSummarySchema>;

export interface Board {
  id: string;
  name: string;
  connected_folder: string | null;
  created_at: string;
  updated_at: string;
}

export const BoardSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    created_at: Type.String(),
    updated_at: Type.String(),
    connected_folder: Type.Union([Type.String(), Type.Null()]),
    elements: Type.Array(ElementSchema),
  },
);

export interface NewElement {
  type: ElementType;
  url?: string | null;
  name?: string | null;
  data?: Record<string, unknown>;
  x?: number;
  y?: number;
  width?: number | null;
  height?: number | null;
}

export interface ElementPatch {
  name?: string | null;
  url?: string;
  data?: Record<string, unknown>;
  x?: number;
  y?: number;
  width?: number | null;
  height?: number | null;
}
