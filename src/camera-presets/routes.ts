import { Type } from 'typebox';
import type { Feature } from '../context.js';
import { errorResponses } from '../http/schemas.js';
import { CameraPresetStore, PRESET_EASINGS, PRESET_ID, type PresetKeyframe } from './store.js';

const Keyframe = Type.Object({
  position: Type.Number({ minimum: 0, maximum: 100, description: 'percent of the preset duration' }),
  easing: Type.Optional(Type.Enum(PRESET_EASINGS, { description: 'shapes the segment starting at this key; Linear when left out' })),
  properties: Type.Record(Type.String(), Type.String(), { description: 'camera property -> value as a string' }),
});
const Base = Type.Record(Type.String(), Type.Number({ minimum: -1e9, maximum: 1e9 }), { description: 'un-keyframed camera settings, e.g. camDofEnabled, camAperture' });

const Preset = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  duration: Type.Union([Type.Number(), Type.Null()], { description: 'seconds; null: the length of what it is applied to' }),
  keyframes: Type.Array(Keyframe),
  base: Type.Optional(Base),
  updated_at: Type.String(),
});

/** Global camera presets, one JSON file each in the media folder's camera-presets/. */
export const registerCameraPresets: Feature = async (app, ctx) => {
  const store = new CameraPresetStore(ctx.media.root, ctx.log);
  const tags = ['camera presets'];

  app.get(
    '/api/camera-presets',
    { schema: { tags, summary: 'Every camera preset, most recently updated first', response: { 200: Type.Object({ presets: Type.Array(Preset) }) } } },
    async () => ({ presets: await store.list() }),
  );

  app.post(
    '/api/camera-presets',
    {
      schema: {
        tags,
        summary: 'Create a preset, or replace the one with the given id (201 created, 200 replaced)',
        body: Type.Object({
          id: Type.Optional(Type.String({ pattern: PRESET_ID.source, description: 'an existing id replaces that preset; a new one is created under it' })),
          name: Type.String({ minLength: 1, maxLength: 200 }),
          description: Type.Optional(Type.String({ maxLength: 4000 })),
          duration: Type.Optional(Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 3600 }), Type.Null()])),
          keyframes: Type.Optional(Type.Array(Keyframe, { maxItems: 1000 })),
          base: Type.Optional(Base),
        }),
        response: { 200: Preset, 201: Preset, ...errorResponses },
      },
    },
    async (req, reply) => {
      const body = req.body;
      const keyframes: PresetKeyframe[] | undefined = body.keyframes?.map((k) => ({ position: k.position, easing: k.easing ?? 'Linear', properties: k.properties }));
      const { preset, created } = await store.save({ ...body, keyframes });
      return reply.status(created ? 201 : 200).send(preset);
    },
  );

  app.delete(
    '/api/camera-presets/:preset_id',
    {
      schema: {
        tags,
        summary: 'Delete a preset',
        params: Type.Object({ preset_id: Type.String({ minLength: 1, maxLength: 200 }) }),
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (req, reply) => {
      await store.delete(req.params.preset_id);
      return reply.status(204).send(null);
    },
  );
};
