import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { ToolMissing } from '../errors.js';
import { runFile } from './process.js';

const require = createRequire(import.meta.url);

export type ToolName = 'ffmpeg' | 'ffprobe' | 'chromium' | 'ytdlp' | 'aerender';

export interface ToolInfo {
  name: ToolName;
  found: boolean;
  path?: string;
  /** env: from the *_PATH variable; system: PATH or a usual install location; npm: shipped inside an npm package */
  source?: 'env' | 'system' | 'npm';
  version?: string;
  /** What to install, when it is missing. */
  hint?: string;
}

/**
 * What discovery reads of the machine, so that tests run it against a fake file system of each OS. The real one is
 * `machineHost(env)`.
 */
export interface Host {
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  home: string;
  isExecutable(file: string): boolean;
  /** Names in a folder ([] when it cannot be read). */
  readdir(dir: string): string[];
}

interface ToolSpec {
  env: string;
  /** Absolute paths tried before PATH (installs that are usually not on PATH but preferred when present). */
  preferred?: (host: Host) => string[];
  commands: string[];
  usual: (host: Host) => string[];
  npm?: () => Promise<string | undefined>;
  versionArgs: string[];
  hint: string;
}

const pathOf = (host: Host) => (host.platform === 'win32' ? path.win32 : path.posix);

/** An environment variable by name in any case: Windows environments often spell PATH `Path`. */
export function envVar(env: NodeJS.ProcessEnv, name: string): string | undefined {
  if (env[name] !== undefined) return env[name];
  const key = Object.keys(env).find((k) => k.toUpperCase() === name.toUpperCase());
  return key === undefined ? undefined : env[key];
}

/** `<each of Program Files, Program Files (x86), LocalAppData>\<inside>` that is set. */
const programFiles = (host: Host, inside: string) =>
  ['ProgramFiles', 'ProgramFiles(x86)', 'LOCALAPPDATA']
    .map((v) => envVar(host.env, v))
    .filter((d): d is string => !!d)
    .map((d) => path.win32.join(d, inside));

/**
 * Where package managers put a command on Windows and macOS, for a service started by a desktop app whose PATH was
 * set before the install: winget's links (per user, per machine) and its package folders (`Gyan.FFmpeg_...\ffmpeg-7.1-
 * full_build\bin\ffmpeg.exe`, newest first), Scoop's shims, Chocolatey's bin; Homebrew (Apple silicon, Intel) and
 * MacPorts on macOS.
 */
function packageManagerInstalls(host: Host, command: string, wingetIds: string[] = []): string[] {
  const p = pathOf(host);
  if (host.platform === 'darwin')
    return ['/opt/homebrew/bin', '/usr/local/bin', '/opt/local/bin'].map((d) => p.join(d, command));
  if (host.platform !== 'win32') return ['/usr/bin', '/usr/local/bin'].map((d) => p.join(d, command));
  const exe = `${command}.exe`;
  const local = envVar(host.env, 'LOCALAPPDATA');
  const found: string[] = [];
  if (local) {
    found.push(p.join(local, 'Microsoft', 'WinGet', 'Links', exe));
    const packages = p.join(local, 'Microsoft', 'WinGet', 'Packages');
    for (const pkg of host.readdir(packages).filter((n) => wingetIds.some((id) => n.startsWith(`${id}_`)))) {
      // A package folder holds one build folder (`ffmpeg-7.1-full_build`); names sort by version, newest last.
      for (const build of host.readdir(p.join(packages, pkg)).sort().reverse())
        found.push(p.join(packages, pkg, build, 'bin', exe), p.join(packages, pkg, build, exe));
    }
  }
  const programs = envVar(host.env, 'ProgramFiles');
  if (programs) found.push(p.join(programs, 'WinGet', 'Links', exe));
  found.push(p.join(host.home, 'scoop', 'shims', exe));
  const choco = envVar(host.env, 'ChocolateyInstall') ?? 'C:\\ProgramData\\chocolatey';
  found.push(p.join(choco, 'bin', exe));
  return found;
}

/**
 * Chrome for Testing's headless shells that @puppeteer/browsers installed into puppeteer's cache
 * (`<cache>/chrome-headless-shell/<platform>-<version>/chrome-headless-shell-<platform>/chrome-headless-shell`),
 * newest version first.
 */
function chromeForTestingShells(host: Host): string[] {
  const p = pathOf(host);
  const cache = p.join(
    host.env.PUPPETEER_CACHE_DIR || p.join(host.home, '.cache', 'puppeteer'),
    'chrome-headless-shell',
  );
  const exe = host.platform === 'win32' ? 'chrome-headless-shell.exe' : 'chrome-headless-shell';
  const version = (dir: string) => (dir.split('-').pop() ?? '').split('.').map(Number);
  const newer = (a: string, b: string) => {
    const [va, vb] = [version(a), version(b)];
    for (let i = 0; i < Math.max(va.length, vb.length); i++)
      if ((va[i] ?? 0) !== (vb[i] ?? 0)) return (vb[i] ?? 0) - (va[i] ?? 0);
    return 0;
  };
  return host
    .readdir(cache)
    .sort(newer)
    .flatMap((v) => host.readdir(p.join(cache, v)).map((d) => p.join(cache, v, d, exe)));
}

/**
 * Chrome, Chromium and Microsoft Edge (a Chromium, on every Windows machine) where their installers put them,
 * including Homebrew's casks (/Applications) and winget's (the installers' own folders); Chrome first.
 */
function browserInstalls(host: Host): string[] {
  if (host.platform === 'win32') {
    return [
      ...programFiles(host, 'Google\\Chrome\\Application\\chrome.exe'),
      ...programFiles(host, 'Chromium\\Application\\chrome.exe'),
      ...programFiles(host, 'Microsoft\\Edge\\Application\\msedge.exe'),
    ];
  }
  if (host.platform === 'darwin') {
    const apps = [
      'Google Chrome.app/Contents/MacOS/Google Chrome',
      'Chromium.app/Contents/MacOS/Chromium',
      'Microsoft Edge.app/Contents/MacOS/Microsoft Edge',
    ];
    return apps.flatMap((a) => [`/Applications/${a}`, path.posix.join(host.home, 'Applications', a)]);
  }
  return [
    '/usr/bin/chromium-headless-shell',
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome',
    '/opt/google/chrome/chrome',
    '/snap/bin/chromium',
    '/usr/bin/microsoft-edge',
    '/opt/microsoft/msedge/msedge',
  ];
}

const SPECS: Record<ToolName, ToolSpec> = {
  ffmpeg: {
    env: 'FFMPEG_PATH',
    commands: ['ffmpeg'],
    usual: (host) => packageManagerInstalls(host, 'ffmpeg', ['Gyan.FFmpeg', 'BtbN.FFmpeg']),
    npm: async () => (require('@ffmpeg-installer/ffmpeg') as { path: string }).path,
    versionArgs: ['-version'],
    hint: 'ffmpeg was not found: install a current one (`winget install Gyan.FFmpeg`, `brew install ffmpeg`, `apt-get install ffmpeg`), run `npm ci` (ships an older build in @ffmpeg-installer/ffmpeg), or set FFMPEG_PATH',
  },
  ffprobe: {
    env: 'FFPROBE_PATH',
    commands: ['ffprobe'],
    usual: (host) => packageManagerInstalls(host, 'ffprobe', ['Gyan.FFmpeg', 'BtbN.FFmpeg']),
    npm: async () => (require('@ffprobe-installer/ffprobe') as { path: string }).path,
    versionArgs: ['-version'],
    hint: 'ffprobe was not found: install ffmpeg (`winget install Gyan.FFmpeg`, `brew install ffmpeg`, `apt-get install ffmpeg`), run `npm ci` (ships it in @ffprobe-installer/ffprobe), or set FFPROBE_PATH',
  },
  chromium: {
    env: 'CHROMIUM_PATH',
    // Headless-shell builds first: they render under begin-frame control (see BrowserPool), about twice as fast.
    preferred: chromeForTestingShells,
    commands: [
      'chromium-headless-shell',
      'chrome-headless-shell',
      'chromium',
      'chromium-browser',
      'google-chrome',
      'google-chrome-stable',
      'microsoft-edge',
      'msedge',
    ],
    usual: browserInstalls,
    npm: async () => {
      if (process.platform !== 'linux' || process.arch !== 'x64') return undefined;
      const mod = (await import('@sparticuz/chromium')) as unknown as {
        default: { executablePath(): Promise<string> };
      };
      return mod.default.executablePath();
    },
    versionArgs: ['--version'],
    hint: 'Chromium was not found: install Chrome, Chromium or Microsoft Edge (`apt-get install chromium`, `brew install --cask chromium`), run `npm ci` (ships it in @sparticuz/chromium on Linux x64), or set CHROMIUM_PATH',
  },
  ytdlp: {
    env: 'YTDLP_PATH',
    commands: ['yt-dlp'],
    usual: (host) => packageManagerInstalls(host, 'yt-dlp', ['yt-dlp.yt-dlp']),
    versionArgs: ['--version'],
    hint: 'yt-dlp was not found: install it (`winget install yt-dlp.yt-dlp`, `brew install yt-dlp`, `apt-get install yt-dlp`) or set YTDLP_PATH',
  },
  aerender: {
    env: 'AERENDER_PATH',
    // The install folders, newest version first, come before PATH: a versioned install beats a stray link on PATH.
    preferred: (host) =>
      host.platform === 'darwin'
        ? afterEffectsInstalls(['/Applications'], ['aerender'], host)
        : host.platform === 'win32'
          ? afterEffectsInstalls(programFiles(host, 'Adobe'), ['Support Files', 'aerender.exe'], host)
          : [],
    commands: ['aerender'],
    usual: () => [],
    versionArgs: ['-version'],
    hint: 'The motion editor (aerender) was not found: install it or set AERENDER_PATH',
  },
};

/**
 * `<parent>/Adobe After Effects <version>/<...inside>` for every install folder found, newest version first
 * ("2025" before "2024" before "CC 2019"; a folder without a number, such as a beta, comes last).
 */
export function afterEffectsInstalls(
  parents: string[],
  inside: string[],
  host: Host = machineHost(process.env),
): string[] {
  const p = pathOf(host);
  const found: { file: string; version: number[] }[] = [];
  for (const parent of parents) {
    for (const name of host.readdir(parent)) {
      if (!/^Adobe After Effects\b/i.test(name)) continue;
      const version = (name.match(/\d+(?:\.\d+)*/g) ?? []).pop()?.split('.').map(Number) ?? [];
      found.push({ file: p.join(parent, name, ...inside), version });
    }
  }
  const cmp = (a: number[], b: number[]) => {
    for (let i = 0; i < Math.max(a.length, b.length); i++)
      if ((a[i] ?? -1) !== (b[i] ?? -1)) return (b[i] ?? -1) - (a[i] ?? -1);
    return 0;
  };
  return found.sort((a, b) => cmp(a.version, b.version)).map((f) => f.file);
}

/** This machine, seen through `env`. */
export function machineHost(env: NodeJS.ProcessEnv): Host {
  return {
    platform: process.platform,
    env,
    home: os.homedir(),
    isExecutable(file) {
      try {
        const st = fs.statSync(file);
        if (!st.isFile()) return false;
        if (process.platform !== 'win32') fs.accessSync(file, fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    },
    readdir(dir) {
      try {
        return fs.readdirSync(dir);
      } catch {
        return [];
      }
    },
  };
}

function onPath(command: string, host: Host): string | undefined {
  const p = pathOf(host);
  const win = host.platform === 'win32';
  const exts = win
    ? [
        ...(envVar(host.env, 'PATHEXT') ?? '.COM;.EXE;.BAT;.CMD')
          .split(';')
          .filter(Boolean)
          .map((e) => e.toLowerCase()),
        '',
      ]
    : [''];
  for (const dir of (envVar(host.env, 'PATH') ?? '').split(win ? ';' : ':').filter(Boolean)) {
    for (const ext of exts) {
      const candidate = p.join(dir, command + ext);
      if (host.isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

/**
 * Where a tool is, without the npm fallback: the *_PATH override, preferred installs, PATH (`Path`, any case), then
 * the usual install locations of each OS. Undefined when none has it; null when the override names nothing runnable
 * (nothing else is tried then).
 */
export function findOnHost(name: ToolName, host: Host): { path: string; source: 'env' | 'system' } | undefined | null {
  const spec = SPECS[name];
  const override = host.env[spec.env];
  if (override) {
    // An explicit override that is wrong is reported as missing rather than silently replaced by another binary.
    return host.isExecutable(override) ? { path: override, source: 'env' } : null;
  }
  for (const p of spec.preferred?.(host) ?? []) if (host.isExecutable(p)) return { path: p, source: 'system' };
  for (const cmd of spec.commands) {
    const p = onPath(cmd, host);
    if (p) return { path: p, source: 'system' };
  }
  const usual = spec.usual(host).find((f) => host.isExecutable(f));
  return usual ? { path: usual, source: 'system' } : undefined;
}

/**
 * A Chrome or Edge install's version from its folder (`Application\120.0.6099.110\`): on Windows `chrome.exe
 * --version` prints nothing and opens a browser window instead.
 */
function windowsBrowserVersion(exe: string, host: Host): string | undefined {
  const dir = path.win32.dirname(exe);
  const versions = host.readdir(dir).filter((n) => /^\d+\.\d+\.\d+\.\d+$/.test(n));
  const newest = versions.sort((a, b) => a.localeCompare(b, 'en', { numeric: true })).pop();
  return newest ? `${path.win32.basename(exe, '.exe')} ${newest}` : undefined;
}

/**
 * Finds the external programs the service drives. Order: the *_PATH override, then preferred installs (Chromium:
 * Chrome for Testing's headless shell), PATH and the usual install locations, then a binary shipped inside an npm
 * package. Results are cached; a tool installed later is found after
 * `refresh()`. Nothing here throws at start: a missing tool is reported by `require` at the endpoint that needs it.
 */
export class Tools {
  private cache = new Map<ToolName, Promise<ToolInfo>>();

  private readonly host: Host;

  constructor(env: NodeJS.ProcessEnv) {
    this.host = machineHost(env);
  }

  info(name: ToolName): Promise<ToolInfo> {
    let p = this.cache.get(name);
    if (!p) {
      p = this.locate(name);
      this.cache.set(name, p);
    }
    return p;
  }

  /** The tool's path, or ToolMissing naming what to install. */
  async require(name: ToolName): Promise<ToolInfo & { path: string }> {
    const info = await this.info(name);
    if (!info.found || !info.path) throw new ToolMissing(name, info.hint ?? `${name} was not found`);
    return info as ToolInfo & { path: string };
  }

  async all(): Promise<ToolInfo[]> {
    return Promise.all((Object.keys(SPECS) as ToolName[]).map((n) => this.info(n)));
  }

  /** Forgets located tools (one, or all) so the next call looks again. */
  refresh(name?: ToolName): void {
    if (name) this.cache.delete(name);
    else this.cache.clear();
  }

  private async locate(name: ToolName): Promise<ToolInfo> {
    const spec = SPECS[name];
    const found = await this.find(name);
    if (!found) return { name, found: false, hint: spec.hint };
    return { name, found: true, path: found.path, source: found.source, version: await this.version(found.path, spec) };
  }

  private async find(name: ToolName): Promise<{ path: string; source: ToolInfo['source'] } | undefined> {
    const found = findOnHost(name, this.host);
    if (found !== undefined) return found ?? undefined;
    const spec = SPECS[name];
    if (spec.npm) {
      try {
        const p = await spec.npm();
        if (p && this.host.isExecutable(p)) return { path: p, source: 'npm' };
      } catch {
        // package not installed for this platform
      }
    }
    return undefined;
  }

  private async version(file: string, spec: ToolSpec): Promise<string | undefined> {
    if (spec === SPECS.chromium && this.host.platform === 'win32') return windowsBrowserVersion(file, this.host);
    try {
      const { stdout } = await runFile(file, spec.versionArgs, { timeoutMs: 10_000 });
      return stdout.split('\n')[0].trim() || undefined;
    } catch {
      return undefined;
    }
  }
}
