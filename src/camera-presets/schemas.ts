import { Type, type Static } from 'typebox';
import { RecordOf } from '../http/schemas.js';
import { PRESET_EASINGS, PRESET_ID } from './store.js';

const Keyframe = Type.Object({
  position: Type.Number({ minimum: 0, maximum: 100, description: 'percent of the preset duration' }),
  easing: Type.Optional(
    Type.Enum(PRESET_EASINGS, { description: 'shapes the segment starting at this key; Linear when left out' }),
  ),
  properties: RecordOf({ maxLength: 100 }, Type.String({ maxLength: 1000 }), {
    maxProperties: 200,
    description: 'camera property -> value as a string',
  }),
});
const Base = RecordOf({ maxLength: 100 }, Type.Number({ minimum: -1e9, maximum: 1e9 }), {
  maxProperties: 200,
  description: 'un-keyframed camera settings, e.g. camDofEnabled, camAperture',
});

export const Preset = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  duration: Type.Union([Type.Number(), Type.Null()], {
    description: 'seconds; null: the length of what it is applied to',
  }),
  keyframes: Type.Array(Keyframe),
  base: Type.Optional(Base),
  updated_at: Type.String(),
});

export const PresetList = Type.Object({ presets: Type.Array(Preset) });

export const PresetBody = Type.Object({
  id: Type.Optional(
    Type.String({
      pattern: PRESET_ID.source,
      description: 'an existing id replaces that preset; a new one is created under it',
    }),
  ),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 4000 })),
  duration: Type.Optional(Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 3600 }), Type.Null()])),
  keyframes: Type.Optional(Type.Array(Keyframe, { maxItems: 1000 })),
  base: Type.Optional(Base),
});

export const PresetParams = Type.Object({ preset_id: Type.String({ minLength: 1, maxLength: 200 }) });

/** A key as stored: its easing filled in. */
export type PresetKeyframe = Required<Static<typeof Keyframe>>;
export type CameraPreset = Omit<Static<typeof Preset>, 'keyframes'> & { keyframes: PresetKeyframe[] };
export type PresetInput = Omit<Static<typeof PresetBody>, 'keyframes'> & { keyframes?: PresetKeyframe[] };
