import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IPty } from '@lydell/node-pty';
import { quote } from 'shell-quote';
import { hasControlCharacters } from '../ansi.js';
import type { BridgeItem } from '../items.js';
import type { BridgeClient } from './bridge-client.js';
import { ScreenReader } from './screen-reader.js';

/**
 * node-pty, loaded only by the terminal command: an optional dependency whose per-platform package ships the native
 * module prebuilt (nothing compiled at install). On macOS its `spawn-helper` must be executable; node-pty's own
 * prebuilds lost that bit (node-pty#850, `posix_spawnp failed`), so it is set here when missing.
 */
async function loadPty(): Promise<typeof import('@lydell/node-pty')> {
  let pty: typeof import('@lydell/node-pty');
  try {
    pty = await import('@lydell/node-pty');
  } catch (err) {
    throw new Error(
      `the terminal needs the optional package @lydell/node-pty for ${process.platform}-${process.arch}: run \`npm ci\` without --omit=optional (${String(err)})`,
      { cause: err },
    );
  }
  if (process.platform === 'darwin') {
    const pkg = createRequire(import.meta.url).resolve(`@lydell/node-pty-darwin-${process.arch}/package.json`);
    ensureExecutable(path.join(path.dirname(pkg), 'spawn-helper'));
  }
  return pty;
}

/** Adds the execute bits to a file that lacks them (a no-op when it has them or is missing). */
export function ensureExecutable(file: string): void {
  try {
    const mode = fs.statSync(file).mode;
    if ((mode & 0o111) !== 0o111) fs.chmodSync(file, mode | 0o111);
  } catch {
    // missing: node-pty reports it when it spawns
  }
}

interface TerminalSessionOptions {
  bridge: BridgeClient;
  boardId: string;
  command: string;
  args?: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  cols?: number;
  rows?: number;
  /** Output is sent once the terminal has been quiet this long... */
  idleMs?: number;
  /** ...or at the latest this long after the first unsent output. */
  maxDelayMs?: number;
  /** Seconds each to-terminal long poll waits. */
  pollWaitSeconds?: number;
  /** Pause between typing a message and pressing Enter, so full-screen programs do not take the Enter as pasted text. */
  submitDelayMs?: number;
  /** Called with the raw pty output (the CLI mirrors it to its own terminal). */
  onOutput?: (data: string) => void;
  log?: (message: string, err?: unknown) => void;
}

/** The environment variable that tells the program in the terminal its bridge session (for send-media). */
export const SESSION_ENV = 'TERMINAL_BRIDGE_SESSION_ID';

/**
 * The keystrokes for a path item: the shell-quoted path and a space, or null when the path holds control characters.
 * Quoting does not make those safe: the terminal, not the shell, acts on ESC, and a full-screen program takes CR as
 * Enter. The service refuses such paths already; this keeps an older or foreign service from typing one.
 */
export function pathKeystrokes(filePath: string): string | null {
  return hasControlCharacters(filePath) ? null : `${quote([filePath])} `;
}

/**
 * The terminal end of the bridge: runs a command in a pseudo-terminal, arms the bridge for a board and bot, sends
 * what changes on its screen to the chat (batched by idle time with a maximum delay), types what the chat sends, and
 * disarms when the command exits.
 */
export class TerminalSession {
  readonly sessionId = `pty-${crypto.randomBytes(9).toString('base64url')}`;
  /** Resolves with the command's exit code once the bridge is disarmed. */
  readonly exited: Promise<number>;

  private readonly bridge: BridgeClient;
  private readonly reader: ScreenReader;
  private readonly idleMs: number;
  private readonly maxDelayMs: number;
  private readonly log: (message: string, err?: unknown) => void;
  private readonly stopping = new AbortController();
  private proc?: IPty;
  private idleTimer?: NodeJS.Timeout;
  private maxTimer?: NodeJS.Timeout;
  /** Sends and typing each run one after another, in order. */
  private sending: Promise<void> = Promise.resolve();
  private typing: Promise<void> = Promise.resolve();
  private resolveExit!: (code: number) => void;

  constructor(private readonly opts: TerminalSessionOptions) {
    this.bridge = opts.bridge;
    this.idleMs = opts.idleMs ?? 1500;
    this.maxDelayMs = opts.maxDelayMs ?? 5000;
    this.reader = new ScreenReader(opts.cols ?? 120, opts.rows ?? 40);
    this.log = opts.log ?? ((m, err) => process.stderr.write(`[terminal] ${m}${err ? `: ${String(err)}` : ''}\n`));
    this.exited = new Promise((resolve) => (this.resolveExit = resolve));
  }

  /** Arms the bridge, then starts the command. Throws (and starts nothing) when the service refuses to arm. */
  async start(): Promise<void> {
    const pty = await loadPty();
    await this.bridge.session(this.sessionId, this.opts.boardId, true);
    const proc = pty.spawn(this.opts.command, this.opts.args ?? [], {
      name: 'xterm-256color',
      cols: this.opts.cols ?? 120,
      rows: this.opts.rows ?? 40,
      cwd: this.opts.cwd ?? process.cwd(),
      env: { ...(this.opts.env ?? process.env), [SESSION_ENV]: this.sessionId } as Record<string, string>,
    });
    this.proc = proc;
    proc.onData((data) => {
      this.opts.onOutput?.(data);
      this.reader.write(data);
      this.schedule();
    });
    proc.onExit(({ exitCode }) => void this.finish(exitCode));
    void this.receiveLoop();
  }

  /** Keystrokes from the local user (the CLI forwards its stdin here). */
  write(data: string): void {
    this.proc?.write(data);
  }

  resize(cols: number, rows: number): void {
    this.proc?.resize(cols, rows);
    this.reader.resize(cols, rows);
  }

  kill(signal?: string): void {
    this.proc?.kill(signal);
  }

  private schedule(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.flush(), this.idleMs);
    this.maxTimer ??= setTimeout(() => this.flush(), this.maxDelayMs);
  }

  /** Sends what changed on the screen since the last send. */
  private flush(): Promise<void> {
    clearTimeout(this.idleTimer);
    clearTimeout(this.maxTimer);
    this.idleTimer = this.maxTimer = undefined;
    this.sending = this.sending
      .then(async () => {
        const text = await this.reader.read();
        if (text !== '') await this.bridge.toMessenger(text);
      })
      .catch((err) => this.log('sending output to the bridge failed', err));
    return this.sending;
  }

  private async finish(exitCode: number): Promise<void> {
    await this.flush();
    this.stopping.abort();
    try {
      await this.bridge.session(this.sessionId, this.opts.boardId, false);
    } catch (err) {
      this.log('disarming the bridge failed', err);
    }
    this.reader.dispose();
    this.resolveExit(exitCode);
  }

  /** Long-polls to-terminal and types each item into the terminal. */
  private async receiveLoop(): Promise<void> {
    const signal = this.stopping.signal;
    let failures = 0;
    while (!signal.aborted) {
      try {
        const items = await this.bridge.poll('to-terminal', this.opts.pollWaitSeconds ?? 25, signal);
        failures = 0;
        for (const item of items) this.type(item);
      } catch (err) {
        if (signal.aborted) return;
        failures++;
        this.log('polling the service failed', err);
        await sleep(Math.min(30_000, 500 * 2 ** failures), undefined, { signal }).catch(() => {});
      }
    }
  }

  /**
   * Text is typed and submitted with Enter (as one bracketed paste when the program asked for that, so a multi-line
   * message stays one input); a path is typed, shell-quoted, followed by a space and not submitted, so the user's
   * next message (a photo's caption, say) completes the line.
   */
  private type(item: BridgeItem): void {
    this.typing = this.typing
      .then(async () => {
        const proc = this.proc;
        if (!proc) return;
        if (item.kind === 'path' && item.path) {
          const keys = pathKeystrokes(item.path);
          if (keys === null) {
            this.log(`path item ${item.id} holds control characters; not typed`);
            await this.bridge.toMessenger(
              `Not typed into the terminal: the path of ${item.url ?? 'a file'} contains control characters. Rename the file.`,
            );
            return;
          }
          proc.write(keys);
        } else if (item.kind === 'text' && item.text) {
          proc.write(this.reader.bracketedPaste ? `\x1b[200~${item.text}\x1b[201~` : item.text.replace(/\n/g, '\r'));
          await sleep(this.opts.submitDelayMs ?? 100);
          proc.write('\r');
        }
      })
      .catch((err) => this.log(`typing item ${item.id} failed`, err));
  }
}
