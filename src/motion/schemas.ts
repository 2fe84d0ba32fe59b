import { Type, type Static } from 'typebox';

/** Request and response schemas of the motion editor (After Effects) endpoints; types derive from them. */

export const LAYER_TYPES = ['text', 'footage', 'solid', 'precomp', 'shape', 'camera', 'light', 'null', 'adjustment'] as const;
export const FOOTAGE_KINDS = ['file', 'solid', 'placeholder'] as const;
export const OUTPUT_FORMATS = ['auto', 'mp4', 'webm', 'mov'] as const;

const Id = Type.String({ minLength: 1, maxLength: 64 });

export const Expression = Type.Object({
  property: Type.String({ description: 'match names from the layer down, joined with ">" (e.g. "ADBE Transform Group>ADBE Position")' }),
  expression: Type.String(),
});

export const LayerSource = Type.Object({
  id: Type.Integer({ description: 'the project item the layer shows (a footage item or a composition)' }),
  name: Type.String(),
  kind: Type.Enum(['composition', ...FOOTAGE_KINDS]),
  path: Type.Optional(Type.String({ description: 'file path as saved in the project (the machine that saved it)' })),
});

export const InspectedLayer = Type.Object({
  index: Type.Integer({ description: '1-based, as comp.layer(index) in ExtendScript' }),
  id: Type.Integer(),
  name: Type.String({ description: 'as After Effects shows it: an unnamed layer takes its source item name' }),
  type: Type.Enum(LAYER_TYPES),
  in_point: Type.Number({ description: 'seconds' }),
  out_point: Type.Number({ description: 'seconds' }),
  source: Type.Optional(LayerSource),
  source_text: Type.Optional(Type.String({ description: 'text layers: the first text document (AE ends paragraphs with \\r)' })),
  fonts: Type.Optional(Type.Array(Type.String(), { description: 'text layers: PostScript names of the fonts the document lists' })),
  expressions: Type.Array(Expression),
  parent_index: Type.Optional(Type.Integer({ description: 'index of the parent layer' })),
});

export const InspectedComposition = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  width: Type.Integer(),
  height: Type.Integer(),
  frame_rate: Type.Number(),
  duration: Type.Number({ description: 'seconds' }),
  background: Type.Array(Type.Integer({ minimum: 0, maximum: 255 }), { minItems: 3, maxItems: 3, description: '[r, g, b], 0..255' }),
  layers: Type.Array(InspectedLayer),
});

export const InspectedFootage = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  kind: Type.Enum(FOOTAGE_KINDS),
  path: Type.Optional(Type.String()),
  width: Type.Optional(Type.Integer()),
  height: Type.Optional(Type.Integer()),
});

const EditableRef = {
  composition: Type.String(),
  layer_index: Type.Integer(),
  layer: Type.String(),
};

export const InspectedProject = Type.Object({
  ae_version: Type.String({ description: 'version of After Effects that saved the file, e.g. "22.1x74"' }),
  expression_engine: Type.Union([Type.String(), Type.Null()], { description: '"javascript-1.0" or "extendscript"; null in files older than AE 16' }),
  compositions: Type.Array(InspectedComposition),
  footage: Type.Array(InspectedFootage),
  editable: Type.Object({
    text: Type.Array(Type.Object({ ...EditableRef, text: Type.String() })),
    media: Type.Array(Type.Object({ ...EditableRef, source_id: Type.Integer(), source_name: Type.String(), kind: Type.Enum(['file', 'placeholder']) })),
    expressions: Type.Array(Type.Object({ ...EditableRef, property: Type.String(), expression: Type.String() })),
  }),
});
export type InspectedProject = Static<typeof InspectedProject>;
export type InspectedComposition = Static<typeof InspectedComposition>;
export type InspectedLayer = Static<typeof InspectedLayer>;
export type InspectedFootage = Static<typeof InspectedFootage>;

export const InspectAnswer = Type.Intersect([
  InspectedProject,
  Type.Object({ installed: Type.Boolean({ description: 'whether aerender was found; render needs it, inspect does not' }) }),
]);

export const ProjectRef = Type.Object(
  {
    board_id: Id,
    element_id: Type.Optional(Id),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'a /media URL of an .aep/.aepx file, instead of element_id' })),
  },
  { additionalProperties: false },
);

export const DetectAnswer = Type.Object({
  installed: Type.Boolean(),
  binaryPath: Type.String({ description: 'empty when not installed' }),
  version: Type.String({ description: 'first line of `aerender -version`; empty when not installed' }),
});
