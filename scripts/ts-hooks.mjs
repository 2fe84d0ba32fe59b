// Runs the project's TypeScript in place for the tests: `node --import ./scripts/ts-hooks.mjs file.ts`. Synchronous
// in-thread module hooks (module.registerHooks, Node 22.15+) strip each .ts file with esbuild, and each result is kept
// on disk by its content, so the ~135 test processes (and the worker threads they start) compile nothing after the
// first: about 2 CPU-s less per process than tsx, whose loader runs on its own thread and keeps no cache
// (docs/architecture.md, "Tests and benchmarks").
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { enableCompileCache, registerHooks, setSourceMapsSupport } from 'node:module';
import { fileURLToPath } from 'node:url';
import { transformSync, version } from 'esbuild';

const CACHES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', '.cache');
const CACHE = path.join(CACHES, 'bms-ts');
// V8's code cache too, for these and the ~1,200 modules of node_modules the service loads (0.3 CPU-s a process).
enableCompileCache(path.join(CACHES, 'bms-v8'));
// tsconfig.json's semantics: target ES2022 keeps class fields as defined fields.
const OPTIONS = {
  loader: 'ts',
  format: 'esm',
  target: 'node22',
  sourcemap: 'inline',
  tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
};
const SALT = `${version} ${JSON.stringify(OPTIONS)}`;

// Worker threads do not run `--import` preloads: startModuleWorker (src/motion/inspect.ts) registers this module in
// each worker it starts from source, found here.
process.env.BMS_TS_HOOKS = import.meta.url;
// Stack traces point into the .ts sources; the dependencies' own maps are not read (0.2 CPU-s a process, measured).
setSourceMapsSupport(true, { nodeModules: false });

function compile(file, source) {
  // The path is in the key too: the inline source map names the file, and clones share node_modules' cache.
  const key = createHash('sha256').update(SALT).update('\0').update(file).update('\0').update(source).digest('hex');
  const cached = path.join(CACHE, `${key}.js`);
  try {
    return fs.readFileSync(cached, 'utf8');
  } catch {
    // not compiled yet
  }
  const { code } = transformSync(source, { ...OPTIONS, sourcefile: file });
  fs.mkdirSync(CACHE, { recursive: true });
  // Written beside and renamed: another process reading the cache sees the whole file or none.
  const tmp = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  fs.writeFileSync(tmp, code);
  fs.renameSync(tmp, cached);
  return code;
}

registerHooks({
  resolve(specifier, context, nextResolve) {
    // The sources import each other as `./x.js` (TypeScript's NodeNext convention); the file on disk is x.ts.
    if (
      specifier.endsWith('.js') &&
      (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('file:')) &&
      context.parentURL?.endsWith('.ts')
    ) {
      const ts = new URL(specifier.slice(0, -3) + '.ts', context.parentURL);
      if (fs.existsSync(ts)) return nextResolve(ts.href, context);
    }
    return nextResolve(specifier, context);
  },
  load(url, context, nextLoad) {
    if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
    const file = fileURLToPath(url);
    return { format: 'module', source: compile(file, fs.readFileSync(file, 'utf8')), shortCircuit: true };
  },
});
