import { Type } from 'typebox';
import type { Feature } from '../context.js';
import { errorResponses } from '../http/schemas.js';
import { Preset, PresetBody, PresetList, PresetParams, type PresetKeyframe } from './schemas.js';
import { CameraPresetStore } from './store.js';

/** Global camera presets, one JSON file each in the media folder's camera-presets/. */
export const registerCameraPresets: Feature = async (app, ctx) => {
  const store = new CameraPresetStore(ctx.media.root, ctx.log);
  const tags = ['camera presets'];

  app.get(
    '/api/camera-presets',
    { schema: { tags, summary: 'Every camera preset, most recently updated first', response: { 200: PresetList } } },
    async () => ({ presets: await store.list() }),
  );

  app.post(
    '/api/camera-presets',
    {
      schema: {
        tags,
        summary: 'Create a preset, or replace the one with the given id (201 created, 200 replaced)',
        body: PresetBody,
        response: { 200: Preset, 201: Preset, ...errorResponses },
      },
    },
    async (req, reply) => {
      const body = req.body;
      const keyframes: PresetKeyframe[] | undefined = body.keyframes?.map((k) => ({
        position: k.position,
        easing: k.easing ?? 'Linear',
        properties: k.properties,
      }));
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
        params: PresetParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (req, reply) => {
      await store.delete(req.params.preset_id);
      return reply.status(204).send(null);
    },
  );
};
