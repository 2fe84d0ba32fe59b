import type { TSchema } from 'typebox';
import type { ElementInitializer } from './boards/service.js';
import type { ElementType } from './boards/schemas.js';
import type { App, AppContext } from './context.js';
import type { AgentService } from './agents/sessions.js';
import type { BridgeService } from './bridge/service.js';
import type { GenerationContext } from './generation/context.js';
import type { MediaRoot } from './files/media-root.js';
import { registerMedia } from './media/routes.js';
import { registerSounds } from './sounds/routes.js';
import { registerBridge } from './bridge/routes.js';
import { registerTimeline } from './timeline/routes.js';
import { registerCameraPresets } from './camera-presets/routes.js';
import { registerHtml, type HtmlParts } from './html/routes.js';
import { HTML_CARD_DATA_KEYS, htmlCardInitializer } from './html/card-html.js';
import { registerMotion } from './motion/routes.js';
import { registerMotionPanel } from './motion-panel/routes.js';
import { registerGeneration } from './generation/routes.js';
import { GENERATION_DATA_KEYS, GenerationJobResult } from './generation/schemas.js';
import { registerAgents } from './agents/routes.js';
import { registerSharing } from './sharing/routes.js';
import { registerMockups } from './mockups/routes.js';
import { registerEvents } from './events/routes.js';
import type { EventsService } from './events/service.js';
import type { JobKind } from './jobs/kinds.js';
import { OutputResult } from './http/schemas.js';
import { FrameResponse, VideoResponse } from './html/schemas.js';
import { Downloaded, NewElement } from './media/schemas.js';
import { ExportResult, PreviewResult, RenderResult as MotionRenderResult } from './motion/schemas.js';
import { ImportAnswer, ShareAnswer } from './sharing/schemas.js';
import { TimelineRenderResult } from './timeline/schemas.js';

/** What features build that the service hands on (tests read in-memory state through it). */
export interface FeatureParts {
  bridge: BridgeService;
  generation: GenerationContext;
  agents: AgentService;
  html: HtmlParts;
  events: EventsService;
}

/**
 * Every feature folder exposes one register function; this is the only place that names them all, in registration
 * order. What one feature builds and another uses (the bridge and generation's providers, for agents; the html
 * feature's cards, renderer and card page) is passed on here, in plain sight.
 */
export async function registerFeatures(app: App, ctx: AppContext): Promise<FeatureParts> {
  // First: its listeners then run before any feature's, so an event a listener causes (a card's first version
  // stored on element-added) reaches the stream after the event that caused it.
  const events = registerEvents(app, ctx);
  await registerMedia(app, ctx);
  await registerSounds(app, ctx);
  const bridge = registerBridge(app, ctx);
  await registerTimeline(app, ctx);
  await registerCameraPresets(app, ctx);
  const html = registerHtml(app, ctx);
  await registerMotion(app, ctx);
  registerMotionPanel(app, ctx, { cardVideos: html.cardVideos });
  const generation = registerGeneration(app, ctx);
  const agents = await registerAgents(app, ctx, { bridge, generation, html });
  registerSharing(app, ctx, { generation, html });
  registerMockups(app, ctx);
  return { bridge, generation, agents, html, events };
}

/** Element types a feature fills in before they are stored, handed to BoardService when app.ts builds it. */
export const elementInitializers = (media: MediaRoot): Partial<Record<ElementType, ElementInitializer>> => ({
  html: htmlCardInitializer(media),
});

/** Element `data` keys that features write and clients may not set. */
export const SERVICE_DATA_KEYS: readonly string[] = [...HTML_CARD_DATA_KEYS, ...GENERATION_DATA_KEYS];

/**
 * The result of each job kind, as GET /api/jobs/{job_id} and the kinds' own polls answer it once complete: the
 * `Job` union of the OpenAPI document (one `<Kind>Job` per kind). A kind without an entry is still served, with an
 * untyped result (the kinds tests and benchmarks define); test/foundation/error-model.test.ts checks every kind the
 * service defines has one.
 */
export const JOB_RESULTS = {
  'html.render': VideoResponse,
  'html.render-frame': FrameResponse,
  'media.convert-video': NewElement,
  'media.concat-videos': NewElement,
  'media.download': Downloaded,
  'timeline.render': TimelineRenderResult,
  'mockups.render': OutputResult,
  'motion.render': MotionRenderResult,
  'motion.preview': PreviewResult,
  'motion.export': ExportResult,
  'generation.poll': GenerationJobResult,
  'sharing.share': ShareAnswer,
  'sharing.reshare': ShareAnswer,
  'sharing.import': ImportAnswer,
} as const satisfies Partial<Record<JobKind, TSchema>>;
