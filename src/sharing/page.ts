import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import send from '@fastify/send';
import sharp from 'sharp';
import type { AppContext } from '../context.js';
import type { Element } from '../boards/schemas.js';
import type { HtmlCardService } from '../html/card-html.js';
import type { CardVideos } from '../html/card-video.js';
import type { HistoryStore } from '../generation/history.js';
import { runFfmpeg } from '../tools/ffmpeg.js';
import type { BoardJson, SharedElement } from './schemas.js';
import type { ShareStore } from './store.js';
import { indexHtml } from './page-template.js';

/** One file of a shared page. `key` identifies its content: equal keys, equal bytes. */
export interface PageFile {
  path: string;
  key: string;
  contentType: string;
  /** Bytes on disk, bytes in memory, or a recipe run only when the file is really needed (not yet uploaded). */
  source: { file: string } | { data: Buffer } | { make: () => Promise<Buffer> };
}

interface SharePage {
  board: BoardJson;
  files: PageFile[];
}

export interface PageOptions {
  includeHistory: boolean;
  /** Absolute URL of the live page (ends with /), for Open Graph tags; the archive has none. */
  publicUrl?: string;
  /** Put the board data into index.html (archives, so that the page works from file://). */
  inlineData: boolean;
  signal?: AbortSignal;
}

/** Widths of the image thumbnails (only those smaller than the image itself are made). */
const THUMB_WIDTHS = [320, 640, 1280] as const;
/** Bump when the thumbnail or poster recipe changes, so re-shares make them again. */
const RECIPE = 'v2';

/** The type the worker answers a file with (the same table the service's own /media serving uses). */
export const contentTypeOf = (file: string): string => {
  const type = send.mime.getType(file) ?? 'application/octet-stream';
  return type.startsWith('text/') ? `${type}; charset=utf-8` : type;
};

/** The extension a shared copy keeps: lower case letters and digits only (the worker's path rule), else `bin`. */
const safeExt = (file: string): string => {
  const ext = path.extname(file).slice(1).toLowerCase();
  return /^[a-z0-9]{1,5}$/.test(ext) ? ext : 'bin';
};

/** Keys of element data that are this machine's business (local URLs, probe state, card bookkeeping). */
const PRIVATE_DATA = new Set([
  'htmlUrl',
  'htmlVersion',
  'thumbnail_url',
  'proxy_url',
  'probe_status',
  'probe_error',
  'bridge_origin',
]);

export function publicData(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([k]) => !PRIVATE_DATA.has(k)));
}

export async function sha256File(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  await pipeline(fs.createReadStream(file), hash);
  return hash.digest('hex');
}

const sha256 = (data: string | Buffer) => crypto.createHash('sha256').update(data).digest('hex');

/** What the html feature hands sharing: a card's versions and its video. */
export interface CardSources {
  cards: HtmlCardService;
  cardVideos: CardVideos;
}

/** Builds the files of a board's shared page; media is hashed (cached by size and mtime) but not copied. */
export class PageBuilder {
  constructor(
    private readonly ctx: AppContext,
    private readonly store: ShareStore,
    /** The generation feature's history: a shared page with include_history lists the board's requests. */
    private readonly generations: HistoryStore,
    private readonly html: CardSources,
  ) {}

  private async hashOf(file: string): Promise<string> {
    const st = await fsp.stat(file);
    const cached = this.store.cachedHash(file, st.size, st.mtimeMs);
    if (cached) return cached;
    const h = await sha256File(file);
    this.store.rememberHash(file, st.size, st.mtimeMs, h);
    return h;
  }

  async build(boardId: string, opts: PageOptions): Promise<SharePage> {
    const board = this.ctx.boards.getBoardWithElements(boardId);
    const files = new Map<string, PageFile>();
    const add = (f: PageFile) => files.set(f.path, f);
    const elements: SharedElement[] = [];
    // Reading order: top to bottom, then left to right (the lightbox follows it).
    const ordered = [...board.elements].sort((a, b) => a.y - b.y || a.x - b.x);
    for (const el of ordered) {
      opts.signal?.throwIfAborted();
      elements.push(await this.element(el, add, opts));
    }
    const cover =
      elements.find((e) => e.thumbs?.length)?.thumbs?.at(-1)?.path ?? elements.find((e) => e.poster)?.poster;
    const boardJson: BoardJson = {
      format: 'board-share',
      version: 1,
      board: { name: board.name },
      cover: cover ?? null,
      elements,
      ...(opts.includeHistory ? { generations: this.generationHistory(boardId) } : {}),
    };
    const json = JSON.stringify(boardJson, null, 1);
    add({
      path: 'board.json',
      key: sha256(json),
      contentType: 'application/json',
      source: { data: Buffer.from(json) },
    });
    const html = indexHtml(boardJson, { publicUrl: opts.publicUrl, inlineData: opts.inlineData });
    add({
      path: 'index.html',
      key: sha256(html),
      contentType: contentTypeOf('x.html'),
      source: { data: Buffer.from(html) },
    });
    return { board: boardJson, files: [...files.values()] };
  }

  /** The board's generation requests, oldest first; ids and timings of this machine's jobs stay private. */
  private generationHistory(boardId: string): NonNullable<BoardJson['generations']> {
    return this.generations
      .list({ board_id: boardId, limit: 100_000 })
      .reverse()
      .map((g) => ({
        model: g.model,
        provider: g.provider,
        kind: g.kind,
        prompt: g.prompt,
        negative_prompt: g.negative_prompt,
        aspect_ratio: g.aspect_ratio,
        params: g.params,
        status: g.status,
        cost_estimate: g.cost_estimate,
        element_id: g.element_id,
        created_at: g.created_at,
        finished_at: g.finished_at,
      }));
  }

  private async element(el: Element, add: (f: PageFile) => void, opts: PageOptions): Promise<SharedElement> {
    const shared: SharedElement = {
      id: el.id,
      type: el.type,
      name: el.name,
      x: el.x,
      y: el.y,
      width: el.width,
      height: el.height,
      data: publicData(el.data),
    };
    if (el.type === 'html') return this.card(el, shared, add, opts);
    if (!el.url) return shared;
    const file = await this.ctx.media.resolveUrl(el.url).catch(() => undefined);
    if (!file) return shared; // a missing file is shown as a named placeholder rather than failing the share
    const hash = await this.hashOf(file.path);
    const ext = safeExt(file.path);
    const filePath = `media/${hash.slice(0, 32)}.${ext}`;
    add({ path: filePath, key: hash, contentType: contentTypeOf(filePath), source: { file: file.path } });
    shared.file = { path: filePath, size: file.size, sha256: hash, name: path.basename(file.path) };
    if (el.type === 'image') await this.imageExtras(file.path, hash, shared, add);
    if (el.type === 'video') await this.videoExtras(el, file.path, hash, shared, add);
    return shared;
  }

  private async imageExtras(
    source: string,
    hash: string,
    shared: SharedElement,
    add: (f: PageFile) => void,
  ): Promise<void> {
    const meta = await sharp(source, { failOn: 'none' })
      .metadata()
      .catch(() => undefined);
    if (!meta?.width || !meta.height) return;
    // EXIF orientations 5..8 swap the sides the browser shows.
    const [w, h] = (meta.orientation ?? 1) >= 5 ? [meta.height, meta.width] : [meta.width, meta.height];
    shared.media = { width: w, height: h };
    const widths = THUMB_WIDTHS.filter((tw) => tw < w);
    // All widths come from one decode of the image, made when the first of them is needed (and not at all on a
    // re-share that already uploaded them). JPEG: about five times faster to encode than WebP here, shown everywhere.
    let made: Promise<Map<number, Buffer>> | undefined;
    let pending = widths.length;
    const makeAll = async () => {
      const base = await sharp(source, { failOn: 'none' })
        .rotate()
        .resize({ width: widths.at(-1) })
        .raw()
        .toBuffer({ resolveWithObject: true });
      const out = new Map<number, Buffer>();
      for (const width of widths)
        out.set(width, await sharp(base.data, { raw: base.info }).resize({ width }).jpeg({ quality: 80 }).toBuffer());
      return out;
    };
    shared.thumbs = widths.map((width) => {
      const thumbPath = `media/${hash.slice(0, 32)}-w${width}.jpg`;
      add({
        path: thumbPath,
        key: `${hash}-w${width}-${RECIPE}`,
        contentType: 'image/jpeg',
        source: {
          make: async () => {
            const thumb = (await (made ??= makeAll())).get(width)!;
            // The last width taken lets go of the set (a share of many images holds few at a time).
            if (--pending === 0) made = undefined;
            return thumb;
          },
        },
      });
      return { width, height: Math.round((h * width) / w), path: thumbPath };
    });
  }

  private async videoExtras(
    el: Element,
    source: string,
    hash: string,
    shared: SharedElement,
    add: (f: PageFile) => void,
  ): Promise<void> {
    const w = Number(el.data.width);
    const h = Number(el.data.height);
    if (w > 0 && h > 0)
      shared.media = {
        width: w,
        height: h,
        duration: typeof el.data.duration === 'number' ? el.data.duration : undefined,
      };
    const posterPath = `media/${hash.slice(0, 32)}-poster.jpg`;
    add({
      path: posterPath,
      key: `${hash}-poster-${RECIPE}`,
      contentType: 'image/jpeg',
      source: { make: () => this.poster(source) },
    });
    shared.poster = posterPath;
  }

  /** The first frame of a video as a JPEG (the probe's thumbnail is smaller than a poster wants). */
  private async poster(video: string): Promise<Buffer> {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-poster-'));
    const out = path.join(dir, 'poster.jpg');
    try {
      await runFfmpeg(
        this.ctx.tools,
        ['-v', 'error', '-i', video, '-frames:v', '1', '-vf', 'scale=min(1280\\,iw):-2', '-q:v', '4', out],
        {
          timeoutMs: 60_000,
        },
      );
      return await fsp.readFile(out);
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  }

  private async card(
    el: Element,
    shared: SharedElement,
    add: (f: PageFile) => void,
    opts: PageOptions,
  ): Promise<SharedElement> {
    const cards = this.html.cards;
    const versions = await cards.list(el.board_id, el.id);
    const html = await cards
      .read(el.board_id, el.id, versions.htmlVersion)
      .then((v) => v.html)
      .catch(async () => fsp.readFile((await this.ctx.media.resolveUrl(versions.htmlUrl)).path, 'utf8'));
    const docPath = (text: string) => `cards/${sha256(text).slice(0, 32)}.html`;
    const addDoc = (text: string) => {
      const p = docPath(text);
      add({ path: p, key: sha256(text), contentType: contentTypeOf('x.html'), source: { data: Buffer.from(text) } });
      return p;
    };
    shared.html = { path: addDoc(html), version: versions.htmlVersion };
    const video = await this.html.cardVideos.get(el.board_id, el.id, opts.signal);
    const [vHash, pHash] = await Promise.all([this.hashOf(video.path), this.hashOf(video.posterPath)]);
    const vPath = `media/${vHash.slice(0, 32)}.mp4`;
    const pPath = `media/${pHash.slice(0, 32)}.jpg`;
    add({ path: vPath, key: vHash, contentType: 'video/mp4', source: { file: video.path } });
    add({ path: pPath, key: pHash, contentType: 'image/jpeg', source: { file: video.posterPath } });
    shared.video = { path: vPath, width: video.width, height: video.height, duration: video.duration };
    shared.poster = pPath;
    if (opts.includeHistory) {
      shared.history = [];
      for (const v of versions.versions) {
        const text = v.version === versions.htmlVersion ? html : (await cards.read(el.board_id, el.id, v.version)).html;
        shared.history.push({ version: v.version, created_at: v.created_at, path: addDoc(text) });
      }
    }
    return shared;
  }
}
