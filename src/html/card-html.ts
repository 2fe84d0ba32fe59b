import fsp from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../context.js';
import type { ElementInitializer } from '../boards/service.js';
import type { Element } from '../boards/schemas.js';
import { InvalidInput, NotFound } from '../errors.js';
import { replaceFileAtomic, writeNewFile } from '../files/atomic.js';
import { folderInside, readInside, resolveInside, type MediaRoot } from '../files/media-root.js';
import { filenameFromTitle } from '../files/names.js';
import { KeyedQueue } from '../jobs/keyed-queue.js';
import type { HtmlVersionInfo, HtmlWriteResult } from './schemas.js';

/** The backing file of a new card created without a url. */
export const EMPTY_CARD =
  '<!doctype html>\n<html>\n<head>\n<meta charset="utf-8">\n</head>\n<body>\n</body>\n</html>\n';

interface Card {
  element: Element;
  url: string;
  file: string;
  version: number;
}

/** `data` keys of an html card that only the service writes: a client-set htmlUrl could aim a write at any file. */
export const HTML_CARD_DATA_KEYS = ['htmlUrl', 'htmlVersion'] as const;

/** Fills in a new html element: creates its empty backing file, or adopts the uploaded `.html` file it names. */
export function htmlCardInitializer(media: MediaRoot): ElementInitializer {
  return async (board, input) => {
    let url: string;
    if (input.url) {
      const resolved = await media.resolveField(input.url, 'url');
      if (!/\.html?$/i.test(resolved.path))
        throw new InvalidInput('url: the backing file of an html card must be an .html file');
      if (resolved.boardId !== board.id)
        throw new InvalidInput("url: the backing file of an html card must be in the card's own board folder");
      url = media.urlFor(board.id, resolved.relative);
    } else {
      const dir = await media.boardDir(board.id);
      const filename = await writeNewFile(dir, filenameFromTitle(input.name ?? undefined, 'card', 'html'), EMPTY_CARD);
      url = media.urlFor(board.id, filename);
    }
    return { ...input, url, data: { ...(input.data ?? {}), htmlUrl: url, htmlVersion: 1 } };
  };
}

/**
 * Card HTML with versions. The card's backing file (`data.htmlUrl`, in the board folder) always holds the current
 * version; a copy of every version is kept in `DATA_DIR/html-versions/<element_id>/<n>.html`, outside the media
 * root (not served, not in the user's folder). All writes to one card go through one queue, so concurrent writers
 * each get their own version number and the file always ends with the content of the highest version.
 */
export class HtmlCardService {
  private readonly queue = new KeyedQueue();
  private readonly versionsRoot: string;

  constructor(private readonly ctx: AppContext) {
    this.versionsRoot = path.join(ctx.config.dataDir, 'html-versions');
  }

  /** Keeps the first version of a card that was just added (its id exists only now). */
  keepInitialVersion(element: Element): void {
    if (element.type !== 'html') return;
    this.queue
      .run(element.id, async () => {
        const card = await this.card(element.board_id, element.id);
        await this.ensureSnapshot(card);
      })
      .catch((err: unknown) =>
        this.ctx.log.warn({ err, element: element.id }, 'could not keep the first version of an html card'),
      );
  }

  /**
   * The one write-and-bump: stores `html` as the card's next version and as its backing file, then records the
   * version in the element. Used by PUT .../html, by restore, and by the agent action `update_element_html`.
   */
  write(boardId: string, elementId: string, html: string): Promise<HtmlWriteResult> {
    return this.queue.run(elementId, () => this.writeNow(boardId, elementId, html));
  }

  /** The backing file was edited directly: its content becomes the next version. */
  changed(boardId: string, elementId: string): Promise<HtmlWriteResult> {
    return this.queue.run(elementId, async () => {
      const card = await this.card(boardId, elementId);
      // Read through the media root: a backing file replaced by a link that leads out of the board reads as missing.
      const html = await this.ctx.media.readUrl(card.url).then(
        (b) => b.toString('utf8'),
        () => {
          throw new NotFound(
            `The backing file of card ${elementId} (${card.url}) is missing or not inside its board folder`,
          );
        },
      );
      const next = (await this.highest(elementId, card.version)) + 1;
      await this.saveSnapshot(elementId, next, html);
      return this.record(card, next);
    });
  }

  async list(
    boardId: string,
    elementId: string,
  ): Promise<{ htmlUrl: string; htmlVersion: number; versions: HtmlVersionInfo[] }> {
    const card = await this.card(boardId, elementId);
    const versions: HtmlVersionInfo[] = [];
    for (const n of await this.snapshotNumbers(elementId)) {
      const file = await resolveInside(this.versionsRoot, this.snapshotSegments(elementId, n));
      const st = file ? await fsp.stat(file).catch(() => undefined) : undefined;
      if (st)
        versions.push({ version: n, size: st.size, created_at: st.mtime.toISOString(), current: n === card.version });
    }
    return { htmlUrl: card.url, htmlVersion: card.version, versions };
  }

  async read(boardId: string, elementId: string, version: number): Promise<{ version: number; html: string }> {
    await this.card(boardId, elementId);
    return { version, html: await this.readSnapshot(elementId, version) };
  }

  /** Writes version `version` back as a new version. */
  restore(boardId: string, elementId: string, version: number): Promise<HtmlWriteResult> {
    return this.queue.run(elementId, async () => {
      await this.card(boardId, elementId);
      return this.writeNow(boardId, elementId, await this.readSnapshot(elementId, version));
    });
  }

  /** Resolves once every queued write has finished (service shutdown). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  private async writeNow(boardId: string, elementId: string, html: string): Promise<HtmlWriteResult> {
    const card = await this.card(boardId, elementId);
    await this.ensureSnapshot(card);
    const next = (await this.highest(elementId, card.version)) + 1;
    // Copy first, then the file, then the record: a crash in between leaves a higher copy, never a lost version.
    await this.saveSnapshot(elementId, next, html);
    await replaceFileAtomic(card.file, html);
    return this.record(card, next);
  }

  private record(card: Card, version: number): HtmlWriteResult {
    const element = this.ctx.boards.mutateElementData(card.element.id, (data) => ({
      ...data,
      htmlUrl: card.url,
      htmlVersion: version,
    }));
    return { htmlUrl: card.url, htmlVersion: version, element };
  }

  private async card(boardId: string, elementId: string): Promise<Card> {
    const element = this.ctx.boards.requireElement(boardId, elementId);
    if (element.type !== 'html') throw new InvalidInput(`Element ${elementId} is of type ${element.type}, not html`);
    // The element's url is validated when the card is added and no client can change it (PATCH has no url, and
    // htmlUrl is a reserved data key), so it is the one source of where the card's file is.
    const url = element.url;
    if (!url) throw new InvalidInput(`Element ${elementId} has no backing file`);
    const version = Number.isInteger(element.data.htmlVersion) ? (element.data.htmlVersion as number) : 1;
    return { element, url, file: await this.backingPath(url, boardId), version };
  }

  /**
   * The backing file's path: an .html file in the card's own board folder. A file that was deleted is recreated at
   * its old place by the next write, but only when its folder still lies inside the board folder (no symlink out).
   */
  private async backingPath(url: string, boardId: string): Promise<string> {
    const refuse = () => new InvalidInput(`The backing file ${url} is not an .html file in the card's board folder`);
    try {
      const resolved = await this.ctx.media.resolveUrl(url);
      if (resolved.boardId !== boardId || !/\.html?$/i.test(resolved.path)) throw refuse();
      return resolved.path;
    } catch (err) {
      if (!(err instanceof NotFound)) throw err;
      const { base, segments, boardId: owner } = this.ctx.media.locate(url);
      const target = path.join(base, ...segments);
      if (owner !== boardId || !/\.html?$/i.test(target)) throw refuse();
      const [realBase, realParent] = await Promise.all([
        fsp.realpath(base),
        fsp.realpath(path.dirname(target)).catch(() => undefined),
      ]);
      if (!realParent || (realParent !== realBase && !realParent.startsWith(realBase + path.sep))) throw refuse();
      return path.join(realParent, path.basename(target));
    }
  }

  private async ensureSnapshot(card: Card): Promise<void> {
    if (await resolveInside(this.versionsRoot, this.snapshotSegments(card.element.id, card.version))) return;
    const html = await this.ctx.media.readUrl(card.url).catch(() => undefined);
    if (html !== undefined) await this.saveSnapshot(card.element.id, card.version, html.toString('utf8'));
  }

  /** Where a version's copy lives under versionsRoot; every read and write checks it stays there (links included). */
  private snapshotSegments(elementId: string, version: number): string[] {
    return [elementId, `${version}.html`];
  }

  private async saveSnapshot(elementId: string, version: number, html: string): Promise<void> {
    const dir = await folderInside(this.versionsRoot, [elementId]);
    await replaceFileAtomic(path.join(dir, `${version}.html`), html);
  }

  private async readSnapshot(elementId: string, version: number): Promise<string> {
    const html = await readInside(this.versionsRoot, this.snapshotSegments(elementId, version));
    if (html === undefined) throw new NotFound(`Card ${elementId} has no version ${version}`);
    return html.toString('utf8');
  }

  private async snapshotNumbers(elementId: string): Promise<number[]> {
    const dir = await resolveInside(this.versionsRoot, [elementId]);
    const names = dir ? await fsp.readdir(dir).catch(() => [] as string[]) : [];
    return names
      .map((n) => /^(\d+)\.html$/.exec(n)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
  }

  /** The highest version known, from the record or the copies (whichever is ahead after an interrupted write). */
  private async highest(elementId: string, recorded: number): Promise<number> {
    const numbers = await this.snapshotNumbers(elementId);
    return Math.max(recorded, numbers.at(-1) ?? 0);
  }
}
