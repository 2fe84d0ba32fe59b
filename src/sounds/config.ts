import { integer } from '../config-values.js';

export interface SoundsConfig {
  /** A sound player still running after this is killed (SOUND_PLAYER_TIMEOUT_MS, default 10 s). */
  soundPlayerTimeoutMs: number;
}

/** Sound settings from the environment, validated with the rest of the config by loadConfig. */
export function loadSoundsConfig(env: NodeJS.ProcessEnv): SoundsConfig {
  return {
    soundPlayerTimeoutMs: integer(env, 'SOUND_PLAYER_TIMEOUT_MS', 10_000, 100, 600_000),
  };
}
