import { Type, type Static } from 'typebox';
import { ErrorBody, errorResponses, Id, jobOf, queuedOf } from '../http/schemas.js';
import { ElementSchema } from '../boards/schemas.js';
import { PREVIEW_LIMITS as PL } from './preview/limits.js';

/** Request and response schemas of the motion editor (After Effects) endpoints; types derive from them. */

const LAYER_TYPES = ['text', 'footage', 'solid', 'precomp', 'shape', 'camera', 'light', 'null', 'adjustment'] as const;
const FOOTAGE_KINDS = ['file', 'solid', 'placeholder'] as const;
const OUTPUT_FORMATS = ['auto', 'mp4', 'webm', 'mov'] as const;

const Expression = Type.Object({
  property: Type.String({
    description: 'match names from the layer down, joined with ">" (e.g. "ADBE Transform Group>ADBE Position")',
  }),
  expression: Type.String(),
});

const LayerSource = Type.Object({
  id: Type.Integer({ description: 'the project item the layer shows (a footage item or a composition)' }),
  name: Type.String(),
  kind: Type.Enum(['composition', ...FOOTAGE_KINDS]),
  path: Type.Optional(Type.String({ description: 'file path as saved in the project (the machine that saved it)' })),
});

export const InspectedLayer = Type.Object({
  index: Type.Integer({ description: '1-based, as comp.layer(index) in ExtendScript' }),
  id: Type.Integer(),
  name: Type.String({
    description: "as After Effects shows it: an unnamed layer takes its source item's name (a text layer: its text)",
  }),
  named: Type.Boolean({ description: 'false when the layer has no name of its own and shows the name above' }),
  type: Type.Enum(LAYER_TYPES),
  in_point: Type.Number({ description: 'seconds' }),
  out_point: Type.Number({ description: 'seconds' }),
  source: Type.Optional(LayerSource),
  source_text: Type.Optional(
    Type.String({ description: 'text layers: the first text document (AE ends paragraphs with \\r)' }),
  ),
  fonts: Type.Optional(
    Type.Array(Type.String(), { description: 'text layers: PostScript names of the fonts the document lists' }),
  ),
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
  background: Type.Array(Type.Integer({ minimum: 0, maximum: 255 }), {
    minItems: 3,
    maxItems: 3,
    description: '[r, g, b], 0..255',
  }),
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

export const InspectedProject = Type.Object(
  {
    ae_version: Type.String({ description: 'version of After Effects that saved the file, e.g. "22.1x74"' }),
    expression_engine: Type.Union([Type.String(), Type.Null()], {
      description: '"javascript-1.0" or "extendscript"; null in files older than AE 16',
    }),
    compositions: Type.Array(InspectedComposition),
    footage: Type.Array(InspectedFootage),
    editable: Type.Object({
      text: Type.Array(Type.Object({ ...EditableRef, text: Type.String() })),
      media: Type.Array(
        Type.Object({
          ...EditableRef,
          source_id: Type.Integer(),
          source_name: Type.String(),
          kind: Type.Enum(['file', 'placeholder']),
        }),
      ),
      expressions: Type.Array(Type.Object({ ...EditableRef, property: Type.String(), expression: Type.String() })),
    }),
  },
  { title: 'InspectResult' },
);
export type InspectedProject = Static<typeof InspectedProject>;
export type InspectedComposition = Static<typeof InspectedComposition>;
export type InspectedLayer = Static<typeof InspectedLayer>;
export type InspectedFootage = Static<typeof InspectedFootage>;

export const Approximation = Type.Object({
  layer_index: Type.Optional(Type.Integer({ description: 'the layer, 1-based in its composition' })),
  layer: Type.Optional(Type.String({ description: "the layer's name (inside a precomp: the path of names)" })),
  feature: Type.String({ description: 'what is not drawn as After Effects draws it (effect, expression, font, ...)' }),
  detail: Type.String(),
});
export type Approximation = Static<typeof Approximation>;

export const InspectAnswer = Type.Intersect([
  InspectedProject,
  Type.Object({
    installed: Type.Boolean({ description: 'whether aerender was found; render needs it, inspect does not' }),
    approximations: Type.Array(
      Type.Object({
        composition_id: Type.Integer(),
        composition: Type.String(),
        approximations: Type.Array(Approximation, {
          description:
            'what a preview of this composition would not draw as After Effects does, over its whole duration ' +
            '(fonts and footage aside: a preview lists those from the board and machine it runs on); empty: drawn ' +
            'as After Effects draws it, as far as the service knows',
        }),
      }),
      { description: 'per composition, computed without drawing' },
    ),
  }),
]);

export const ProjectRef = Type.Object(
  {
    board_id: Id,
    element_id: Type.Optional(Id),
    url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'a /media URL of an .aep/.aepx file, instead of element_id',
      }),
    ),
  },
  { additionalProperties: false },
);

export const DetectAnswer = Type.Object({
  installed: Type.Boolean(),
  binaryPath: Type.String({ description: 'empty when not installed' }),
  version: Type.String({ description: 'first line of `aerender -version`; empty when not installed' }),
});

// ---- render ----

// Integer first: while query-style coercion applies to a body, a number must not become a layer name.
const LayerRef = Type.Union(
  [Type.Integer({ minimum: 1, maximum: 100_000 }), Type.String({ minLength: 1, maxLength: 255 })],
  {
    description:
      'a layer name (the first layer with that name, as After Effects resolves comp.layer(name)) or a 1-based index in the composition',
  },
);

export const TextEdit = Type.Object(
  {
    layer: LayerRef,
    text: Type.String({ maxLength: 100_000, description: 'new source text; use \\r for a new paragraph as AE does' }),
  },
  { additionalProperties: false },
);
export const MediaEdit = Type.Object(
  {
    layer: LayerRef,
    element_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'an image/video/audio element of the board' }),
    ),
    url: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2048, description: 'a /media URL; give element_id or url' }),
    ),
  },
  { additionalProperties: false },
);
export const ExpressionEdit = Type.Object(
  {
    layer: LayerRef,
    property: Type.String({
      minLength: 1,
      maxLength: 1000,
      description:
        'display or match names from the layer down, nested groups joined with ">" (e.g. "Position", "ADBE Transform Group>ADBE Position", "Effects>Slider Control>Slider")',
    }),
    expression: Type.String({ maxLength: 100_000, description: 'an empty string removes the expression' }),
  },
  { additionalProperties: false },
);
const AddLayer = Type.Object(
  {
    type: Type.Enum(['text', 'media', 'solid']),
    name: Type.String({ minLength: 1, maxLength: 255 }),
    text: Type.Optional(Type.String({ maxLength: 100_000, description: 'text layers: the text (required)' })),
    element_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'media layers: the board element to import (required)' }),
    ),
    color: Type.Optional(
      Type.String({
        pattern: '^#[0-9a-fA-F]{6}$',
        description: 'solid layers: #rrggbb (default black); text layers: fill colour',
      }),
    ),
    position: Type.Optional(
      Type.Array(Type.Number({ minimum: -100_000, maximum: 100_000 }), {
        minItems: 2,
        maxItems: 2,
        description: '[x, y] in composition pixels; default the centre',
      }),
    ),
  },
  { additionalProperties: false },
);
export type TextEdit = Static<typeof TextEdit>;
export type MediaEdit = Static<typeof MediaEdit>;
export type ExpressionEdit = Static<typeof ExpressionEdit>;
type AddLayer = Static<typeof AddLayer>;

export const MAX_EDITS = 500;
const EditInputs = {
  textEdits: Type.Optional(Type.Array(TextEdit, { maxItems: MAX_EDITS })),
  mediaEdits: Type.Optional(Type.Array(MediaEdit, { maxItems: MAX_EDITS })),
  expressionEdits: Type.Optional(Type.Array(ExpressionEdit, { maxItems: MAX_EDITS })),
  addLayers: Type.Optional(Type.Array(AddLayer, { maxItems: MAX_EDITS })),
};

export const PresetInputs = Type.Object(EditInputs, { additionalProperties: false });
export type PresetInputs = Static<typeof PresetInputs>;

export const RenderBody = Type.Object(
  {
    board_id: Id,
    element_id: Type.Optional(Id),
    url: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2048, description: 'a /media URL of the project, instead of element_id' }),
    ),
    composition: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: "default: the preset's, else the project's only composition",
      }),
    ),
    ...EditInputs,
    width: Type.Optional(
      Type.Integer({ minimum: 2, maximum: 16_384, description: "overrides the composition's width" }),
    ),
    height: Type.Optional(Type.Integer({ minimum: 2, maximum: 16_384 })),
    fps: Type.Optional(
      Type.Number({ minimum: 1, maximum: 120, description: "overrides the composition's frame rate" }),
    ),
    start_frame: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000, description: 'aerender -s' })),
    end_frame: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000, description: 'aerender -e (inclusive)' })),
    output_format: Type.Optional(Type.Enum(OUTPUT_FORMATS, { description: 'auto = H.264 mp4; mov = ProRes 422 HQ' })),
    preset_id: Type.Optional(Type.Union([Id, Type.Null()])),
    preset_name: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()])),
  },
  { additionalProperties: false },
);
export type RenderBody = Static<typeof RenderBody>;

export const RenderResult = Type.Object(
  {
    element: ElementSchema,
    url: Type.String({ description: '/media/<board_id>/<file>' }),
  },
  { title: 'MotionRenderResult' },
);

/** The spec's motion render poll ("job status, progress and result") as one job model: the job's fields and `job_id`. */
export const RenderJobAnswer = Type.Object(
  { ...jobOf('motion.render', RenderResult).properties, job_id: Type.String({ description: 'the same as `id`' }) },
  { title: 'MotionRenderStatus' },
);

// ---- presets ----

export const PresetQuery = Type.Object({ board_id: Id, element_id: Id });
export const PresetBody = Type.Object(
  {
    board_id: Id,
    element_id: Id,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    composition: Type.String({ minLength: 1, maxLength: 255 }),
    inputs: PresetInputs,
  },
  { additionalProperties: false },
);
export const Preset = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    composition: Type.String(),
    inputs: PresetInputs,
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { title: 'MotionPreset' },
);
export type Preset = Static<typeof Preset>;

export const renderErrors = { ...errorResponses, 409: ErrorBody, 422: ErrorBody };

/** 202 answer of a motion render: the spec's `{id, status}` (`id` prefixed `motionjob_`) and every 202's fields. */
export const MotionQueued = Type.Object(
  { id: Type.String({ description: 'motionjob_..., the same as `job_id`' }), ...queuedOf('motion.render').properties },
  { title: 'MotionRenderQueued' },
);
export const MotionJobParams = Type.Object({ job_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const PresetList = Type.Array(Preset);
export const PresetParams = Type.Object({ preset_id: Type.String({ minLength: 1, maxLength: 64 }) });

// ---- preview ----

export const PreviewBody = Type.Object(
  {
    ...ProjectRef.properties,
    // Integer first: while query-style coercion applies to a body, an id must not become a name.
    composition: Type.Union(
      [Type.Integer({ minimum: 0, maximum: 2 ** 32 }), Type.String({ minLength: 1, maxLength: 255 })],
      { description: "a composition's name, or its `id` exactly as inspect gives it" },
    ),
    format: Type.Optional(
      Type.Enum(['png', 'mp4', 'webm'], {
        description: 'png (default): one frame at `time`; mp4/webm: a video from `start` for `duration`',
      }),
    ),
    time: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: PL.maxSeconds,
        description:
          'png: seconds of composition time from its first frame, 0 <= time < duration (default 0); the frame drawn is floor(time x fps)',
      }),
    ),
    width: Type.Optional(
      Type.Integer({
        minimum: PL.minSize,
        maximum: PL.maxSize,
        description: 'pixels; alone it scales the output keeping the aspect (even for videos). Default the composition',
      }),
    ),
    height: Type.Optional(
      Type.Integer({
        minimum: PL.minSize,
        maximum: PL.maxSize,
        description: 'pixels; with width: that exact size, the composition fitted inside on its background colour',
      }),
    ),
    fps: Type.Optional(
      Type.Number({
        minimum: PL.minFps,
        maximum: PL.maxFps,
        description: "output frame rate; default the composition's",
      }),
    ),
    start: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: PL.maxSeconds,
        description: 'videos: first second (composition time), default 0',
      }),
    ),
    duration: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: PL.maxSeconds,
        description: "videos: seconds; default the composition's work area, at most 60 s",
      }),
    ),
    textEdits: Type.Optional(Type.Array(TextEdit, { maxItems: MAX_EDITS })),
    mediaEdits: Type.Optional(Type.Array(MediaEdit, { maxItems: MAX_EDITS })),
    add_to_board: Type.Optional(
      Type.Boolean({
        description: 'add the file to the board as an element (default false: only the file is written)',
      }),
    ),
    async: Type.Optional(
      Type.Boolean({
        description:
          'answer 202 {job_id} at once and draw as a `motion.preview` job (GET /api/jobs/{job_id}: progress, eta, cancel; the result is the synchronous answer)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type PreviewBody = Static<typeof PreviewBody>;

export const PreviewResult = Type.Object(
  {
    type: Type.Enum(['image', 'video']),
    filename: Type.String({ description: 'the unique name the file got in the board folder' }),
    url: Type.String({ description: '/media/<board_id>/<file>' }),
    width: Type.Integer(),
    height: Type.Integer(),
    time: Type.Optional(Type.Number({ description: 'png: the time of the frame drawn (floor(time x fps) / fps)' })),
    duration: Type.Optional(Type.Number({ description: 'videos: seconds' })),
    fps: Type.Number(),
    approximations: Type.Array(Approximation, {
      description: 'what the picture does not show as After Effects would; empty: drawn as After Effects draws it',
    }),
    element: Type.Optional(ElementSchema),
  },
  { title: 'PreviewResult' },
);
export type PreviewResult = Static<typeof PreviewResult>;

export const previewErrors = { ...errorResponses, 422: ErrorBody, 503: ErrorBody, 504: ErrorBody };
export const PreviewQueued = queuedOf('motion.preview');

// ---- Lottie export (src/motion/lottie/, docs/lottie.md) ----

export const ExportBody = Type.Object(
  {
    ...ProjectRef.properties,
    composition: PreviewBody.properties.composition,
    format: Type.Optional(
      Type.Enum(['lottie', 'dotlottie'], {
        description:
          'lottie (default): a Lottie .json; dotlottie: a .lottie archive (dotLottie 2.0: manifest, animation, images)',
      }),
    ),
    images: Type.Optional(
      Type.Enum(['embed', 'files'], {
        description:
          'embed (default for lottie): pictures as data URIs in the JSON; files (default for dotlottie, dotlottie only): beside the animation in the archive',
      }),
    ),
    expressions: Type.Optional(
      Type.Enum(['bake', 'keep'], {
        description:
          "bake (default): every expression evaluated by the service's sandbox at every frame and written as keyframes (players without an expression engine show it); keep: the expression text, for lottie-web",
      }),
    ),
    cameras: Type.Optional(
      Type.Boolean({
        description:
          "true: camera layers written as cameras (ty 13: zoom, point of interest), as bodymovin writes them, which skottie and lottie-web's HTML renderer draw but lottie-web's SVG and canvas renderers refuse; default false: as nulls (listed), so every player loads the file",
      }),
    ),
    glyphs: Type.Optional(
      Type.Boolean({
        description:
          "true: the text's glyph outlines in the file (`chars`, from the font file the preview draws with), so players draw it without the font installed (lottie-web's canvas renderer draws text only so); default false: fonts by name",
      }),
    ),
    textEdits: Type.Optional(Type.Array(TextEdit, { maxItems: MAX_EDITS })),
    mediaEdits: Type.Optional(Type.Array(MediaEdit, { maxItems: MAX_EDITS })),
    add_to_board: Type.Optional(
      Type.Boolean({
        description:
          'add the file to the board as a `file` element with data.source "motion-export" (default false: only the file is written)',
      }),
    ),
    async: Type.Optional(
      Type.Boolean({
        description:
          'answer 202 {job_id} at once and write as a `motion.export` job (GET /api/jobs/{job_id}: progress, eta, cancel; the result is the synchronous answer)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ExportBody = Static<typeof ExportBody>;

export const ExportResult = Type.Object({
  filename: Type.String({ description: 'the unique name the file got in the board folder' }),
  url: Type.String({ description: '/media/<board_id>/<file>' }),
  bytes: Type.Integer({ description: "the file's size" }),
  frames: Type.Integer({ description: "the animation's length in frames of the composition's rate (op)" }),
  approximations: Type.Array(Approximation, {
    description: 'what the file does not carry, or carries only in part; empty: nothing known to differ',
  }),
  element: Type.Optional(ElementSchema),
});
export type ExportResult = Static<typeof ExportResult>;
export const ExportQueued = queuedOf('motion.export');
export const exportErrors = { ...errorResponses, 422: ErrorBody };
