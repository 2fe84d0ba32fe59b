import fsp from 'node:fs/promises';
import type { Tools } from './locate.js';
import { probe, type ProbeResult } from './ffprobe.js';

const MAX_ENTRIES = 512;

/**
 * ffprobe results per file, keyed by inode, size and modification time, so operations on the same clips (a concat of
 * ten clips, a trim after a convert) do not start ffprobe again; a file replaced in place gets a new key. Board files
 * are written once and never modified, so the key is a safe identity. Oldest entries are dropped first.
 */
export class ProbeCache {
  private readonly entries = new Map<string, Promise<ProbeResult>>();

  constructor(private readonly tools: Tools) {}

  async probe(file: string): Promise<ProbeResult> {
    const st = await fsp.stat(file);
    const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${file}`;
    let entry = this.entries.get(key);
    if (!entry) {
      entry = probe(this.tools, file);
      this.entries.set(key, entry);
      entry.catch(() => this.entries.delete(key));
      if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    }
    return entry;
  }
}
