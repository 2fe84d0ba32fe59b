import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ToolMissing } from '../errors.js';

const execFileAsync = promisify(execFile);
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

interface ToolSpec {
  env: string;
  /** Absolute paths tried before PATH (installs that are usually not on PATH but preferred when present). */
  preferred?: (env: NodeJS.ProcessEnv) => string[];
  commands: string[];
  usual: (platform: NodeJS.Platform) => string[];
  npm?: () => Promise<string | undefined>;
  versionArgs: string[];
  hint: string;
}

const programFiles = (p: string) =>
  [process.env.ProgramFiles, process.env['ProgramFiles(x86)'], process.env.LOCALAPPDATA]
    .filter((d): d is string => !!d)
    .map((d) => path.join(d, p));

/**
 * Chrome for Testing's headless shells that @puppeteer/browsers installed into puppeteer's cache
 * (`<cache>/chrome-headless-shell/<platform>-<version>/chrome-headless-shell-<platform>/chrome-headless-shell`),
 * newest version first.
 */
function chromeForTestingShells(env: NodeJS.ProcessEnv): string[] {
  const cache = path.join(
    env.PUPPETEER_CACHE_DIR || path.join(os.homedir(), '.cache', 'puppeteer'),
    'chrome-headless-shell',
  );
  const exe = process.platform === 'win32' ? 'chrome-headless-shell.exe' : 'chrome-headless-shell';
  const version = (dir: string) => (dir.split('-').pop() ?? '').split('.').map(Number);
  const newer = (a: string, b: string) => {
    const [va, vb] = [version(a), version(b)];
    for (let i = 0; i < Math.max(va.length, vb.length); i++)
      if ((va[i] ?? 0) !== (vb[i] ?? 0)) return (vb[i] ?? 0) - (va[i] ?? 0);
    return 0;
  };
  try {
    return fs
      .readdirSync(cache)
      .sort(newer)
      .flatMap((v) => {
        try {
          return fs.readdirSync(path.join(cache, v)).map((d) => path.join(cache, v, d, exe));
        } catch {
          return [];
        }
      });
  } catch {
    return [];
  }
}

const SPECS: Record<ToolName, ToolSpec> = {
  ffmpeg: {
    env: 'FFMPEG_PATH',
    commands: ['ffmpeg'],
    usual: (pl) =>
      pl === 'darwin'
        ? ['/opt/homebrew/bin/ffmpeg', '/usr/local/bin/ffmpeg']
        : ['/usr/bin/ffmpeg', '/usr/local/bin/ffmpeg'],
    npm: async () => (require('@ffmpeg-installer/ffmpeg') as { path: string }).path,
    versionArgs: ['-version'],
    hint: 'ffmpeg was not found: run `npm ci` (ships it in @ffmpeg-installer/ffmpeg), install it (`apt-get install ffmpeg`, `brew install ffmpeg`), or set FFMPEG_PATH',
  },
  ffprobe: {
    env: 'FFPROBE_PATH',
    commands: ['ffprobe'],
    usual: (pl) =>
      pl === 'darwin'
        ? ['/opt/homebrew/bin/ffprobe', '/usr/local/bin/ffprobe']
        : ['/usr/bin/ffprobe', '/usr/local/bin/ffprobe'],
    npm: async () => (require('@ffprobe-installer/ffprobe') as { path: string }).path,
    versionArgs: ['-version'],
    hint: 'ffprobe was not found: run `npm ci` (ships it in @ffprobe-installer/ffprobe), install ffmpeg (`apt-get install ffmpeg`), or set FFPROBE_PATH',
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
    ],
    usual: (pl) =>
      pl === 'darwin'
        ? [
            '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
            '/Applications/Chromium.app/Contents/MacOS/Chromium',
            path.join(os.homedir(), 'Applications/Google Chrome.app/Contents/MacOS/Google Chrome'),
          ]
        : pl === 'win32'
          ? [
              ...programFiles('Google\\Chrome\\Application\\chrome.exe'),
              ...programFiles('Chromium\\Application\\chrome.exe'),
            ]
          : [
              '/usr/bin/chromium-headless-shell',
              '/usr/bin/chromium',
              '/usr/bin/chromium-browser',
              '/usr/bin/google-chrome',
              '/snap/bin/chromium',
            ],
    npm: async () => {
      if (process.platform !== 'linux' || process.arch !== 'x64') return undefined;
      const mod = (await import('@sparticuz/chromium')) as unknown as {
        default: { executablePath(): Promise<string> };
      };
      return mod.default.executablePath();
    },
    versionArgs: ['--version'],
    hint: 'Chromium was not found: run `npm ci` (ships it in @sparticuz/chromium on Linux x64), install Chromium or Chrome (`apt-get install chromium`), or set CHROMIUM_PATH',
  },
  ytdlp: {
    env: 'YTDLP_PATH',
    commands: ['yt-dlp'],
    usual: (pl) =>
      pl === 'darwin'
        ? ['/opt/homebrew/bin/yt-dlp', '/usr/local/bin/yt-dlp']
        : ['/usr/bin/yt-dlp', '/usr/local/bin/yt-dlp'],
    versionArgs: ['--version'],
    hint: 'yt-dlp was not found: install it (`apt-get install yt-dlp`, `brew install yt-dlp`) or set YTDLP_PATH',
  },
  aerender: {
    env: 'AERENDER_PATH',
    // The install folders, newest version first, come before PATH: a versioned install beats a stray link on PATH.
    preferred: () =>
      process.platform === 'darwin'
        ? afterEffectsInstalls(['/Applications'], ['aerender'])
        : process.platform === 'win32'
          ? afterEffectsInstalls(programFiles('Adobe'), ['Support Files', 'aerender.exe'])
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
export function afterEffectsInstalls(parents: string[], inside: string[]): string[] {
  const found: { file: string; version: number[] }[] = [];
  for (const parent of parents) {
    let names: string[];
    try {
      names = fs.readdirSync(parent);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!/^Adobe After Effects\b/i.test(name)) continue;
      const version = (name.match(/\d+(?:\.\d+)*/g) ?? []).pop()?.split('.').map(Number) ?? [];
      found.push({ file: path.join(parent, name, ...inside), version });
    }
  }
  const cmp = (a: number[], b: number[]) => {
    for (let i = 0; i < Math.max(a.length, b.length); i++)
      if ((a[i] ?? -1) !== (b[i] ?? -1)) return (b[i] ?? -1) - (a[i] ?? -1);
    return 0;
  };
  return found.sort((a, b) => cmp(a.version, b.version)).map((f) => f.file);
}

function isExecutable(file: string): boolean {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return false;
    if (process.platform !== 'win32') fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(command: string, envPath: string | undefined): string | undefined {
  const exts = process.platform === 'win32' ? ['.exe', '.cmd', ''] : [''];
  for (const dir of (envPath ?? '').split(path.delimiter).filter(Boolean)) {
    for (const ext of exts) {
      const candidate = path.join(dir, command + ext);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

/**
 * Finds the external programs the service drives. Order: the *_PATH override, then preferred installs (Chromium:
 * Chrome for Testing's headless shell), PATH and the usual install locations, then a binary shipped inside an npm
 * package. Results are cached; a tool installed later is found after
 * `refresh()`. Nothing here throws at start: a missing tool is reported by `require` at the endpoint that needs it.
 */
export class Tools {
  private cache = new Map<ToolName, Promise<ToolInfo>>();

  constructor(private readonly env: NodeJS.ProcessEnv) {}

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
    const found = await this.find(spec);
    if (!found) return { name, found: false, hint: spec.hint };
    return { name, found: true, path: found.path, source: found.source, version: await this.version(found.path, spec) };
  }

  private async find(spec: ToolSpec): Promise<{ path: string; source: ToolInfo['source'] } | undefined> {
    const override = this.env[spec.env];
    if (override) {
      // An explicit override that is wrong is reported as missing rather than silently replaced by another binary.
      return isExecutable(override) ? { path: override, source: 'env' } : undefined;
    }
    for (const p of spec.preferred?.(this.env) ?? []) if (isExecutable(p)) return { path: p, source: 'system' };
    for (const cmd of spec.commands) {
      const p = onPath(cmd, this.env.PATH);
      if (p) return { path: p, source: 'system' };
    }
    const usual = spec.usual(process.platform).find(isExecutable);
    if (usual) return { path: usual, source: 'system' };
    if (spec.npm) {
      try {
        const p = await spec.npm();
        if (p && isExecutable(p)) return { path: p, source: 'npm' };
      } catch {
        // package not installed for this platform
      }
    }
    return undefined;
  }

  private async version(file: string, spec: ToolSpec): Promise<string | undefined> {
    try {
      const { stdout } = await execFileAsync(file, spec.versionArgs, { timeout: 10_000 });
      return stdout.split('\n')[0].trim() || undefined;
    } catch {
      return undefined;
    }
  }
}
