import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { numberedName } from './names.js';
import { fitNameToPath } from './path-rules.js';
import { removeRetrying, renameRetrying } from './retry.js';

/** Temp files start with this, so listings and cleanup can tell them from users' files. */
const TEMP_PREFIX = '.tmp-';

/** A fresh temp path in `dir` for a file to be named `filename` (cut to fit Windows' path limit there). */
export function tempPathIn(dir: string, filename: string): string {
  return path.join(dir, `${TEMP_PREFIX}${crypto.randomBytes(6).toString('hex')}-${fitNameToPath(dir, filename)}`);
}

/** Names tempPathIn makes, exactly: cleanup in a user's connected folder must never take a file of theirs. */
export const isTempName = (name: string): boolean => /^\.tmp-[0-9a-f]{12}-/.test(name);

/**
 * Moves a finished temp file to `dir/filename`, or `filename (n)` when that name is taken, never replacing an
 * existing file: `link` fails with EEXIST instead of overwriting, which makes the check and the claim one atomic step.
 * Returns the name it got (on Windows cut so the full path stays within 259 characters).
 */
export async function commitUnique(tempPath: string, dir: string, wanted: string): Promise<string> {
  const filename = fitNameToPath(dir, wanted);
  for (let n = 0; n < 10_000; n++) {
    const candidate = n === 0 ? filename : numberedName(filename, n);
    const target = path.join(dir, candidate);
    try {
      await fsp.link(tempPath, target);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      // Filesystems without hard links (FAT and exFAT answer EISDIR or EPERM): claim the name exclusively, then rename
      // over our own placeholder.
      if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EXDEV' || code === 'EOPNOTSUPP' || code === 'EISDIR') {
        try {
          await (await fsp.open(target, 'wx')).close();
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue;
          throw e;
        }
        await renameRetrying(tempPath, target);
        return candidate;
      }
      throw err;
    }
    // Only after the claim succeeded: a failure here must not read as a file system without hard links.
    await removeRetrying(tempPath);
    return candidate;
  }
  throw new Error(`no free name for ${filename} in ${dir}`);
}

/**
 * Atomically replaces `target` with `data` (temp file in the same folder, fsync, rename). For files we own.
 * `mode` sets the new file's permissions from its creation on (0o600 for secrets: never readable by others).
 */
export async function replaceFileAtomic(
  target: string,
  data: string | Buffer,
  opts: { mode?: number } = {},
): Promise<void> {
  const dir = path.dirname(target);
  await fsp.mkdir(dir, { recursive: true });
  const temp = tempPathIn(dir, path.basename(target));
  try {
    const handle = await fsp.open(temp, 'wx', opts.mode);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await renameRetrying(temp, target);
  } catch (err) {
    await removeRetrying(temp);
    throw err;
  }
}

/** Writes new content under a unique name in `dir` without ever overwriting; returns the chosen filename. */
export async function writeNewFile(dir: string, filename: string, data: string | Buffer | Readable): Promise<string> {
  await fsp.mkdir(dir, { recursive: true });
  const temp = tempPathIn(dir, filename);
  try {
    if (typeof data === 'string' || Buffer.isBuffer(data)) {
      await fsp.writeFile(temp, data, { flag: 'wx' });
    } else {
      await pipeline(data, fs.createWriteStream(temp, { flags: 'wx' }));
    }
    return await commitUnique(temp, dir, filename);
  } catch (err) {
    await removeRetrying(temp);
    throw err;
  }
}

/**
 * Moves an existing file (for example a finished upload in DATA_DIR/tmp) into `dir` under a unique name.
 * Across filesystems (a connected folder on another disk) it copies into a temp file beside the target first.
 */
/** Moves `source` to the fresh path `target`: a rename, or a copy that never replaces a file across file systems. */
export async function moveFile(source: string, target: string): Promise<void> {
  try {
    await renameRetrying(source, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    await fsp.copyFile(source, target, fs.constants.COPYFILE_EXCL);
    await removeRetrying(source);
  }
}

export async function moveIntoUnique(source: string, dir: string, filename: string): Promise<string> {
  await fsp.mkdir(dir, { recursive: true });
  const temp = tempPathIn(dir, filename);
  try {
    await moveFile(source, temp);
    return await commitUnique(temp, dir, filename);
  } catch (err) {
    // A half-copied temp file in a connected folder would never be cleaned up at start (only the media root is).
    await removeRetrying(temp);
    throw err;
  }
}
