import type { ElementInitializer } from './boards/service.js';
import type { ElementType } from './boards/schemas.js';
import type { Feature } from './context.js';
import type { MediaRoot } from './files/media-root.js';
import { registerMedia } from './media/routes.js';
import { registerSounds } from './sounds/routes.js';
import { registerBridge } from './bridge/routes.js';
import { registerTimeline } from './timeline/routes.js';
import { registerCameraPresets } from './camera-presets/routes.js';
import { registerHtml } from './html/routes.js';
import { HTML_CARD_DATA_KEYS, htmlCardInitializer } from './html/card-html.js';
import { registerMotion } from './motion/routes.js';
import { registerMotionPanel } from './motion-panel/routes.js';
import { registerGeneration } from './generation/routes.js';
import { GENERATION_DATA_KEYS } from './generation/schemas.js';
import { registerAgents } from './agents/routes.js';
import { registerSharing } from './sharing/routes.js';

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
];

/** Element types a feature fills in before they are stored, handed to BoardService when app.ts builds it. */
export const elementInitializers = (media: MediaRoot): Partial<Record<ElementType, ElementInitializer>> => ({ html: htmlCardInitializer(media) });

/** Element `data` keys that features write and clients may not set. */
export const SERVICE_DATA_KEYS: readonly string[] = [...HTML_CARD_DATA_KEYS, ...GENERATION_DATA_KEYS];
