import fsp from 'node:fs/promises';
import path from 'node:path';

/**
 * Writes a stand-in for an external program, in JavaScript (an ES module), and answers its path for a *_PATH
 * variable. The service runs a `.mjs` tool with its own Node (tools/process.ts), so the stand-in runs alike on
 * Linux, macOS and Windows, where a `#!/bin/sh` script would not start.
 */
export async function writeFakeTool(dir: string, name: string, source: string): Promise<string> {
  const file = path.join(dir, `${name}.mjs`);
  await fsp.mkdir(dir, { recursive: true });
  await fsp.writeFile(file, source, { mode: 0o755 });
  return file;
}

/**
 * A stand-in that must be found by its bare name (on PATH or in an install folder): a JavaScript file run through
 * its `#!` line by this Node. POSIX only; tests using it skip on Windows.
 */
export async function writeNamedFakeTool(dir: string, name: string, source: string): Promise<string> {
  const file = path.join(dir, name);
  await fsp.mkdir(dir, { recursive: true });
  await fsp.writeFile(file, `#!${process.execPath}\n${source}`, { mode: 0o755 });
  return file;
}
