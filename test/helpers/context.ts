import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { BoardEvents } from '../../src/boards/events.js';
import { BoardOutputs } from '../../src/boards/outputs.js';
import { MediaProber } from '../../src/boards/probe.js';
import { BoardService } from '../../src/boards/service.js';
import { loadConfig } from '../../src/config.js';
import type { AppContext } from '../../src/context.js';
import { openDatabase } from '../../src/db/database.js';
import { MediaRoot } from '../../src/files/media-root.js';
import { JobRunner } from '../../src/jobs/runner.js';
import { Tools } from '../../src/tools/locate.js';

export interface TestContext {
  ctx: AppContext;
  outputs: BoardOutputs;
  dataDir: string;
  /** Stops the jobs and probes, runs the closers, closes the database and removes the folder. */
  close(): Promise<void>;
}

/**
 * The service's context without HTTP, for testing feature logic directly: a temp DATA_DIR, its SQLite database, a
 * silent logger, the real tools, media root, boards, events and job runner (with its files), wired as app.ts does.
 */
export async function createTestContext(env: Record<string, string | undefined> = {}): Promise<TestContext> {
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-ctx-'));
  const config = loadConfig({ ...process.env, HOST: '127.0.0.1', PORT: '0', API_TOKEN: '', ALLOWED_ORIGINS: '', ...env, DATA_DIR: dataDir });
  const log = pino({ level: 'silent' });
  const db = openDatabase(path.join(dataDir, 'board-media.sqlite'));
  const events = new BoardEvents();
  const boards = new BoardService(db, dataDir, events, log);
  const media = new MediaRoot(dataDir, (id) => boards.folderOf(id));
  boards.attachMedia(media);
  const tools = new Tools(config.env);
  const outputs = new BoardOutputs(media, boards);
  const jobs = new JobRunner(db, config.jobConcurrency, log, { resolve: async (url) => (await media.resolveUrl(url)).path, outputs });
  const prober = new MediaProber(boards, media, tools, events, log);
  boards.probeLater = (el) => prober.enqueue(el);
  const closers: (() => Promise<void> | void)[] = [];
  const ctx: AppContext = { config, db, log, media, tools, jobs, boards, events, onClose: (fn) => closers.push(fn) };
  return {
    ctx,
    outputs,
    dataDir,
    async close() {
      await jobs.shutdown();
      await prober.idle();
      for (const fn of closers) await fn();
      db.close();
      await fsp.rm(dataDir, { recursive: true, force: true });
    },
  };
}
