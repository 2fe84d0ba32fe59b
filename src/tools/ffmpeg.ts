import { Cancelled, TimedOut, ToolFailed, ToolUnavailable } from '../errors.js';
import type { Tools } from './locate.js';
import { endProcessTree, startProcess } from './process.js';

export interface FfmpegProgress {
  /** 0..1 when the expected output duration is known. */
  fraction?: number;
  /** Seconds of output written so far. */
  outTimeSeconds: number;
  /** Encoding speed relative to realtime, as ffmpeg reports it. */
  speed?: number;
}

export interface RunOptions {
  /** Aborting kills ffmpeg (client went away, job cancelled). */
  signal?: AbortSignal;
  /** Wall-clock limit; ffmpeg is killed and the run fails with a 504-style error after it. Default 30 minutes. */
  timeoutMs?: number;
  /** Expected duration of the output, to turn ffmpeg's position into a fraction. */
  durationSeconds?: number;
  onProgress?: (p: FfmpegProgress) => void;
  /** Data written to ffmpeg's stdin (for example frames piped from a browser); when absent stdin is closed. */
  stdin?: 'pipe';
  /** Further pipes into the program, at file descriptors 3, 4, ... (`pipe:3` for ffmpeg). */
  inputs?: number;
  onSpawn?: (stdin: NodeJS.WritableStream | null, inputs: NodeJS.WritableStream[]) => void;
  /** The program's environment (the service's own when absent). */
  env?: NodeJS.ProcessEnv;
}

/** The last lines of ffmpeg's stderr that explain a failure, without the banner. */
function explain(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(
      (l) =>
        l &&
        !/^(ffmpeg version|built with|configuration:|lib[a-z]+ +\d|Input #|Output #|Stream #|Duration:|Metadata:| {2})/.test(
          l,
        ),
    );
  return lines.slice(-4).join(' | ') || 'ffmpeg failed';
}

/**
 * Runs ffmpeg with the located binary, streaming (`-progress pipe:1`), enforcing a time limit, killing the process
 * when the signal aborts, and turning a failure into a ToolFailed ('ffmpeg_failed') with ffmpeg's own reason.
 * The caller's args must not include `-progress`/`-nostats`; `-y` is never added, outputs go to fresh temp paths.
 */
export async function runFfmpeg(tools: Tools, args: string[], opts: RunOptions = {}): Promise<void> {
  const ffmpeg = await tools.require('ffmpeg');
  const fullArgs = ['-hide_banner', '-nostdin', '-nostats', '-progress', 'pipe:1', ...args];
  if (opts.stdin === 'pipe') fullArgs.splice(fullArgs.indexOf('-nostdin'), 1);
  await runProcess(ffmpeg.path, fullArgs, opts, 'ffmpeg');
}

export function runProcess(file: string, args: string[], opts: RunOptions, label: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(new Cancelled(`${label} was cancelled`, 'aborted'));
    const child = startProcess(file, args, {
      env: opts.env,
      stdio: [
        opts.stdin === 'pipe' ? 'pipe' : 'ignore',
        'pipe',
        'pipe',
        ...Array.from({ length: opts.inputs ?? 0 }, () => 'pipe' as const),
      ],
    });
    opts.onSpawn?.(
      child.stdin,
      child.stdio.slice(3).map((s) => s as NodeJS.WritableStream),
    );
    let stderr = '';
    let killedFor: 'abort' | 'timeout' | undefined;
    const kill = (why: 'abort' | 'timeout') => {
      killedFor = why;
      void endProcessTree(child);
    };
    const onAbort = () => kill('abort');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    // setTimeout fires at once for delays past 2^31-1 ms (about 24.8 days), so longer limits are clamped.
    const timer = setTimeout(() => kill('timeout'), Math.min(opts.timeoutMs ?? 30 * 60_000, 2 ** 31 - 1));
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (d: string) => {
      stderr = (stderr + d).slice(-16_000);
    });
    let pending = '';
    let speed: number | undefined;
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => {
      pending += d;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const [key, value] = line.split('=');
        if (key === 'speed') speed = Number.parseFloat(value) || undefined;
        if (key === 'out_time_us' || key === 'out_time_ms') {
          // Both keys carry microseconds (out_time_ms is misnamed in ffmpeg).
          const us = Number(value);
          if (!Number.isFinite(us) || us < 0) continue;
          const outTimeSeconds = us / 1e6;
          const fraction = opts.durationSeconds ? Math.min(1, outTimeSeconds / opts.durationSeconds) : undefined;
          opts.onProgress?.({ fraction, outTimeSeconds, speed });
        }
      }
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      reject(new ToolUnavailable(`${label} could not be started: ${err.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (killedFor === 'abort') return reject(new Cancelled(`${label} was cancelled`, 'aborted'));
      if (killedFor === 'timeout') return reject(new TimedOut(`${label} took longer than its time limit`));
      if (code === 0) return resolve();
      reject(new ToolFailed(`${label}_failed`, `${label} failed: ${explain(stderr)}`));
    });
  });
}
