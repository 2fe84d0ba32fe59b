import fsp from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Renames and deletes that wait out a file another program holds. On Windows antivirus scanners, Explorer's preview
 * and media players open files without sharing delete access, and a rename or delete fails with EBUSY, EPERM or
 * EACCES (ENOTEMPTY for a folder whose last file is still being released) until they let go, usually within a second.
 * Elsewhere only EBUSY (a mount point, a file an NFS client holds) is worth a retry: EPERM there is a real refusal.
 */
export interface RetryOptions {
  /** Tries in all (default 6: waits of 50, 100, 200, 400 and 800 ms, about 1.5 s before giving up). */
  attempts?: number;
  delayMs?: number;
  /** Whose rules apply (default: this machine's). */
  platform?: NodeJS.Platform;
  /** The file operations used; tests hand in ones that fail on purpose. */
  ops?: Partial<FileOps>;
}

export interface FileOps {
  rename(from: string, to: string): Promise<void>;
  rm(target: string, opts: { recursive: boolean; force: boolean }): Promise<void>;
}

const REAL: FileOps = { rename: (a, b) => fsp.rename(a, b), rm: (t, o) => fsp.rm(t, o) };

/** Whether an error is one a program holding the file causes, on `platform`. */
export function isBusy(err: unknown, platform: NodeJS.Platform = process.platform): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EBUSY') return true;
  return platform === 'win32' && (code === 'EPERM' || code === 'EACCES' || code === 'ENOTEMPTY');
}

/** Runs `op`, trying again with doubling waits while it fails because the file is busy; the last error is thrown. */
export async function retryBusy<T>(op: () => Promise<T>, o: RetryOptions = {}): Promise<T> {
  const attempts = Math.max(1, o.attempts ?? 6);
  for (let i = 1; ; i++) {
    try {
      return await op();
    } catch (err) {
      if (i >= attempts || !isBusy(err, o.platform)) throw err;
      await sleep((o.delayMs ?? 50) * 2 ** (i - 1));
    }
  }
}

/** `rename`, retried while the file is busy. */
export function renameRetrying(from: string, to: string, o: RetryOptions = {}): Promise<void> {
  const rename = o.ops?.rename ?? REAL.rename;
  return retryBusy(() => rename(from, to), o);
}

/** Removes a file or a folder with its contents (nothing if it is missing), retried while something is busy. */
export function removeRetrying(target: string, o: RetryOptions = {}): Promise<void> {
  const rm = o.ops?.rm ?? REAL.rm;
  return retryBusy(() => rm(target, { recursive: true, force: true }), o);
}
