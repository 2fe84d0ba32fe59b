import type { ChildProcess } from 'node:child_process';
import type { FastifyBaseLogger } from 'fastify';
import { endProcessTree, startProcess } from '../tools/process.js';
import type { PlayerCommand } from './player-command.js';

interface PlaybackQueueOptions {
  player: PlayerCommand;
  /** The WAV file of a sound (written on first use). */
  fileFor(sound: string): Promise<string>;
  /** Sounds that may wait while one plays; more are refused. */
  maxWaiting: number;
  /** A player still running after this long is killed, so one hung player cannot stall every later sound. */
  timeoutMs: number;
  env: NodeJS.ProcessEnv;
  log: FastifyBaseLogger;
}

interface Playing {
  child: ChildProcess;
  exited: Promise<void>;
}

const STDERR_KEEP = 500;
/** Distinct failure messages remembered; beyond this every failure is logged at debug level. */
const MAX_REPORTED = 50;

/** Ends the player and anything it started. */
const kill = (child: ChildProcess) => void endProcessTree(child);

/** Plays sounds one at a time, in the order they were asked for, through the host's player. */
export class PlaybackQueue {
  private readonly waiting: string[] = [];
  private playing: Playing | undefined;
  private pumping = false;
  private closed = false;
  /** Failures already logged at warn level; repeats go to debug so a broken player does not flood the log. */
  private readonly reported = new Set<string>();

  constructor(private readonly o: PlaybackQueueOptions) {}

  /** Queues a sound; false when the queue is full or closed. */
  enqueue(sound: string): boolean {
    if (this.closed || this.waiting.length >= this.o.maxWaiting) return false;
    this.waiting.push(sound);
    void this.pump();
    return true;
  }

  /** Drops the waiting sounds and kills the running player. */
  async close(): Promise<void> {
    this.closed = true;
    this.waiting.length = 0;
    const playing = this.playing;
    if (playing) {
      kill(playing.child);
      await playing.exited;
    }
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (let sound = this.waiting.shift(); sound !== undefined && !this.closed; sound = this.waiting.shift()) {
        let file: string;
        try {
          file = await this.o.fileFor(sound);
        } catch (err) {
          this.o.log.error({ err, sound }, 'could not write the sound file');
          continue;
        }
        if (this.closed) break;
        await this.play(sound, file);
      }
    } finally {
      this.pumping = false;
    }
  }

  private play(sound: string, file: string): Promise<void> {
    const { player } = this.o;
    const child = startProcess(player.program, player.args(file), {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: this.o.env,
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr = (stderr + d).slice(-STDERR_KEEP);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      kill(child);
    }, this.o.timeoutMs);
    // 'exit' rather than 'close': a grandchild that keeps stderr open must not hold up the queue.
    const exited = new Promise<void>((resolve) => {
      child.once('error', (err) => {
        this.report(`${player.name} could not be started: ${err.message}`, { sound });
        resolve();
      });
      child.once('exit', (code, signal) => {
        if (timedOut)
          this.report(`${player.name} did not finish within ${this.o.timeoutMs} ms and was killed`, { sound });
        else if (code !== 0 && !this.closed) {
          this.report(`${player.name} failed (${signal ?? `exit code ${code}`}): ${stderr.trim() || 'no message'}`, {
            sound,
          });
        }
        resolve();
      });
    }).finally(() => {
      clearTimeout(timer);
      if (this.playing?.child === child) this.playing = undefined;
    });
    this.playing = { child, exited };
    return exited;
  }

  private report(message: string, fields: Record<string, unknown>): void {
    const first = !this.reported.has(message) && this.reported.size < MAX_REPORTED;
    if (first) this.reported.add(message);
    if (first) this.o.log.warn(fields, message);
    else this.o.log.debug(fields, message);
  }
}
