import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** What the recorder writes for each invocation. */
export interface PlayEvent {
  event: 'start' | 'end';
  sound: string;
  pid: number;
  /** Milliseconds since the epoch, sub-millisecond precision. */
  t: number;
  /** On start: the file's size and first four bytes, to prove a complete WAV was handed over. */
  size?: number;
  magic?: string;
}

/**
 * A stand-in for aplay: a Node script that logs each file it is asked to play, with start and end times.
 * Modes: `quick` (plays for 30 ms), `gate` (holds every sound until the gate file exists), `hang-on`
 * (hangs forever on the sound named by its parameter), `hang` (hangs on every sound).
 */
const SCRIPT = `
import fs from 'node:fs';
import path from 'node:path';
const args = process.argv.slice(2);
const file = args.pop();
const [log, mode, param] = args;
const sound = path.basename(file, '.wav');
const now = () => performance.timeOrigin + performance.now();
const write = (e) => fs.appendFileSync(log, JSON.stringify({ ...e, sound, pid: process.pid, t: now() }) + '\\n');
const head = fs.readFileSync(file).subarray(0, 4).toString('latin1');
write({ event: 'start', size: fs.statSync(file).size, magic: head });
const end = () => setTimeout(() => { write({ event: 'end' }); }, 30);
if (mode === 'hang' || (mode === 'hang-on' && sound === param)) setInterval(() => {}, 1000);
else if (mode === 'gate') { const poll = () => (fs.existsSync(param) ? end() : setTimeout(poll, 10)); poll(); }
else end();
`;

export interface Recorder {
  /** The SOUND_PLAYER value: node and the script, quoted (the folder has a space in its name on purpose). */
  command: string;
  dir: string;
  gate: string;
  events(): Promise<PlayEvent[]>;
  open(): Promise<void>;
  remove(): Promise<void>;
}

/** Double quotes for SOUND_PLAYER, escaping what is special inside them. */
const quote = (s: string) => `"${s.replace(/(["\\$`])/g, '\\$1')}"`;

export async function makeRecorder(
  mode: 'quick' | 'gate' | 'hang' | 'hang-on' = 'quick',
  param = '',
): Promise<Recorder> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms sound player '));
  const script = path.join(dir, 'recorder.mjs');
  const log = path.join(dir, 'played.log');
  const gate = path.join(dir, 'gate');
  await fsp.writeFile(script, SCRIPT);
  const extra = mode === 'gate' ? gate : param;
  return {
    command: [process.execPath, script, log, mode, ...(extra ? [extra] : [])].map(quote).join(' '),
    dir,
    gate,
    async events() {
      const text = await fsp.readFile(log, 'utf8').catch(() => '');
      return text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as PlayEvent);
    },
    open: () => fsp.writeFile(gate, ''),
    remove: () => fsp.rm(dir, { recursive: true, force: true }),
  };
}

/** Whether a process is still running. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
