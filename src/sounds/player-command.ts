import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'shell-quote';
import { envVar } from '../tools/locate.js';

/** How to run the host's player for one WAV file. */
export interface PlayerCommand {
  /** Short name for logs and GET /api/sounds: the program's file name. */
  name: string;
  program: string;
  args(file: string): string[];
}

export type PlayerLookup = { found: true; player: PlayerCommand } | { found: false; reason: string };

/** PowerShell string literal: single quotes, with embedded single quotes doubled. */
const psQuote = (s: string) => `'${s.replace(/'/g, "''")}'`;

interface Candidate {
  command: string;
  platforms?: NodeJS.Platform[];
  args(file: string): string[];
}

/** The usual players, in the order they are tried. */
const CANDIDATES: Candidate[] = [
  { command: 'aplay', args: (f) => ['-q', f] },
  { command: 'paplay', args: (f) => [f] },
  { command: 'pw-play', args: (f) => [f] },
  { command: 'afplay', args: (f) => [f] },
  ...['powershell', 'pwsh'].map((command) => ({
    command,
    platforms: ['win32'] as NodeJS.Platform[],
    args: (f: string) => [
      '-NoProfile',
      '-NonInteractive',
      '-Command',
      `(New-Object System.Media.SoundPlayer ${psQuote(f)}).PlaySync()`,
    ],
  })),
];

function isExecutable(file: string, platform: NodeJS.Platform): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    if (platform !== 'win32') fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Absolute path of `command`: as given when it names a file, else the first match on PATH. */
function which(command: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string | undefined {
  if (command.includes('/') || (platform === 'win32' && command.includes('\\'))) {
    const full = path.resolve(command);
    return isExecutable(full, platform) ? full : undefined;
  }
  const exts = platform === 'win32' ? ['.exe', ''] : [''];
  for (const dir of (envVar(env, 'PATH') ?? '').split(path.delimiter).filter(Boolean)) {
    for (const ext of exts) {
      const candidate = path.join(dir, command + ext);
      if (isExecutable(candidate, platform)) return candidate;
    }
  }
  return undefined;
}

/**
 * Splits a SOUND_PLAYER command line into words with shell quoting rules ('...', "...", backslash escapes), without
 * a shell: no variable expansion, no globbing, and operators such as | ; > & are refused rather than half-obeyed.
 */
function splitCommandLine(line: string): string[] | { error: string } {
  const words: string[] = [];
  for (const token of parse(line, (name) => `$${name}`)) {
    if (typeof token === 'string') words.push(token);
    else if ('op' in token && token.op === 'glob') words.push(token.pattern);
    else if ('comment' in token) return { error: `"#${token.comment}" would be a shell comment; quote it` };
    else
      return {
        error: `shell operator "${'op' in token ? token.op : '?'}" is not supported (the command runs without a shell)`,
      };
  }
  return words.length > 0 ? words : { error: 'it is empty' };
}

/**
 * The player for this host: SOUND_PLAYER when set (`none` turns sounds off), else the first of aplay, paplay, pw-play,
 * afplay and (on Windows) PowerShell's SoundPlayer that is on PATH. A SOUND_PLAYER that does not work is reported
 * as no player rather than silently replaced by another one.
 */
export function findPlayer(
  override: string | undefined,
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): PlayerLookup {
  if (override) {
    if (override.toLowerCase() === 'none') return { found: false, reason: 'sounds are turned off (SOUND_PLAYER=none)' };
    const words = splitCommandLine(override);
    if (!Array.isArray(words)) return { found: false, reason: `SOUND_PLAYER cannot be used: ${words.error}` };
    const [command, ...fixed] = words;
    const program = which(command, env, platform);
    if (!program)
      return { found: false, reason: `SOUND_PLAYER program "${command}" was not found or is not executable` };
    return { found: true, player: { name: path.basename(program), program, args: (f) => [...fixed, f] } };
  }
  for (const c of CANDIDATES) {
    if (c.platforms && !c.platforms.includes(platform)) continue;
    const program = which(c.command, env, platform);
    if (program) return { found: true, player: { name: c.command, program, args: c.args } };
  }
  const tried = CANDIDATES.filter((c) => !c.platforms || c.platforms.includes(platform)).map((c) => c.command);
  return {
    found: false,
    reason: `no sound player found on PATH (tried ${tried.join(', ')}); install one or set SOUND_PLAYER`,
  };
}
