import { Cancelled, ToolFailed, Unavailable } from '../errors.js';
import { endProcessTree, startProcess } from '../tools/process.js';

interface AerenderRun {
  binary: string;
  args: string[];
  /** Frames the render will write, to turn PROGRESS frame numbers into a fraction. */
  totalFrames: number;
  /** No output at all for this long means aerender hung: the process tree is killed. */
  stallMs: number;
  signal?: AbortSignal;
  onProgress?: (fraction: number) => void;
}

/** `PROGRESS:  0:00:01:05 (31): 0 Seconds` — a timecode (`;` when drop-frame) then the 1-based frame of the render. */
const PROGRESS_LINE = /(\d+[:;]\d{2}[:;]\d{2}[:;]\d{2})\s+\((\d+)[UL]?\)/;
/** aerender's own errors, errors thrown by our script (prefixed "motion:"), and AE's runtime errors. */
const ERROR_LINE = /(aerender (SYNTAX )?ERROR|Error executing script|Error: motion:|^ERROR:|After Effects error)/i;

/** The command line: the patched startup script reads `-r` (see docs/motion.md). */
export function aerenderArgs(o: {
  project: string;
  comp: string;
  output: string;
  script: string;
  startFrame?: number;
  endFrame?: number;
}): string[] {
  const args = ['-project', o.project, '-comp', o.comp, '-output', o.output, '-r', o.script];
  if (o.startFrame !== undefined) args.push('-s', String(o.startFrame));
  if (o.endFrame !== undefined) args.push('-e', String(o.endFrame));
  return args;
}

/**
 * Runs aerender, following its output: progress from PROGRESS frame lines, errors from its error lines, a stall
 * (no output for `stallMs`) or an abort kills the whole process tree. Resolves with the transcript when it exits 0;
 * checking the output file is the caller's part (exit 0 does not prove a file was written).
 */
export function runAerender(run: AerenderRun): Promise<{ transcript: string }> {
  return new Promise((resolve, reject) => {
    if (run.signal?.aborted) return reject(new Cancelled());
    // endTreeOnExit: whatever aerender left running (AfterFX, aerendercore) goes when it exits, on every OS; helpers
    // that keep running hold the pipes open.
    const child = startProcess(run.binary, run.args, { endTreeOnExit: true });
    let transcript = '';
    const errors: string[] = [];
    let pending = '';
    let killedFor: 'stall' | 'abort' | undefined;
    let stallTimer: NodeJS.Timeout | undefined;
    const kill = (why: 'stall' | 'abort') => {
      if (killedFor || child.pid === undefined) return;
      killedFor = why;
      void endProcessTree(child);
    };
    const armStall = () => {
      clearTimeout(stallTimer);
      stallTimer = setTimeout(() => kill('stall'), run.stallMs);
    };
    const onAbort = () => kill('abort');
    run.signal?.addEventListener('abort', onAbort, { once: true });
    armStall();
    const onData = (d: string) => {
      armStall();
      transcript = (transcript + d).slice(-64_000);
      pending += d;
      const lines = pending.split(/\r?\n|\r/);
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const p = PROGRESS_LINE.exec(line);
        if (p && run.totalFrames > 0) run.onProgress?.(Math.min(1, Number(p[2]) / run.totalFrames));
        if (ERROR_LINE.test(line) && errors.length < 10)
          errors.push(line.replace(/^\s*(PROGRESS|INFO|ERROR|WARNING):\s*/i, '').trim());
      }
    };
    child.stdout!.setEncoding('utf8').on('data', onData);
    child.stderr!.setEncoding('utf8').on('data', onData);
    const done = () => {
      clearTimeout(stallTimer);
      run.signal?.removeEventListener('abort', onAbort);
    };
    child.on('error', (err) => {
      done();
      reject(new Unavailable('motion_editor_missing', `aerender could not be started: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      done();
      if (killedFor === 'abort') return reject(new Cancelled());
      if (killedFor === 'stall') {
        return reject(
          new ToolFailed(
            'render_stalled',
            `aerender printed nothing for ${Math.round(run.stallMs / 1000)} s (MOTION_RENDER_STALL_SECONDS) and was stopped`,
          ),
        );
      }
      if (code === 0) return resolve({ transcript });
      const why = errors.length ? errors.join(' | ') : lastLines(transcript);
      if (/Illegal argument flag: -r/i.test(transcript)) {
        return reject(
          new ToolFailed(
            'startup_script_missing',
            `aerender does not know -r: After Effects' command-line renderer script must be patched once (see docs/motion.md). aerender said: ${why}`,
          ),
        );
      }
      reject(
        new ToolFailed(
          'render_failed',
          `aerender failed (${code !== null ? `exit code ${code}` : `signal ${signal}`}): ${why}`,
        ),
      );
    });
  });
}

function lastLines(text: string): string {
  return (
    text
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter(Boolean)
      .slice(-3)
      .join(' | ') || 'no output'
  );
}
