import { Type, type Static } from 'typebox';

const NOT_PLAYED_REASONS = ['no_player', 'queue_full'] as const;

const PlayerStatusSchema = Type.Object({
  available: Type.Boolean(),
  name: Type.Optional(Type.String({ description: 'the player program in use' })),
  reason: Type.Optional(Type.String({ description: 'why no player is available' })),
});
export type PlayerStatus = Static<typeof PlayerStatusSchema>;

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
const PlayName = Type.String({
  maxLength: 256,
  description: 'A sound name such as `notice` or `error`; any other name plays `notice`',
});

export const PlayResponse = Type.Object({
  ok: Type.Boolean({ description: 'false when this host has no usable sound player' }),
  sound: Type.String({ description: 'the sound that plays (the default for an unknown name)' }),
  queued: Type.Boolean({ description: 'whether this sound will play' }),
  reason: Type.Optional(Type.Enum(NOT_PLAYED_REASONS, { description: 'why it will not play, when queued is false' })),
});

export const SoundList = Type.Object({
  sounds: Type.Array(
    Type.Object({
      name: Type.String(),
      description: Type.String(),
      duration: Type.Number({ description: 'seconds' }),
      url: Type.String({ description: 'the WAV file, for previews' }),
    }),
  ),
  default: Type.String({ description: 'what unknown names play' }),
  player: PlayerStatusSchema,
});

export type PlayResult = Static<typeof PlayResponse>;

export const SoundParams = Type.Object({ sound: SoundName });
export const PlayParams = Type.Object({ sound: PlayName });
export const PlayBody = Type.Object({ sound: PlayName }, { additionalProperties: false });
export const WavFile = Type.Unsafe<Buffer>({ type: 'string', format: 'binary', description: '16-bit PCM WAV' });
