import { Type } from 'typebox';
import type { Feature } from '../context.js';
import { notFound } from '../http/errors.js';
import { errorResponses } from '../http/schemas.js';
import { findSound, SOUNDS } from './catalog.js';
import { PlayBody, PlayParams, PlayResponse, SoundList, SoundParams, WavFile } from './schemas.js';
import { SoundService } from './service.js';

export const registerSounds: Feature = (app, ctx) => {
  const sounds = new SoundService(ctx.config.dataDir, ctx.config.env, ctx.config, ctx.log);
  ctx.onClose(() => sounds.close());
  const tags = ['sounds'];
  const names = SOUNDS.map((s) => s.name).join(', ');

  app.get(
    '/api/sounds',
    { schema: { tags, summary: 'The notification sounds and the host player', response: { 200: SoundList } } },
    async () => {
      const list = sounds.list();
      return { ...list, sounds: list.sounds.map((s) => ({ ...s, url: `/api/sounds/${s.name}.wav` })) };
    },
  );

  app.get(
    '/api/sounds/:sound.wav',
    {
      schema: {
        tags,
        summary: 'The WAV file of a sound (404 for an unknown name: no fallback for an explicit file)',
        params: SoundParams,
        response: { 200: WavFile, 304: Type.Null(), ...errorResponses },
      },
    },
    async (req, reply) => {
      const spec = findSound(req.params.sound);
      if (!spec) throw notFound(`No sound named "${req.params.sound}"; sounds: ${names}`);
      const wav = sounds.library.wav(spec);
      reply.header('etag', wav.etag).header('cache-control', 'no-cache');
      if (req.headers['if-none-match'] === wav.etag) return reply.status(304).send(null);
      return reply.type('audio/wav').send(wav.bytes);
    },
  );

  const playSchema = { tags, response: { 200: PlayResponse, ...errorResponses } };

  app.post(
    '/api/sounds/play',
    {
      schema: {
        ...playSchema,
        summary: 'Play a notification sound on the host (queued; answers at once)',
        body: PlayBody,
      },
    },
    async (req) => sounds.play(req.body.sound),
  );

  app.post(
    '/api/sounds/:sound/play',
    {
      schema: {
        ...playSchema,
        summary: 'Play the named notification sound on the host (queued; answers at once)',
        params: PlayParams,
      },
    },
    async (req) => sounds.play(req.params.sound),
  );
};
