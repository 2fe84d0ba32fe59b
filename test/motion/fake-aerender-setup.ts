import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { Tools } from '../../src/tools/locate.js';
import { writeFakeTool } from '../helpers/fake-tool.js';

const FAKE = fileURLToPath(new URL('./fake-aerender.ts', import.meta.url));

/**
 * Bundles the stand-in once into one plain .mjs file in `dir`: started through tsx it would spend seconds
 * transpiling on a loaded machine before its first line, which a stall limit reads as a hang.
 */
export async function bundleFakeAerender(dir: string): Promise<string> {
  const out = path.join(dir, 'fake-aerender.mjs');
  await build({
    entryPoints: [FAKE],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: out,
    logLevel: 'error',
    // bundled CommonJS dependencies (saxes) call require()
    banner: {
      js: "import { createRequire as __bannerRequire } from 'node:module'; const require = __bannerRequire(import.meta.url);",
    },
  });
  return out;
}

/**
 * Writes an `aerender` stand-in (JavaScript, which the service runs with its own Node on every OS) that runs the
 * bundled stand-in in a mode; point AERENDER_PATH at it.
 */
export async function fakeAerender(
  dir: string,
  bundle: string,
  mode: 'ok' | 'slow' | 'hang' | 'nofile' | 'half' | 'noflag',
  log?: string,
): Promise<string> {
  // The bundle lives in a temp folder, where the npm-shipped ffmpeg cannot be resolved: hand it the path found here.
  const ffmpeg = (await new Tools(process.env).require('ffmpeg')).path;
  const env = { FAKE_AE_MODE: mode, FFMPEG_PATH: ffmpeg, ...(log ? { FAKE_AE_LOG: log } : {}) };
  return writeFakeTool(
    path.join(dir, `ae-${mode}`),
    'aerender',
    `Object.assign(process.env, ${JSON.stringify(env)});\nawait import(${JSON.stringify(pathToFileURL(bundle).href)});\n`,
  );
}
