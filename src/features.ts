import type { Feature } from './context.js';
import { registerMedia } from './media/routes.js';
import { registerSounds } from './sounds/routes.js';
import { registerBridge } from './bridge/routes.js';
import { registerTimeline } from './timeline/routes.js';
import { registerCameraPresets } from './camera-presets/routes.js';
import { registerHtml } from './html/routes.js';
import { registerMotion } from './motion/routes.js';
import { registerMotionPanel } from './motion-panel/routes.js';
import { registerGeneration } from './generation/routes.js';
import { registerAgents } from './agents/routes.js';
import { registerSharing } from './sharing/routes.js';
import { registerMockups } from './mockups/routes.js';

/**
 * Every feature folder exposes one register function; this list is the only place that names them all.
 * Order matters only where a feature reuses another's logic at register time.
 */
export const FEATURES: Feature[] = [
  registerMedia,
  registerSounds,
  registerBridge,
  registerTimeline,
  registerCameraPresets,
  registerHtml,
  registerMotion,
  registerMotionPanel,
  registerGeneration,
  registerAgents,
  registerSharing,
  registerMockups,
];
