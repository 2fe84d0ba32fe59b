import { Type, type Static } from 'typebox';
import { EASINGS } from '../timeline/curves.js';

/** Devices the service draws itself (see devices.ts); the spec's enum. */
export const DEVICES = [
  'iphone',
  'iphone-pro-max',
  'ipad',
  'ipad-mini',
  'macbook-air',
  'macbook-pro',
  'imac',
  'double-iphone',
  'browser',
  'grid',
  'no-device',
] as const;
export type Device = (typeof DEVICES)[number];

export const BACKGROUND_MODES = ['gradient', 'solid', 'image', 'transparent'] as const;
export type BackgroundMode = (typeof BACKGROUND_MODES)[number];

export const FORMATS = ['mp4', 'webm', 'mov'] as const;
export type MockupFormat = (typeof FORMATS)[number];
/** Formats whose files can carry an alpha channel (webm as VP9 yuva420p, mov as ProRes 4444). */
export const ALPHA_FORMATS: readonly MockupFormat[] = ['webm', 'mov'];
export const SIZE_PRESETS = ['1080p', 'square', 'vertical', '4k'] as const;

/** Longest mockup, as for HTML renders. */
export const MAX_DURATION_SECONDS = 120;
export const MAX_KEYFRAMES = 500;
/** A saved project's state as JSON, unknown fields included (a larger PUT is a 400). */
export const MAX_PROJECT_BYTES = 512 * 1024;
/** Positions stay in front of the camera, which sits CAMERA_DISTANCE units in front of the z = 0 plane. */
export const MAX_Z = 1500;

/** Options of the project's objects: fields the service does not know are kept, in storage and in answers. */
const OPEN = { additionalProperties: true } as const;

const num = (minimum: number, maximum: number, description?: string) =>
  Type.Number({ minimum, maximum, ...(description ? { description } : {}) });
const Id = Type.String({ minLength: 1, maxLength: 64 });

/** `#rrggbb` or `#rrggbbaa`: a colour is written into the scene's CSS, so nothing but hex digits is accepted. */
export const Color = Type.String({
  pattern: '^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$',
  description: '#rrggbb or #rrggbbaa',
});
/** A board file: `/media/<board_id>/<file>`. */
const MediaUrl = Type.String({
  minLength: 8,
  maxLength: 1000,
  pattern: '^/media/',
  description: 'a file of the board, /media/<board_id>/<file>',
});

const Position = Type.Object(
  {
    x: num(-10000, 10000),
    y: num(-10000, 10000),
    z: num(-20000, MAX_Z, 'toward the viewer is positive (larger on screen)'),
  },
  {
    ...OPEN,
    description: "scene units: 1 unit = 1/1080 of the frame's shorter side; x right, y down, z toward the viewer",
  },
);
const Rotation = Type.Object(
  { x: num(-36000, 36000), y: num(-36000, 36000), z: num(-36000, 36000) },
  { ...OPEN, description: 'degrees about each axis (CSS rotateX/Y/Z, applied x, then y, then z)' },
);
const Scale = Type.Object(
  { x: num(0, 100), y: num(0, 100), z: num(0, 100) },
  { ...OPEN, description: 'factor per axis, 1 = natural size' },
);

export const Transform = Type.Object({ position: Position, rotation: Rotation, scale: Scale }, OPEN);

export const Dof = Type.Object(
  {
    enabled: Type.Boolean(),
    focus_distance: num(
      1,
      100000,
      'distance from the camera in scene units that is sharp; the device at z = 0 is 2000 units away',
    ),
    aperture: num(
      0,
      1000,
      'blur (Gaussian standard deviation, scene units) of a layer infinitely far away; a layer d units from the camera gets aperture x |d - focus_distance| / d',
    ),
  },
  OPEN,
);

export const BackgroundParams = Type.Object(
  {
    from: Type.Optional(Color),
    to: Type.Optional(Color),
    angle: Type.Optional(
      num(-36000, 36000, 'degrees, CSS linear-gradient angle (0 = bottom to top, 90 = left to right)'),
    ),
    color: Type.Optional(Color),
    url: Type.Optional(MediaUrl),
  },
  { ...OPEN, description: 'gradient: from, to, angle; solid: color; image: url (cover-fitted); transparent: none' },
);
export const Background = Type.Object({ mode: Type.Enum(BACKGROUND_MODES), params: BackgroundParams }, OPEN);

export const Keyframe = Type.Object(
  {
    time: num(0, MAX_DURATION_SECONDS, 'seconds from the start'),
    easing: Type.Enum(EASINGS, {
      description: "shapes the segment that starts at this key (the video timeline's easings)",
    }),
    transform: Type.Optional(
      Type.Object(
        {
          position: Type.Optional(Type.Partial(Position, OPEN)),
          rotation: Type.Optional(Type.Partial(Rotation, OPEN)),
          scale: Type.Optional(Type.Partial(Scale, OPEN)),
        },
        OPEN,
      ),
    ),
    dof: Type.Optional(Type.Partial(Dof, OPEN)),
    background: Type.Optional(
      Type.Object({ mode: Type.Optional(Type.Enum(BACKGROUND_MODES)), params: Type.Optional(BackgroundParams) }, OPEN),
    ),
  },
  {
    ...OPEN,
    description: 'sets the values it holds at `time`; each property is interpolated between the keys that set it',
  },
);

const ScreenSource = Type.Union([MediaUrl, Type.Null()], {
  description: 'a board image or video shown on the screen (cover); null shows a dark screen',
});

/** The editable state of a project; PUT takes all of it, unknown fields are kept. */
const stateProps = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  device: Type.Enum(DEVICES),
  screen_source_url: Type.Optional(ScreenSource),
  transform: Transform,
  dof: Dof,
  background: Background,
  keyframes: Type.Array(Keyframe, { maxItems: MAX_KEYFRAMES }),
  duration_seconds: Type.Number({ exclusiveMinimum: 0, maximum: MAX_DURATION_SECONDS }),
};
export const ProjectState = Type.Object(stateProps, OPEN);

export const PutBody = Type.Object(
  { ...stateProps, id: Type.Optional(Type.String({ maxLength: 64, description: 'must match the path when given' })) },
  OPEN,
);

export const Project = Type.Object(
  {
    id: Type.String(),
    ...stateProps,
    screen_source_url: ScreenSource,
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { ...OPEN, title: 'MockupProject' },
);

export const Summary = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    device: Type.Enum(DEVICES),
    updated_at: Type.String({ description: 'ISO 8601, changes on every save' }),
    duration_seconds: Type.Number(),
  },
  { title: 'MockupProjectSummary' },
);

export const CreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  device: Type.Enum(DEVICES),
});

export const RenderBody = Type.Object(
  {
    board_id: Id,
    project_id: Id,
    format: Type.Enum(FORMATS),
    size_preset: Type.Enum(SIZE_PRESETS, {
      description: '1080p 1920x1080, square 1080x1080, vertical 1080x1920, 4k 3840x2160',
    }),
    fps: Type.Integer({ minimum: 1, maximum: 60 }),
    transparent_background: Type.Optional(
      Type.Boolean({ description: 'alpha 0 outside the device and its shadow; webm or mov only', default: false }),
    ),
  },
  { additionalProperties: false },
);

/** The video-project render poll's answer, which the mockup poll follows. */
export const BoardParams = Type.Object({ id: Id });
export const ProjectParams = Type.Object({ id: Id, pid: Id });
export const JobParams = Type.Object({ job_id: Id });

export type TransformT = Static<typeof Transform>;
export type DofT = Static<typeof Dof>;
export type BackgroundT = Static<typeof Background>;
export type KeyframeT = Static<typeof Keyframe>;
export type ProjectStateT = Static<typeof ProjectState>;
export type ProjectT = Static<typeof Project>;
export type SummaryT = Static<typeof Summary>;
export type RenderBodyT = Static<typeof RenderBody>;
export type SizePreset = (typeof SIZE_PRESETS)[number];
