import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import type { Db } from './db/database.js';
import type { MediaRoot } from './files/media-root.js';
import type { JobRunner } from './jobs/runner.js';
import type { Tools } from './tools/locate.js';
import type { ProbeCache } from './tools/probe-cache.js';
import type { BrowserPool } from './tools/browser.js';
import type { BoardService } from './boards/service.js';
import type { BoardEvents } from './boards/events.js';
import type { OutboundHttp } from './net/outbound.js';

/** The Fastify instance every feature registers on: TypeBox schemas give validation, types and OpenAPI at once. */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/**
 * Everything a feature needs, built once per service instance by app.ts and handed to each feature's register().
 * No module-level singletons: tests start several isolated services in one process.
 */
export interface AppContext {
  config: Config;
  db: Db;
  log: FastifyBaseLogger;
  media: MediaRoot;
  tools: Tools;
  /** ffprobe results of the process: what an upload's indexing probed, a media operation or a job reads again. */
  probes: ProbeCache;
  /** The one headless-Chromium pool (started on first use, closed when the service stops). */
  browsers: BrowserPool;
  jobs: JobRunner;
  boards: BoardService;
  events: BoardEvents;
  /** Every fetch of a URL a request named goes through it: the address policy on each connection (src/net). */
  outbound: OutboundHttp;
  /** Work to run when the service stops (close browsers, kill players), after HTTP stops accepting. */
  onClose(fn: () => Promise<void> | void): void;
}

/** A feature plugs into the app with one function. */
export type Feature = (app: App, ctx: AppContext) => void | Promise<void>;
