// Starts once each native or shipped binary that `npm ci` installed, to show the install runs on this machine:
// SQLite (built into Node), sharp (libvips), node-pty, esbuild, ffmpeg and ffprobe. Prints "N passed, N failed".
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
process.removeAllListeners('warning'); // node:sqlite's "experimental" notice is not a failure of the install

const checks = {
  'node:sqlite': () => {
    const { DatabaseSync } = require('node:sqlite');
    const db = new DatabaseSync(':memory:');
    if (db.prepare('SELECT 6 * 7 AS v').get().v !== 42) throw new Error('wrong answer');
  },
  sharp: async () => {
    const sharp = (await import('sharp')).default;
    const png = await sharp({ create: { width: 2, height: 2, channels: 3, background: '#f00' } })
      .png()
      .toBuffer();
    if ((await sharp(png).metadata()).width !== 2) throw new Error('wrong size');
  },
  'node-pty': () =>
    new Promise((resolve, reject) => {
      const pty = require('@lydell/node-pty');
      const p = pty.spawn(process.execPath, ['-e', 'process.stdout.write("pty-ok")'], { cols: 80, rows: 24 });
      let out = '';
      p.onData((d) => (out += d));
      p.onExit(({ exitCode }) => (exitCode === 0 && out.includes('pty-ok') ? resolve() : reject(new Error(out))));
    }),
  esbuild: () => require('esbuild').transformSync('let a: number = 1', { loader: 'ts' }),
  ffmpeg: () => execFileSync(require('@ffmpeg-installer/ffmpeg').path, ['-version'], { stdio: 'ignore' }),
  ffprobe: () => execFileSync(require('@ffprobe-installer/ffprobe').path, ['-version'], { stdio: 'ignore' }),
};

let passed = 0;
let failed = 0;
for (const [name, check] of Object.entries(checks)) {
  try {
    await check();
    passed++;
    console.log(`ok   ${name}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name}: ${err instanceof Error ? err.message : String(err)}`);
  }
}
console.log(`check-install: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
