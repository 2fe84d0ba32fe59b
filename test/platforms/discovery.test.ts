// Tool discovery against a fake file system of each OS: what a fresh Windows machine, a Mac with Homebrew and a
// Linux desktop have, with the environment spelled as each spells it.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { envVar, findOnHost, type Host } from '../../src/tools/locate.js';

function fakeHost(platform: NodeJS.Platform, env: NodeJS.ProcessEnv, home: string, files: string[]): Host {
  const p = platform === 'win32' ? path.win32 : path.posix;
  const norm = (f: string) => (platform === 'win32' ? f.toLowerCase() : f);
  const set = new Set(files.map(norm));
  return {
    platform,
    env,
    home,
    isExecutable: (file) => set.has(norm(file)),
    readdir: (dir) => {
      const prefix = norm(dir.endsWith(p.sep) ? dir : dir + p.sep);
      const names = files.filter((f) => norm(f).startsWith(prefix)).map((f) => f.slice(prefix.length).split(p.sep)[0]);
      return [...new Set(names)];
    },
  };
}

const WINDOWS_ENV = {
  Path: 'C:\\Windows\\system32;C:\\Windows',
  PATHEXT: '.COM;.EXE;.BAT;.CMD',
  ProgramFiles: 'C:\\Program Files',
  'ProgramFiles(x86)': 'C:\\Program Files (x86)',
  LOCALAPPDATA: 'C:\\Users\\ann\\AppData\\Local',
};
const EDGE = 'C:\\Program Files (x86)\\Microsoft\\Edge\\Application\\msedge.exe';

describe('Windows', () => {
  it('a fresh machine has Edge, a Chromium: it is found; Chrome is preferred once installed', () => {
    const fresh = fakeHost('win32', WINDOWS_ENV, 'C:\\Users\\ann', [EDGE]);
    assert.deepEqual(findOnHost('chromium', fresh), { path: EDGE, source: 'system' });
    const chrome = 'C:\\Users\\ann\\AppData\\Local\\Google\\Chrome\\Application\\chrome.exe';
    const both = fakeHost('win32', WINDOWS_ENV, 'C:\\Users\\ann', [EDGE, chrome]);
    assert.equal(findOnHost('chromium', both)?.path, chrome, 'a per-user Chrome (winget --scope user) too');
  });

  it('PATH is read whatever its case (`Path`), with PATHEXT', () => {
    const env = { ...WINDOWS_ENV, Path: `${WINDOWS_ENV.Path};D:\\tools\\bin` };
    const host = fakeHost('win32', env, 'C:\\Users\\ann', ['D:\\tools\\bin\\ffmpeg.exe', 'D:\\tools\\bin\\yt-dlp.EXE']);
    assert.equal(findOnHost('ffmpeg', host)?.path, 'D:\\tools\\bin\\ffmpeg.exe');
    assert.ok(findOnHost('ytdlp', host), 'extensions without case');
    assert.equal(envVar({ pAtH: 'x' }, 'PATH'), 'x');
    assert.equal(envVar({ PATH: 'a', Path: 'b' }, 'PATH'), 'a', 'the exact spelling first');
  });

  it("winget's ffmpeg is found where the package put it, newest build first, though PATH predates the install", () => {
    const pkgs = 'C:\\Users\\ann\\AppData\\Local\\Microsoft\\WinGet\\Packages';
    const pkg = `${pkgs}\\Gyan.FFmpeg_Microsoft.Winget.Source_8wekyb3d8bbwe`;
    const host = fakeHost('win32', WINDOWS_ENV, 'C:\\Users\\ann', [
      `${pkg}\\ffmpeg-7.0-full_build\\bin\\ffmpeg.exe`,
      `${pkg}\\ffmpeg-7.1-full_build\\bin\\ffmpeg.exe`,
      `${pkg}\\ffmpeg-7.1-full_build\\bin\\ffprobe.exe`,
    ]);
    assert.equal(findOnHost('ffmpeg', host)?.path, `${pkg}\\ffmpeg-7.1-full_build\\bin\\ffmpeg.exe`);
    assert.equal(findOnHost('ffprobe', host)?.path, `${pkg}\\ffmpeg-7.1-full_build\\bin\\ffprobe.exe`);
    const links = fakeHost('win32', WINDOWS_ENV, 'C:\\Users\\ann', [
      'C:\\Users\\ann\\AppData\\Local\\Microsoft\\WinGet\\Links\\yt-dlp.exe',
    ]);
    assert.equal(
      findOnHost('ytdlp', links)?.path,
      'C:\\Users\\ann\\AppData\\Local\\Microsoft\\WinGet\\Links\\yt-dlp.exe',
    );
  });

  it("Scoop's shims and Chocolatey's bin", () => {
    const scoop = fakeHost('win32', WINDOWS_ENV, 'C:\\Users\\ann', ['C:\\Users\\ann\\scoop\\shims\\ffmpeg.exe']);
    assert.equal(findOnHost('ffmpeg', scoop)?.path, 'C:\\Users\\ann\\scoop\\shims\\ffmpeg.exe');
    const choco = fakeHost('win32', WINDOWS_ENV, 'C:\\Users\\ann', ['C:\\ProgramData\\chocolatey\\bin\\ffmpeg.exe']);
    assert.equal(findOnHost('ffmpeg', choco)?.path, 'C:\\ProgramData\\chocolatey\\bin\\ffmpeg.exe');
  });

  it("After Effects' aerender, newest version first, before PATH", () => {
    const host = fakeHost('win32', WINDOWS_ENV, 'C:\\Users\\ann', [
      'C:\\Program Files\\Adobe\\Adobe After Effects 2024\\Support Files\\aerender.exe',
      'C:\\Program Files\\Adobe\\Adobe After Effects 2025\\Support Files\\aerender.exe',
    ]);
    assert.equal(
      findOnHost('aerender', host)?.path,
      'C:\\Program Files\\Adobe\\Adobe After Effects 2025\\Support Files\\aerender.exe',
    );
  });
});

describe('macOS', () => {
  const env = { PATH: '/usr/bin:/bin' };
  it("Homebrew's ffmpeg on Apple silicon and on Intel, with a desktop app's short PATH", () => {
    const arm = fakeHost('darwin', env, '/Users/ann', ['/opt/homebrew/bin/ffmpeg', '/opt/homebrew/bin/ffprobe']);
    assert.equal(findOnHost('ffmpeg', arm)?.path, '/opt/homebrew/bin/ffmpeg');
    const intel = fakeHost('darwin', env, '/Users/ann', ['/usr/local/bin/ffprobe']);
    assert.equal(findOnHost('ffprobe', intel)?.path, '/usr/local/bin/ffprobe');
  });

  it('Chrome, else Edge, in /Applications or ~/Applications (where Homebrew casks go)', () => {
    const edge = '/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge';
    assert.equal(findOnHost('chromium', fakeHost('darwin', env, '/Users/ann', [edge]))?.path, edge);
    const chrome = '/Users/ann/Applications/Google Chrome.app/Contents/MacOS/Google Chrome';
    assert.equal(findOnHost('chromium', fakeHost('darwin', env, '/Users/ann', [edge, chrome]))?.path, chrome);
  });
});

describe('Linux', () => {
  it('PATH first, then the usual folders; an override that names nothing is missing, not replaced', () => {
    const host = fakeHost('linux', { PATH: '/home/ann/bin:/usr/bin' }, '/home/ann', [
      '/home/ann/bin/ffmpeg',
      '/usr/bin/ffmpeg',
      '/opt/google/chrome/chrome',
    ]);
    assert.equal(findOnHost('ffmpeg', host)?.path, '/home/ann/bin/ffmpeg');
    assert.equal(findOnHost('chromium', host)?.path, '/opt/google/chrome/chrome');
    assert.equal(findOnHost('ytdlp', host), undefined);
    const wrong = fakeHost('linux', { PATH: '/usr/bin', FFMPEG_PATH: '/nope/ffmpeg' }, '/home/ann', [
      '/usr/bin/ffmpeg',
    ]);
    assert.equal(findOnHost('ffmpeg', wrong), null);
  });
});
