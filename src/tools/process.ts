import { execFile, spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { removeRetrying } from '../files/retry.js';

/**
 * The one way the service starts a program. Every child:
 * - gets no console window on Windows (`windowsHide`);
 * - leads a process group of its own on POSIX, so ending it ends whatever it started (signals go to `-pid`); on
 *   Windows, which has neither groups nor SIGTERM, `taskkill /T /F` ends the tree;
 * - ends, tree and all, when its AbortSignal aborts;
 * - is recorded until it exits, so that `endAllProcesses` (the serve command's shutdown, and the parent-exit option)
 *   leaves no child behind. The record is of this OS process's children, which is process-wide by nature: a test
 *   service's stop() ends its own work through its signals and never touches another service's children.
 */
export interface StartOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Default: stdin ignored, stdout and stderr piped. */
  stdio?: StdioOptions;
  /** Aborting ends the whole process tree. */
  signal?: AbortSignal;
  /**
   * Also end what the program left running when it exits by itself (aerender's helpers keep running and hold its
   * pipes open). On POSIX that is its group; on Windows the processes whose parent it was.
   */
  endTreeOnExit?: boolean;
  /** Folders removed (with retries) once the program has exited, and at shutdown: a browser's temp profile. */
  tempDirs?: string[];
}

interface Tracked {
  child: ChildProcess;
  tempDirs: string[];
  exited: Promise<void>;
}

const live = new Map<number, Tracked>();
const isWindows = () => process.platform === 'win32';

/**
 * Starts `file` with `args` (never through a shell), see the module's comment. A JavaScript file (`.js`, `.mjs`,
 * `.cjs`) is run by this Node: a tool written in JavaScript, such as the tests' stand-ins, runs alike on every OS
 * (Windows starts neither `#!` scripts nor, without a shell, `.cmd` files).
 */
export function startProcess(file: string, args: readonly string[], opts: StartOptions = {}): ChildProcess {
  const script = /\.[cm]?js$/i.test(file);
  const child = spawn(script ? process.execPath : file, script ? [file, ...args] : args, {
    cwd: opts.cwd,
    env: opts.env,
    stdio: opts.stdio ?? ['ignore', 'pipe', 'pipe'],
    windowsHide: true,
    detached: !isWindows(),
  });
  track(child, opts);
  return child;
}

/**
 * Takes a child that a library started (puppeteer's browser) into the record, so that shutdown ends it and removes
 * its temp folders. It must lead its own group on POSIX (puppeteer starts browsers detached there).
 */
export function adoptProcess(child: ChildProcess | null | undefined, opts: Pick<StartOptions, 'tempDirs'> = {}): void {
  if (child) track(child, opts);
}

function track(child: ChildProcess, opts: StartOptions): void {
  const pid = child.pid;
  const onAbort = () => void endProcessTree(child);
  if (opts.signal?.aborted) queueMicrotask(onAbort);
  else opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (pid === undefined) {
    // It did not start ('error' follows); nothing to record.
    child.once('error', () => opts.signal?.removeEventListener('abort', onAbort));
    return;
  }
  const tempDirs = opts.tempDirs ?? [];
  const exited = new Promise<void>((resolve) => {
    const done = () => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (opts.endTreeOnExit) void endProcessTree(pid, { leaderGone: true });
      live.delete(pid);
      void Promise.all(tempDirs.map((d) => removeRetrying(d).catch(() => undefined))).then(() => resolve());
    };
    if (child.exitCode !== null || child.signalCode !== null) done();
    else child.once('exit', done);
  });
  live.set(pid, { child, tempDirs, exited });
}

/**
 * Ends a process and everything it started: SIGKILL to its group on POSIX, `taskkill /T /F` on Windows. With
 * `leaderGone` (it has exited already) Windows looks its orphans up by their parent id, since /T starts from a live
 * process. Resolves once the kill was sent (on Windows, once taskkill has run).
 */
export function endProcessTree(
  target: ChildProcess | number | null | undefined,
  o: { leaderGone?: boolean } = {},
): Promise<void> {
  const pid = typeof target === 'number' ? target : target?.pid;
  // Never 0 or less: kill(0) and kill(-1) reach this process's own group, or every process it may signal.
  if (pid === undefined || !Number.isInteger(pid) || pid <= 0) return Promise.resolve();
  if (!isWindows()) {
    // Once the leader is gone (and reaped) its pid may belong to another process: only its group is signalled then.
    for (const id of o.leaderGone ? [-pid] : [-pid, pid]) {
      try {
        process.kill(id, 'SIGKILL');
      } catch {
        // no such group (not a leader, or already gone)
      }
    }
    return Promise.resolve();
  }
  const [file, args] = windowsTreeKill(pid, !!o.leaderGone);
  return new Promise((resolve) => execFile(file, args, { windowsHide: true, timeout: 30_000 }, () => resolve()));
}

/** The Windows command that ends `pid`'s tree (or, once it is gone, its children's trees). */
export function windowsTreeKill(pid: number, leaderGone: boolean): [string, string[]] {
  if (!leaderGone) return ['taskkill', ['/pid', String(pid), '/T', '/F']];
  const script =
    `Get-CimInstance Win32_Process -Filter 'ParentProcessId=${pid}' | ` +
    'ForEach-Object { taskkill /pid $_.ProcessId /T /F | Out-Null }';
  return ['powershell.exe', ['-NoProfile', '-NonInteractive', '-Command', script]];
}

/** Pids of the children started or adopted that have not exited yet. */
export function liveProcesses(): number[] {
  return [...live.keys()];
}

/**
 * Ends every recorded child, tree and all, and waits (at most `waitMs`) for them to exit and their temp folders to
 * be removed. The serve command's shutdown calls it after the service stopped; so does the parent-exit option.
 */
export async function endAllProcesses(waitMs = 10_000): Promise<void> {
  const all = [...live.values()];
  await Promise.all(all.map((t) => endProcessTree(t.child)));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(all.map((t) => t.exited)),
    new Promise((resolve) => (timer = setTimeout(resolve, waitMs))),
  ]);
  clearTimeout(timer);
}

export interface RunFileResult {
  stdout: string;
  stderr: string;
}

/**
 * Runs a program to its end and answers its output (execFile's job), through `startProcess`: a time limit or an
 * abort ends its tree. Rejects with an Error carrying `code` (exit code), `stderr` and `killed` when it fails.
 */
export function runFile(
  file: string,
  args: readonly string[],
  opts: { timeoutMs?: number; signal?: AbortSignal; env?: NodeJS.ProcessEnv; maxBuffer?: number } = {},
): Promise<RunFileResult> {
  return new Promise((resolve, reject) => {
    const maxBuffer = opts.maxBuffer ?? 1024 * 1024;
    const limit = new AbortController();
    const signal = opts.signal ? AbortSignal.any([opts.signal, limit.signal]) : limit.signal;
    let child: ChildProcess;
    try {
      child = startProcess(file, args, { env: opts.env, signal });
    } catch (err) {
      return reject(err as Error);
    }
    let stdout = '';
    let stderr = '';
    let why: string | undefined;
    const timer =
      opts.timeoutMs === undefined
        ? undefined
        : setTimeout(() => stop('timed out'), Math.min(opts.timeoutMs, 2 ** 31 - 1));
    function stop(reason: string) {
      why ??= reason;
      limit.abort();
    }
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (stdout.length > maxBuffer) stop('printed more than its output limit');
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr = (stderr + d).slice(-maxBuffer);
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signalName) => {
      clearTimeout(timer);
      if (code === 0 && !why) return resolve({ stdout, stderr });
      why ??= opts.signal?.aborted ? 'was cancelled' : undefined;
      const err = Object.assign(
        new Error(
          `${file} ${why ?? `failed (${signalName ?? `exit code ${code}`})`}: ${stderr.trim().split('\n').pop() ?? ''}`,
        ),
        { code, stderr, killed: why !== undefined },
      );
      reject(err);
    });
  });
}
