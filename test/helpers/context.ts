import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { buildContext } from '../../src/app.js';
import type { BoardOutputs } from '../../src/boards/outputs.js';
import { loadConfig } from '../../src/config.js';
import type { AppContext } from '../../src/context.js';

export interface TestContext {
  ctx: AppContext;
  outputs: BoardOutputs;
  dataDir: string;
  /** Recovers jobs left by a last run and starts the service's own queue worker (with JOB_QUEUE), as a service does. */
  start(): void;
  /** Stops the jobs and probes, runs the closers, closes the database and removes the folder. */
  close(): Promise<void>;
}

/**
 * The service's context without HTTP, for testing feature logic directly: a temp DATA_DIR, its SQLite database, a
 * silent logger, the real tools, media root, boards, events and job runner (with its files), wired by app.ts's buildContext.
 */
export async function createTestContext(env: Record<string, string | undefined> = {}): Promise<TestContext> {
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-ctx-'));
  const config = loadConfig({
    ...process.env,
    HOST: '127.0.0.1',
    PORT: '0',
    API_TOKEN: '',
    ALLOWED_ORIGINS: '',
    ...env,
    DATA_DIR: dataDir,
  });
  const { ctx, outputs, start, stop } = await buildContext(config, pino({ level: 'silent' }));
  return {
    ctx,
    outputs,
    dataDir,
    start,
    async close() {
      await stop();
      await fsp.rm(dataDir, { recursive: true, force: true });
    },
  };
}
