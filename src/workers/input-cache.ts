import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { ServiceClient } from './service-client.js';
import { ServiceUnreachable } from './service-client.js';
import { renameRetrying } from '../files/retry.js';

export interface CachedInput {
  url: string;
  sha256: string;
  size: number;
}

/**
 * A render worker's copies of the service's media, named by content hash: a clip fetched for one job is there for
 * the next however its board names it. Files are checked against their hash as they arrive and renamed into place
 * whole; the least recently used go once the cache is over its size.
 */
export class InputCache {
  private readonly inflight = new Map<string, Promise<string>>();
  /** Files jobs are using now: never evicted under them. */
  private readonly inUse = new Map<string, number>();
  /** What was fetched and what was found, for the worker's log and the benchmark. */
  readonly stats = { fetchedBytes: 0, fetches: 0, hits: 0 };

  constructor(
    private readonly dir: string,
    private readonly service: ServiceClient,
    private readonly maxBytes: number,
    private readonly log?: { info(obj: object, msg: string): void },
  ) {}

  /** The local copy of `input`, held for the caller until `release`. */
  async acquire(input: CachedInput, signal?: AbortSignal): Promise<string> {
    const file = await this.get(input, signal);
    this.inUse.set(file, (this.inUse.get(file) ?? 0) + 1);
    return file;
  }

  release(file: string): void {
    const n = (this.inUse.get(file) ?? 1) - 1;
    if (n > 0) this.inUse.set(file, n);
    else this.inUse.delete(file);
  }

  private async get(input: CachedInput, signal?: AbortSignal): Promise<string> {
    if (!/^[0-9a-f]{64}$/.test(input.sha256)) throw new Error(`bad content hash for ${input.url}`);
    const ext = path
      .extname(decodeURIComponent(input.url.split('/').pop() ?? ''))
      .toLowerCase()
      .replace(/[^.a-z0-9]/g, '');
    const file = path.join(this.dir, `${input.sha256}${ext}`);
    const st = await fsp.stat(file).catch(() => undefined);
    if (st?.size === input.size) {
      this.stats.hits++;
      const now = new Date();
      await fsp.utimes(file, now, now).catch(() => undefined);
      return file;
    }
    let pending = this.inflight.get(file);
    if (!pending) {
      pending = this.fetch(input, file, signal).finally(() => this.inflight.delete(file));
      this.inflight.set(file, pending);
    }
    return pending;
  }

  private async fetch(input: CachedInput, file: string, signal?: AbortSignal): Promise<string> {
    await fsp.mkdir(this.dir, { recursive: true });
    const res = await this.service.request('GET', input.url, { signal });
    const part = `${file}.part-${randomBytes(6).toString('hex')}`;
    const hash = createHash('sha256');
    const tap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      const body = Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
      await pipeline(body, tap, fs.createWriteStream(part, { flags: 'wx' }), { signal });
      const got = hash.digest('hex');
      // The file changed on the service after the job was queued: trying again gets the new hash.
      if (got !== input.sha256) throw new ServiceUnreachable(`${input.url} changed while it was fetched`);
      await renameRetrying(part, file);
    } catch (err) {
      await fsp.rm(part, { force: true });
      throw err;
    }
    this.stats.fetches++;
    this.stats.fetchedBytes += input.size;
    this.log?.info({ input: input.url, bytes: input.size }, 'fetched');
    await this.evict(file);
    return file;
  }

  /** Least recently used files go until the cache fits; `keep` (just fetched) stays. */
  private async evict(keep: string): Promise<void> {
    const names = await fsp.readdir(this.dir);
    const files = [];
    for (const name of names) {
      if (name.includes('.part-')) continue;
      const full = path.join(this.dir, name);
      const st = await fsp.stat(full).catch(() => undefined);
      if (st?.isFile()) files.push({ full, size: st.size, used: st.mtimeMs });
    }
    let total = files.reduce((s, f) => s + f.size, 0);
    for (const f of files.sort((a, b) => a.used - b.used)) {
      if (total <= this.maxBytes) break;
      if (f.full === keep || this.inUse.has(f.full)) continue;
      await fsp.rm(f.full, { force: true });
      total -= f.size;
    }
  }
}
