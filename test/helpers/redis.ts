import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { eventually, RUN_TS } from './service.js';

/** Where `redis-server` is on PATH, if anywhere. */
export function findRedisServer(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const file = path.join(dir, 'redis-server');
    if (fs.existsSync(file)) return file;
  }
  return undefined;
}

export const REDIS_MISSING =
  'redis-server not found on PATH: the shared-queue tests are skipped (apt-get install redis-server, or run .ci/run, to run them)';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export interface RedisServer {
  url: string;
  /** Stops the server (SIGTERM; its append-only file keeps what it acknowledged) and starts it again on the same port. */
  restart(downMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** A real Redis server on a free loopback port, in a temp folder, with the append-only file on (as a deployment has). */
export async function startRedis(bin: string): Promise<RedisServer> {
  const port = await freePort();
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-redis-'));
  let child: ChildProcess | undefined;
  const launch = async () => {
    child = spawn(
      bin,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child!.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ready to accept connections')) resolve();
      });
      child!.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out}`)));
    });
  };
  const halt = async () => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    await new Promise((resolve) => {
      c.once('exit', resolve);
      c.kill('SIGTERM');
    });
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    async restart(downMs = 500) {
      await halt();
      await new Promise((r) => setTimeout(r, downMs));
      await launch();
    },
    async stop() {
      await halt();
      await fsp.rm(dir, { recursive: true, force: true });
    },
  };
}

export interface WorkerProcess {
  child: ChildProcess;
  /** Everything the worker logged (pino JSON lines and usage errors). */
  output(): string;
  /** Ids of the jobs this worker finished. */
  done(): string[];
  exited: Promise<number | null>;
}

/** Starts `board-media worker` as its own process, as on another machine. */
export function spawnWorker(opts: {
  service: string;
  token: string;
  queue: string;
  dir: string;
  env?: Record<string, string>;
}): WorkerProcess {
  const child = spawn(
    process.execPath,
    [
      ...RUN_TS,
      'src/main.ts',
      'worker',
      '--service',
      opts.service,
      '--token',
      opts.token,
      '--queue',
      opts.queue,
      '--dir',
      opts.dir,
    ],
    { env: { ...process.env, LOG_LEVEL: 'info', ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    done: () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { msg?: string; job?: string })
        .filter((l) => l.msg === 'job done' && l.job)
        .map((l) => l.job!),
    exited,
  };
}

/** Waits until the worker has taken its place on the queue; fails with its output if it exits first. */
export async function workerStarted(w: WorkerProcess): Promise<void> {
  await eventually(
    () => {
      if (w.child.exitCode !== null) throw new Error(`the worker exited: ${w.output()}`);
      return w.output().includes('render worker started') ? true : undefined;
    },
    120_000,
    'the worker to start',
  );
}
