import { integer } from '../config-values.js';

export interface EventsConfig {
  /** Events kept for clients that reconnect with Last-Event-ID (EVENTS_HISTORY, default 1,000). */
  historySize: number;
  /** ... and at most this many bytes of them, the oldest going first (EVENTS_HISTORY_BYTES, default 16 MiB). */
  historyBytes: number;
  /** A comment line on every stream this often (EVENTS_HEARTBEAT_MS, default 15 s). */
  heartbeatMs: number;
  /** A client with more than this written but not yet taken by its socket is dropped (EVENTS_MAX_BUFFER_BYTES, 1 MiB). */
  maxBufferBytes: number;
}

const MiB = 1024 * 1024;

/** The live event stream's settings (docs/events.md), validated with the rest of the config by loadConfig. */
export function loadEventsConfig(env: NodeJS.ProcessEnv): EventsConfig {
  return {
    historySize: integer(env, 'EVENTS_HISTORY', 1000, 0, 100_000),
    historyBytes: integer(env, 'EVENTS_HISTORY_BYTES', 16 * MiB, 0, 1024 * MiB),
    heartbeatMs: integer(env, 'EVENTS_HEARTBEAT_MS', 15_000, 20, 600_000),
    maxBufferBytes: integer(env, 'EVENTS_MAX_BUFFER_BYTES', MiB, 1024, 256 * MiB),
  };
}
