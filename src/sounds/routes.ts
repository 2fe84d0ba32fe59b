import { Type } from 'typebox';
import type { Feature } from '../context.js';
import { notFound } from '../http/errors.js';
import { errorResponses } from '../http/schemas.js';
import { findSound, SOUNDS } from './catalog.js';
import { SoundService } from './service.js';

const SoundName = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$',
  description: 'A sound name such as `notice` or `error`; unknown names play `notice`',
});

/**
 * What a play request may name. The spec makes any unknown name fall back to the default sound rather than fail, and
 * the name is only ever looked up in the catalog (never a path), so any string up to a sane length is accepted.
 */
const PlayName = Type.String({ maxLength: 256, description: 'A sound name such as `notice` or `error`; any other name plays `notice`' });

const PlayResponse = Type.Object({
  ok: Type.Boolean({ description: 'false when this host has no usable sound player' }),
  sound: Type.String({ description: 'the sound that plays (the default for an unknown name)' }),
  queued: Type.Boolean({ description: 'whether this sound will play' }),
  reason: Type.Optional(Type.Enum(['no_player', 'queue_full'], { description: 'why it will not play, when queued is false' })),
});

const SoundList = Type.Object({
  sounds: Type.Array(
    Type.Object({
      name: Type.String(),
      description: Type.String(),
      duration: Type.Number({ description: 'seconds' }),
      url: Type.String({ description: 'the WAV file, for previews' }),
    }),
  ),
  default: Type.String({ description: 'what unknown names play' }),
  player: Type.Object({
    available: Type.Boolean(),
    name: Type.Optional(Type.String({ description: 'the player program in use' })),
    reason: Type.Optional(Type.String({ description: 'why no player is available' })),
  }),
});

export const registerSounds: Feature = (app, ctx) => {
  const sounds = new SoundService(ctx.config.dataDir, ctx.config.env, ctx.config.soundPlayerTimeoutMs, ctx.log);
  ctx.onClose(() => sounds.close());
  const tags = ['sounds'];
  const names = SOUNDS.map((s) => s.name).join(', ');

  app.get('/api/sounds', { schema: { tags, summary: 'The notification sounds and the host player', response: { 200: SoundList } } }, async () => {
    const list = sounds.list();
    return { ...list, sounds: list.sounds.map((s) => ({ ...s, url: `/api/sounds/${s.name}.wav` })) };
  });

  app.get(
    '/api/sounds/:sound.wav',
    {
      schema: {
        tags,
        summary: 'The WAV file of a sound (404 for an unknown name: no fallback for an explicit file)',
        params: Type.Object({ sound: SoundName }),
        response: { 200: Type.Unsafe<Buffer>({ type: 'string', format: 'binary', description: '16-bit PCM WAV' }), 304: Type.Null(), ...errorResponses },
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
        body: Type.Object({ sound: PlayName }, { additionalProperties: false }),
      },
    },
    async (req) => sounds.play(req.body.sound),
  );

  app.post(
    '/api/sounds/:sound/play',
    { schema: { ...playSchema, summary: 'Play the named notification sound on the host (queued; answers at once)', params: Type.Object({ sound: PlayName }) } },
    async (req) => sounds.play(req.params.sound),
  );
};
