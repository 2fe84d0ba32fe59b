import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';

/** SHA-256 (hex) of a file's bytes, read as a stream. */
export async function sha256File(file: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(fs.createReadStream(file, { highWaterMark: 1024 * 1024 }), hash, { signal });
  return hash.digest('hex');
}

/**
 * Content hashes of files, remembered while a file keeps its size and modification time, so the same clip is read
 * once however many jobs use it.
 */
export class ContentHashes {
  private readonly known = new Map<string, { key: string; sha256: string }>();

  async of(file: string): Promise<{ sha256: string; size: number }> {
    const st = await fsp.stat(file);
    const key = `${st.size}:${st.mtimeMs}:${st.ino}`;
    const hit = this.known.get(file);
    if (hit?.key === key) return { sha256: hit.sha256, size: st.size };
    const sha256 = await sha256File(file);
    this.known.set(file, { key, sha256 });
    return { sha256, size: st.size };
  }
}
