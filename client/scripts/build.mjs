/**
 * Builds the package (`npm run build -w @board-media/client`, the root `npm run build`, and `prepare`, so `npm pack`
 * always packs a fresh build): ES modules in dist/esm and CommonJS in dist/cjs, each with its declarations, from the
 * same sources. dist/cjs gets a package.json saying `commonjs`, so Node loads its `.js` files as CommonJS although
 * the package is `type: module`.
 */
import { execFileSync } from 'node:child_process';
import process from 'node:process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.dirname(import.meta.dirname);
// The project's compiler (TypeScript 7, installed as @typescript/native; its bin is not in its exports).
const tsc = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@typescript/native/package.json')),
  'bin',
  'tsc',
);
fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true });
for (const config of ['tsconfig.json', 'tsconfig.cjs.json'])
  execFileSync(process.execPath, [tsc, '-p', path.join(root, config)], { stdio: 'inherit' });
fs.writeFileSync(path.join(root, 'dist', 'cjs', 'package.json'), '{ "type": "commonjs" }\n');
