import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import yazl from 'yazl';
import type { HistoryStore } from '../generation/history.js';
import type { AppContext } from '../context.js';
import { tempPathIn } from '../files/atomic.js';
import { renameRetrying } from '../files/retry.js';
import { conflict, notFound } from '../http/errors.js';
import { newId, nowIso } from '../ids.js';
import { PageBuilder, type CardSources, type PageFile } from './page.js';
import type { ShareAnswerT, ShareState } from './schemas.js';
import { ShareStore, type Manifest, type ShareRow } from './store.js';
import { WorkerClient, type UploadBody } from './worker-client.js';
import { Unavailable } from '../errors.js';

declare module '../boards/events.js' {
  interface BoardEventMap {
    /** A share started or finished uploading, failed, or ended (the live event stream's `share.updated`). */
    'share-updated': [ShareState];
  }
}

/** Files sent to the worker at once. */
const PARALLEL_UPLOADS = 4;
/** Already-compressed formats are stored in archives, not deflated again (saves CPU, costs no size). */
const STORED = /\.(jpe?g|png|webp|avif|gif|mp4|webm|mov|mp3|m4a|ogg|zip)$/i;

export interface Progress {
  signal?: AbortSignal;
  onProgress?: (fraction: number) => void;
}

/** The bytes of a page file and its sha-256 (made on demand for derived files). */
async function materialise(file: PageFile): Promise<{ body: UploadBody; sha256: string }> {
  const src = file.source;
  if ('file' in src) {
    const st = await fsp.stat(src.file);
    // Original media is keyed by its sha-256 already; R2 checks the bytes against it.
    return { body: { file: src.file, size: st.size }, sha256: file.key };
  }
  const data = 'data' in src ? src.data : await src.make();
  return { body: { data }, sha256: crypto.createHash('sha256').update(data).digest('hex') };
}

/** Live shares on the user's worker, and ZIP archives, of a board. */
export class SharingService {
  readonly store: ShareStore;
  private readonly pages: PageBuilder;
  /** One share operation per board at a time (two uploads racing over one manifest would lose entries). */
  private readonly busy = new Set<string>();

  constructor(
    private readonly ctx: AppContext,
    generations: HistoryStore,
    html: CardSources,
  ) {
    this.store = new ShareStore(ctx.db);
    this.pages = new PageBuilder(ctx, this.store, generations, html);
  }

  /** Announces the share's state once its row says so. */
  private announce(row: ShareRow, state: ShareState['state']): void {
    const { id, board_id, kind, url, download_url } = row;
    this.ctx.events.emit('share-updated', {
      share_id: id,
      board_id,
      kind,
      state,
      url,
      download_url,
      updated_at: nowIso(),
    });
  }

  private worker(): WorkerClient {
    const { shareWorkerUrl: url, shareWorkerToken: token, shareUploadPartBytes: partBytes } = this.ctx.config;
    if (!url || !token) {
      throw new Unavailable(
        'share_worker_not_configured',
        'Live shares need SHARE_WORKER_URL and SHARE_WORKER_TOKEN (see docs/sharing.md); archives work without them',
      );
    }
    return new WorkerClient({ url, token, partBytes });
  }

  private async exclusive<T>(boardId: string, fn: () => Promise<T>): Promise<T> {
    if (this.busy.has(boardId)) throw conflict(`A share of board ${boardId} is already being written`);
    this.busy.add(boardId);
    try {
      return await fn();
    } finally {
      this.busy.delete(boardId);
    }
  }

  /** Checks that need no network, so that mistakes answer at once even for a queued job. */
  checkLive(boardId: string, resuming: boolean): void {
    this.ctx.boards.requireBoard(boardId);
    this.worker();
    const row = this.store.live(boardId);
    if (!resuming && row?.complete)
      throw conflict(`Board ${boardId} is already shared at ${row.url}; PUT updates it, DELETE ends it`, {
        share_id: row.id,
        url: row.url,
      });
    if (resuming && !row) throw notFound(`Board ${boardId} has no live share`);
  }

  /** POST kind live: a new share, or the completion of one whose first upload failed part-way. */
  createLive(boardId: string, includeHistory: boolean, p: Progress = {}): Promise<ShareAnswerT> {
    this.checkLive(boardId, false);
    return this.exclusive(boardId, async () => {
      const client = this.worker();
      let row = this.store.live(boardId);
      if (!row) {
        const id = newId('sh_');
        const at = nowIso();
        row = {
          id,
          board_id: boardId,
          kind: 'live',
          url: client.pageUrl(id),
          download_url: null,
          include_history: includeHistory ? 1 : 0,
          manifest: '{}',
          complete: 0,
          created_at: at,
          updated_at: at,
        };
        this.store.insert(row);
      }
      return this.upload(client, row, includeHistory, p);
    });
  }

  /** PUT: uploads what changed since the last upload (or what a failed one did not get to). */
  updateLive(boardId: string, includeHistory: boolean | undefined, p: Progress = {}): Promise<ShareAnswerT> {
    this.checkLive(boardId, true);
    return this.exclusive(boardId, async () => {
      const row = this.store.live(boardId)!;
      return this.upload(this.worker(), row, includeHistory ?? row.include_history === 1, p);
    });
  }

  /** DELETE: removes every object of the share from the bucket, then forgets it. */
  async deleteLive(boardId: string, signal?: AbortSignal): Promise<{ share_id: string; deleted: number }> {
    this.ctx.boards.requireBoard(boardId);
    const row = this.store.live(boardId);
    if (!row) throw notFound(`Board ${boardId} has no live share`);
    return this.exclusive(boardId, async () => {
      const deleted = await this.worker().deleteShare(row.id, signal);
      this.store.delete(row.id);
      this.announce(row, 'deleted');
      return { share_id: row.id, deleted };
    });
  }

  /**
   * A deleted board's shares end with it: its live share's objects are removed from the bucket in the background
   * (logged when the worker cannot be reached; the row stays so that a later attempt could find it), its rows dropped.
   */
  endSharesOf(boardId: string): void {
    for (const row of this.store.ofBoard(boardId)) {
      if (row.kind === 'archive') {
        this.store.delete(row.id);
        this.announce(row, 'deleted');
        continue;
      }
      const config = this.ctx.config;
      if (!config.shareWorkerUrl || !config.shareWorkerToken) continue;
      this.worker()
        .deleteShare(row.id)
        .then(() => {
          this.store.delete(row.id);
          this.announce(row, 'deleted');
        })
        .catch((err: unknown) =>
          this.ctx.log.warn({ err, share: row.id }, 'could not remove the live share of a deleted board'),
        );
    }
  }

  /**
   * Uploads the page: every file whose content key differs from the manifest's, media first and index.html last (the
   * page never points at a file that is not there yet). The manifest is saved after each file, so a failed upload
   * retried starts where it stopped. Files of the previous upload that the page no longer has are removed.
   */
  private async upload(
    client: WorkerClient,
    row: ShareRow,
    includeHistory: boolean,
    p: Progress,
  ): Promise<ShareAnswerT> {
    try {
      const answer = await this.uploadPage(client, row, includeHistory, p);
      this.announce(row, 'complete');
      return answer;
    } catch (err) {
      this.announce(row, 'failed');
      throw err;
    }
  }

  private async uploadPage(
    client: WorkerClient,
    row: ShareRow,
    includeHistory: boolean,
    p: Progress,
  ): Promise<ShareAnswerT> {
    const page = await this.pages.build(row.board_id, {
      includeHistory,
      inlineData: false,
      publicUrl: row.url ?? undefined,
      signal: p.signal,
    });
    const manifest: Manifest = JSON.parse(row.manifest) as Manifest;
    // Until the new upload is whole the share counts as incomplete (a later POST resumes it).
    this.store.update(row.id, { complete: 0, include_history: includeHistory ? 1 : 0, updated_at: nowIso() });
    this.announce(row, 'uploading');
    const rank = (f: PageFile) => (f.path === 'index.html' ? 2 : f.path === 'board.json' ? 1 : 0);
    const todo = page.files.filter((f) => manifest[f.path] !== f.key).sort((a, b) => rank(a) - rank(b));
    const skipped = page.files.length - todo.length;
    let uploaded = 0;
    let bytes = 0;
    const send = async (f: PageFile) => {
      const { body, sha256 } = await materialise(f);
      const sent = await client.put(row.id, f.path, body, f.contentType, sha256, p.signal);
      bytes += sent;
      manifest[f.path] = f.key;
      this.store.update(row.id, { manifest: JSON.stringify(manifest) });
      uploaded++;
      p.onProgress?.(uploaded / Math.max(1, todo.length));
    };
    const media = todo.filter((f) => rank(f) === 0);
    let next = 0;
    let failure: { err: unknown } | undefined;
    // On a failure the other lanes finish the file they are sending (and record it) but take no new one, so the
    // share is idle again when the error is answered and a retry cannot race a stray upload.
    await Promise.all(
      Array.from({ length: Math.min(PARALLEL_UPLOADS, media.length) }, async () => {
        while (!failure && next < media.length) {
          try {
            await send(media[next++]);
          } catch (err) {
            failure ??= { err };
          }
        }
      }),
    );
    if (failure) throw failure.err;
    for (const f of todo.filter((t) => rank(t) > 0)) await send(f);
    const wanted = new Set(page.files.map((f) => f.path));
    for (const stale of Object.keys(manifest).filter((k) => !wanted.has(k))) {
      await client.deleteObject(row.id, stale, p.signal);
      delete manifest[stale];
    }
    this.store.update(row.id, { manifest: JSON.stringify(manifest), complete: 1, updated_at: nowIso() });
    return {
      share_id: row.id,
      kind: 'live',
      url: row.url,
      download_url: null,
      files: page.files.length,
      uploaded,
      skipped,
      bytes_uploaded: bytes,
    };
  }

  /**
   * A ZIP of the page (data inlined, so it opens from file://) at /media/share-archive-<share_id>.zip. The archive is
   * streamed to a temp file beside its final place as it is written (media are read from disk while zipping, never
   * held whole), then renamed.
   */
  async createArchive(boardId: string, includeHistory: boolean, p: Progress = {}): Promise<ShareAnswerT> {
    this.ctx.boards.requireBoard(boardId);
    const id = newId('sh_');
    const page = await this.pages.build(boardId, { includeHistory, inlineData: true, signal: p.signal });
    const filename = `share-archive-${id}.zip`;
    const target = path.join(this.ctx.media.root, filename);
    const temp = tempPathIn(this.ctx.media.root, filename);
    try {
      await writeZip(page.files, temp, p);
      await renameRetrying(temp, target);
    } finally {
      await fsp.rm(temp, { force: true });
    }
    const at = nowIso();
    const manifest = Object.fromEntries(page.files.map((f) => [f.path, f.key]));
    const downloadUrl = this.ctx.media.rootUrl(filename);
    const row: ShareRow = {
      id,
      board_id: boardId,
      kind: 'archive',
      url: null,
      download_url: downloadUrl,
      include_history: includeHistory ? 1 : 0,
      manifest: JSON.stringify(manifest),
      complete: 1,
      created_at: at,
      updated_at: at,
    };
    this.store.insert(row);
    this.announce(row, 'complete');
    return { share_id: id, kind: 'archive', url: null, download_url: downloadUrl, files: page.files.length };
  }
}

/** Writes the files into a ZIP at `target` with yazl, streaming from disk; derived files are made one at a time. */
export async function writeZip(files: PageFile[], target: string, p: Progress = {}): Promise<void> {
  const zip = new yazl.ZipFile();
  const out = fs.createWriteStream(target, { flags: 'wx' });
  const done = new Promise<void>((resolve, reject) => {
    out.on('close', resolve);
    out.on('error', reject);
    zip.outputStream.on('error', reject);
  });
  zip.outputStream.pipe(out);
  const mtime = new Date('2000-01-01T00:00:00Z');
  try {
    let n = 0;
    for (const f of files) {
      p.signal?.throwIfAborted();
      const compress = !STORED.test(f.path);
      if ('file' in f.source) zip.addFile(f.source.file, f.path, { compress, mtime, mode: 0o100644 });
      else
        zip.addBuffer('data' in f.source ? f.source.data : await f.source.make(), f.path, {
          compress,
          mtime,
          mode: 0o100644,
        });
      p.onProgress?.(++n / files.length);
    }
    zip.end();
    await done;
    const handle = await fsp.open(target, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (err) {
    out.destroy();
    await done.catch(() => undefined);
    throw err;
  }
}
