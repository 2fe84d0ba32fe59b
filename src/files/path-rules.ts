import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The rules a path from a request obeys, per platform, as pure functions (tests check Windows' rules on Linux with
 * `path.win32`). The platform defaults to this machine's.
 */

/** Windows opens a device for `con`, `con.txt` or `aux .png`: the part before the first dot, trimmed, decides. */
const WINDOWS_DEVICE = /^(con|prn|aux|nul|conin\$|conout\$|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])$/i;

/** True when a Windows name (a whole name, or one before its extensions) is a device. */
export function isWindowsDevice(name: string): boolean {
  const dot = name.indexOf('.');
  return WINDOWS_DEVICE.test((dot < 0 ? name : name.slice(0, dot)).trim());
}

/**
 * Why one decoded URL segment may not name a file, or undefined when it may. Everywhere: empty, `.`/`..`, a dotfile,
 * a separator, NUL or a drive letter. On Windows also what Windows reads differently from how it is written: a
 * stream (`a.txt:secret`, `a::$DATA`), a device name with or without an extension, trailing dots or spaces
 * (`a.txt.` opens `a.txt`), and an 8.3 short name (`GIT~1` can be `.git`; the resolved path is checked as well).
 */
export function segmentProblem(seg: string, platform: NodeJS.Platform = process.platform): string | undefined {
  if (seg === '' || seg === '.' || seg === '..') return 'empty or relative';
  if (seg.startsWith('.')) return 'a dotfile';
  if (/[\\/\u0000]/.test(seg)) return 'a separator or NUL';
  if (/^[a-z]:/i.test(seg)) return 'a drive letter';
  if (platform !== 'win32') return undefined;
  if (seg.includes(':')) return 'a stream';
  if (isWindowsDevice(seg)) return 'a device name';
  if (/[.\s]$/.test(seg)) return 'a trailing dot or space';
  if (/~\d+(\.|$)/.test(seg)) return 'a short (8.3) name';
  return undefined;
}

/**
 * True when `real` (a resolved path) lies strictly inside `base` and no folder or file below `base` on the way is a
 * dotfile. Checked on the resolved path, so a link or a short name (`GIT~1`) that leads to `.git`, or out of `base`,
 * is caught whatever the request spelled. Windows compares without case. A prefix test, no path arithmetic: the
 * serving hot path asks it for every request.
 */
export function isInside(
  real: string,
  base: string | undefined,
  platform: NodeJS.Platform = process.platform,
): boolean {
  if (base === undefined) return false;
  const sep = platform === 'win32' ? '\\' : '/';
  const prefix = base.endsWith(sep) ? base : base + sep;
  const within =
    platform === 'win32'
      ? real.slice(0, prefix.length).toLowerCase() === prefix.toLowerCase()
      : real.startsWith(prefix);
  if (!within || real.length === prefix.length) return false;
  const rel = real.slice(prefix.length);
  return !rel.startsWith('.') && !rel.includes(sep + '.');
}

/** Errors of the native realpath that the JavaScript one does not have (RAM and virtual disks on Windows: EISDIR). */
const NATIVE_REALPATH_QUIRKS = new Set(['EISDIR', 'EINVAL', 'EUNKNOWN']);
const jsRealpath = promisify(fs.realpath);

/**
 * The real path, by the native call, or by Node's JavaScript walk of the links where the native one fails for
 * reasons of the drive rather than of the path (ImDisk and other RAM or virtual disks answer EISDIR on Windows).
 */
export async function realpathOf(p: string): Promise<string> {
  try {
    return await fsp.realpath(p);
  } catch (err) {
    if (!NATIVE_REALPATH_QUIRKS.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
    return jsRealpath(p);
  }
}

/** realpathOf, synchronously (the serving hot path). */
export function realpathOfSync(p: string): string {
  try {
    return fs.realpathSync.native(p);
  } catch (err) {
    if (!NATIVE_REALPATH_QUIRKS.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
    return fs.realpathSync(p);
  }
}

/**
 * Windows programs (ffmpeg, Explorer, players, the desktop app) still fail on paths past 259 characters, though
 * Node itself reaches them. A new file's name is cut (extension kept) so that `dir\<temp prefix><name> (n).ext`
 * stays within that; elsewhere names are already cut to 180 bytes, well inside every system's limit.
 */
export const WINDOWS_MAX_PATH = 259;
/** `.tmp-` + 12 hex digits + `-` (tempPathIn) and ` (9999)` (numberedName): what a name grows by on its way. */
const GROWTH = 18 + 7;
/** A name is never cut below this many characters of stem: better a long path than an unreadable name. */
const MIN_STEM = 8;

export function fitNameToPath(dir: string, filename: string, platform: NodeJS.Platform = process.platform): string {
  if (platform !== 'win32') return filename;
  const budget = WINDOWS_MAX_PATH - dir.length - 1 - GROWTH;
  if (filename.length <= budget) return filename;
  const ext = path.win32.extname(filename);
  const stem = filename.slice(0, filename.length - ext.length);
  let keep = Math.max(MIN_STEM, budget - ext.length);
  // Never cut between the halves of a surrogate pair.
  if (/[\uD800-\uDBFF]/.test(stem[keep - 1] ?? '')) keep--;
  return stem.length <= keep ? filename : stem.slice(0, keep).replace(/[.\s]+$/, '') + ext;
}
