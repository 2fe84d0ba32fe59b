import { integer } from '../config-values.js';

export interface AgentsConfig {
  /** A session without any call for this long expires and is freed (AGENT_SESSION_IDLE_SECONDS, default 3600). */
  sessionIdleMs: number;
}

/** Agent settings from the environment, validated with the rest of the config by loadConfig. */
export function loadAgentsConfig(env: NodeJS.ProcessEnv): AgentsConfig {
  return { sessionIdleMs: integer(env, 'AGENT_SESSION_IDLE_SECONDS', 3600, 1, 7 * 24 * 3600) * 1000 };
}
