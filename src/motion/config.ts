import { integer } from '../config-values.js';

export interface MotionConfig {
  /** A motion-editor render that prints nothing for this long is killed (MOTION_RENDER_STALL_SECONDS, default 60). */
  motionRenderStallSeconds: number;
}

/** Motion editor settings from the environment, validated with the rest of the config by loadConfig. */
export function loadMotionConfig(env: NodeJS.ProcessEnv): MotionConfig {
  return {
    motionRenderStallSeconds: integer(env, 'MOTION_RENDER_STALL_SECONDS', 60, 1, 24 * 3600),
  };
}
