import { integer } from '../config-values.js';

export interface SoundsConfig {
  /**
   * The player command line (SOUND_PLAYER; `none` turns sounds off, unset means the first usual player on PATH). A
   * value that cannot be used is reported by GET /api/sounds as no player, not refused at start.
   */
  soundPlayer: string | undefined;
  /** A sound player still running after this is killed (SOUND_PLAYER_TIMEOUT_MS, default 10 s). */
  soundPlayerTimeoutMs: number;
}

/** Sound settings from the environment, validated with the rest of the config by loadConfig. */
export function loadSoundsConfig(env: NodeJS.ProcessEnv): SoundsConfig {
  return {
    soundPlayer: env.SOUND_PLAYER?.trim() || undefined,
    soundPlayerTimeoutMs: integer(env, 'SOUND_PLAYER_TIMEOUT_MS', 10_000, 100, 600_000),
  };
}
