import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../helpers/fixtures.js';
import { startService, type TestService } from '../helpers/service.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** The consumers compile with TypeScript 6 (the `typescript` package): 7 has no `moduleResolution: node10`. */
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc6');

/** The program every consumer compiles and runs: the package as a user of it writes code against it. */
const PROGRAM = `
import { BoardMediaError, createBoardMediaClient, type Element, type JobResult } from '@board-media/client';

// A 1x1 PNG.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

async function main() {
  const bm = createBoardMediaClient({ baseUrl: process.env.BASE_URL!, token: process.env.API_TOKEN, throwOnError: true });
  const { data: board } = await bm.api.POST('/api/moodboards', { body: { name: 'Consumer' } });
  const up = await bm.upload({
    boardId: board!.id,
    file: new Blob([Buffer.from(PNG, 'base64')], { type: 'image/png' }),
    filename: 'dot.png',
    addToBoard: true,
  });
  const element: Element = up.element; // addToBoard: true answers the element, typed as there
  const queued = await bm.startJob('/api/download', {
    body: { board_id: board!.id, url: process.env.BASE_URL + up.url, async: true },
  });
  const job = await bm.waitForJob(queued);
  const result: JobResult<'media.download'> = job.result;
  let code = '';
  try {
    await bm.api.GET('/api/moodboards/{id}', { params: { path: { id: 'bd_nothere' } } });
  } catch (err) {
    if (err instanceof BoardMediaError) code = err.code;
  }
  console.log(JSON.stringify({ element: element.type, kind: job.kind, elements: result.elements.length, code }));
}
main().catch((err) => {
  console.error(err);
  process.exit(1);
});
`;

interface Consumer {
  name: string;
  type: 'module' | 'commonjs';
  compilerOptions: Record<string, unknown>;
  /** The docs' examples are ES modules with top-level await: compiled where the consumer is one. */
  docs: boolean;
  /** Checks the package's declarations too (slow: @types/node and the generated types; once is enough). */
  checkDeclarations?: boolean;
}

const CONSUMERS: Consumer[] = [
  {
    name: 'esm-bundler',
    type: 'module',
    compilerOptions: { module: 'ESNext', moduleResolution: 'Bundler' },
    checkDeclarations: true,
    docs: true,
  },
  {
    name: 'esm-nodenext',
    type: 'module',
    compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' },
    docs: true,
  },
  {
    name: 'cjs-node10',
    type: 'commonjs',
    compilerOptions: {
      module: 'CommonJS',
      moduleResolution: 'node10',
      ignoreDeprecations: '6.0',
      esModuleInterop: true,
    },
    docs: false,
  },
];

/** Every ```ts block of docs/client.md, as a module of its own. */
async function docExamples(): Promise<string[]> {
  const text = await fsp.readFile(path.join(ROOT, 'docs', 'client.md'), 'utf8');
  return [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => `${m[1]}\nexport {};\n`);
}

describe('client: the package installs, type-checks and runs in a consumer project', () => {
  let svc: TestService;
  let dir: string;
  let tarballs: string[];
  before(async () => {
    svc = await startService();
    dir = await tempDir('bms-consumer-');
    // `npm pack` runs `prepare`, which builds the package: what is packed is what the sources make now.
    await run(NPM, ['pack', '--pack-destination', dir], { cwd: path.join(ROOT, 'client') });
    // Its dependencies from this checkout's node_modules, so the install needs no registry.
    await run(
      NPM,
      [
        'pack',
        '--ignore-scripts',
        '--pack-destination',
        dir,
        './node_modules/openapi-fetch',
        './node_modules/openapi-typescript-helpers',
      ],
      { cwd: ROOT },
    );
    tarballs = (await fsp.readdir(dir)).filter((f) => f.endsWith('.tgz')).map((f) => path.join(dir, f));
    assert.equal(tarballs.length, 3, `packed: ${tarballs.join(', ')}`);
  });
  after(() => svc.close());

  for (const consumer of CONSUMERS)
    it(`${consumer.name}: installs offline from the tarball, compiles strict with exactOptionalPropertyTypes, runs`, async () => {
      const home = path.join(dir, consumer.name);
      await fsp.mkdir(path.join(home, 'src'), { recursive: true });
      await fsp.writeFile(
        path.join(home, 'package.json'),
        JSON.stringify({ name: consumer.name, private: true, type: consumer.type }),
      );
      await run(NPM, ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', ...tarballs], {
        cwd: home,
      });
      const installed = await fsp.readdir(path.join(home, 'node_modules'));
      assert.deepEqual(
        installed.filter((n) => !n.startsWith('.')).sort(),
        ['@board-media', 'openapi-fetch', 'openapi-typescript-helpers'],
        'no generator, nothing else',
      );
      console.log(`${consumer.name}: node_modules ${(await du(path.join(home, 'node_modules'))) >> 10} KiB`);

      await fsp.writeFile(path.join(home, 'src', 'main.ts'), PROGRAM);
      if (consumer.docs)
        for (const [i, example] of (await docExamples()).entries())
          await fsp.writeFile(path.join(home, 'src', `docs-example-${i + 1}.ts`), example);
      await fsp.writeFile(
        path.join(home, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            lib: ['ES2023', 'DOM'],
            strict: true,
            exactOptionalPropertyTypes: true,
            skipLibCheck: !consumer.checkDeclarations,
            types: ['node'],
            typeRoots: [path.join(ROOT, 'node_modules', '@types')],
            outDir: 'out',
            rootDir: 'src',
            ...consumer.compilerOptions,
          },
          include: ['src'],
        }),
      );
      const compiled = await run(process.execPath, [TSC, '-p', home]).catch((err: { stdout: string }) => err);
      assert.equal((compiled as { stdout: string }).stdout, '', `tsc in ${consumer.name}`);

      const { stdout } = await run(process.execPath, [path.join(home, 'out', 'main.js')], {
        env: { ...process.env, BASE_URL: svc.baseUrl },
      });
      assert.deepEqual(JSON.parse(stdout), {
        element: 'image',
        kind: 'media.download',
        elements: 1,
        code: 'not_found',
      });
    });

  it('the packed client has both builds and no generator among its dependencies', async () => {
    const { stdout } = await run('tar', [
      '-xOf',
      tarballs.find((t) => t.includes('board-media-client'))!,
      'package/package.json',
    ]);
    const manifest = JSON.parse(stdout);
    assert.deepEqual(Object.keys(manifest.dependencies), ['openapi-fetch']);
    assert.equal(manifest.exports['.'].require.types, './dist/cjs/index.d.ts');
    assert.equal(manifest.exports['.'].import.types, './dist/esm/index.d.ts');
  });
});

async function du(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await fsp.readdir(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) total += fs.statSync(path.join(entry.parentPath, entry.name)).size;
  return total;
}
