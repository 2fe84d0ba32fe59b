import fsp from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { MediaRoot } from '../files/media-root.js';
import { Conflict } from '../errors.js';
import { isBusy, renameRetrying } from '../files/retry.js';
import { badRequest, conflict, notFound } from '../http/errors.js';
import { newId, nowIso } from '../ids.js';
import type { BoardEvents } from './events.js';
import type { BoardStore } from './store.js';
import {
  MEDIA_TYPES,
  type Board,
  type BoardSummary,
  type Element,
  type ElementPatch,
  type ElementType,
  type NewElement,
} from './schemas.js';

/** Fills in a new element of one type before it is stored (html cards create their backing file this way). */
export type ElementInitializer = (board: Board, input: NewElement) => Promise<NewElement>;

/**
 * Boards and elements: the records every feature stands on. Features add elements through here (never through
 * SQL), which keeps the board's `updated_at`, the element events and media probing in one place.
 */
/** What a BoardService is built from: app.ts creates each piece where it is owned and passes it in. */
export interface BoardServiceParts {
  store: BoardStore;
  dataDir: string;
  media: MediaRoot;
  events: BoardEvents;
  log: FastifyBaseLogger;
  /** Queues a new media element for probing (the prober lives in app.ts, so boards stays free of tool imports). */
  probe: (element: Element) => void;
  /** Per element type, what fills in a new element before it is stored (features list theirs in features.ts). */
  initializers: Partial<Record<ElementType, ElementInitializer>>;
  /** `data` keys that only the service writes (a card's backing file and version); clients cannot set them. */
  serviceDataKeys: readonly string[];
}

export class BoardService {
  readonly store: BoardStore;
  private readonly dataDir: string;
  private readonly root: MediaRoot;
  private readonly events: BoardEvents;
  private readonly log: FastifyBaseLogger;
  private readonly probeLater: (element: Element) => void;
  private readonly initializers: Partial<Record<ElementType, ElementInitializer>>;
  private readonly serviceDataKeys: ReadonlySet<string>;

  constructor(parts: BoardServiceParts) {
    this.store = parts.store;
    this.dataDir = parts.dataDir;
    this.root = parts.media;
    this.events = parts.events;
    this.log = parts.log;
    this.probeLater = parts.probe;
    this.initializers = parts.initializers;
    this.serviceDataKeys = new Set(parts.serviceDataKeys);
  }

  /** Refuses element data from a client that sets a key the service owns. */
  checkClientData(data: Record<string, unknown> | undefined): void {
    for (const key of Object.keys(data ?? {})) {
      if (this.serviceDataKeys.has(key))
        throw badRequest(`data.${key} is managed by the service and cannot be set`, { field: `data.${key}` });
    }
  }

  listBoards(): BoardSummary[] {
    return this.store.listBoards();
  }

  /** Every connected folder of a board (the service writes into them, so start-up cleans them too). */
  connectedFolders(): string[] {
    return this.store.connectedFolders();
  }

  requireBoard(id: string): Board {
    const board = this.store.getBoard(id);
    if (!board) throw notFound(`Board ${id} not found`);
    return board;
  }

  async createBoard(name: string): Promise<Board> {
    const at = nowIso();
    const board: Board = {
      id: newId('bd_'),
      name: name.trim(),
      connected_folder: null,
      created_at: at,
      updated_at: at,
    };
    if (!board.name) throw badRequest('name must not be empty');
    this.store.insertBoard(board);
    await fsp.mkdir(this.root.defaultBoardDir(board.id), { recursive: true });
    this.emitSafely(() => this.events.emit('board-created', board));
    return board;
  }

  async updateBoard(id: string, patch: { name?: string; connected_folder?: string | null }): Promise<Board> {
    this.requireBoard(id);
    const fields: Parameters<BoardStore['updateBoard']>[1] = { updated_at: nowIso() };
    if (patch.name !== undefined) {
      if (!patch.name.trim()) throw badRequest('name must not be empty');
      fields.name = patch.name.trim();
    }
    if (patch.connected_folder !== undefined) {
      const folder = patch.connected_folder === null ? null : await this.checkConnectedFolder(patch.connected_folder);
      if (folder !== this.requireBoard(id).connected_folder && this.store.countFileElements(id) > 0) {
        // The elements' /media URLs would silently point into the other folder: to a missing file, or to a user's
        // own file of the same name that a card write would then replace.
        throw conflict(
          'The folder of a board that already has files cannot change; connect a folder to a new or empty board',
        );
      }
      fields.connected_folder = folder;
    }
    this.store.updateBoard(id, fields);
    const board = this.requireBoard(id);
    this.emitSafely(() => this.events.emit('board-updated', board));
    return board;
  }

  /** A connected folder must be an existing directory outside the service's own data (which holds the database). */
  private async checkConnectedFolder(folder: string): Promise<string> {
    if (!path.isAbsolute(folder)) throw badRequest('connected_folder must be an absolute path');
    let real: string;
    try {
      real = await fsp.realpath(folder);
      if (!(await fsp.stat(real)).isDirectory()) throw new Error('not a directory');
    } catch {
      throw badRequest(`connected_folder ${folder} is not an existing directory`);
    }
    const data = await fsp.realpath(this.dataDir).catch(() => this.dataDir);
    const inside = (a: string, b: string) => a === b || a.startsWith(b.endsWith(path.sep) ? b : b + path.sep);
    if (path.parse(real).root === real || inside(data, real) || inside(real, data)) {
      throw badRequest(
        'connected_folder must not be a drive root, the service data folder, or a folder inside or above it',
      );
    }
    return real;
  }

  /**
   * Deletes the board: its default folder moves to DATA_DIR/trash rather than being destroyed, then the record goes.
   * The folder first, so a folder that cannot move (another program still holds a file in it after the retries, as
   * on Windows) leaves the board whole (409 folder_busy) rather than a record-less folder nobody can reach.
   */
  async deleteBoard(id: string): Promise<void> {
    const board = this.requireBoard(id);
    const dir = this.root.defaultBoardDir(id);
    const trash = path.join(this.dataDir, 'trash');
    await fsp.mkdir(trash, { recursive: true });
    const trashed = path.join(trash, `${id}-${Date.now()}`);
    let moved = false;
    try {
      await renameRetrying(dir, trashed);
      moved = true;
    } catch (err) {
      if (isBusy(err)) {
        throw new Conflict(
          'The board folder is in use by another program; close its files and try again',
          undefined,
          'folder_busy',
        );
      }
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    try {
      this.store.deleteBoard(id);
    } catch (err) {
      if (moved) await renameRetrying(trashed, dir).catch(() => undefined);
      throw err;
    }
    this.emitSafely(() => this.events.emit('board-deleted', board));
  }

  getBoardWithElements(id: string): Board & { elements: Element[] } {
    const board = this.requireBoard(id);
    return { ...board, elements: this.store.listElements(id) };
  }

  listElements(boardId: string, type?: ElementType): Element[] {
    this.requireBoard(boardId);
    return this.store.listElements(boardId, type);
  }

  requireElement(boardId: string, elementId: string): Element {
    this.requireBoard(boardId);
    const el = this.store.getElement(elementId);
    if (!el || el.board_id !== boardId) throw notFound(`Element ${elementId} not found on board ${boardId}`);
    return el;
  }

  /** The element and the absolute path of its file (404 when it has none or the file is gone). */
  async elementFile(boardId: string, elementId: string): Promise<{ element: Element; path: string }> {
    const element = this.requireElement(boardId, elementId);
    if (!element.url) throw badRequest(`Element ${elementId} has no file`);
    const resolved = await this.root.resolveUrl(element.url);
    return { element, path: resolved.path };
  }

  async addElement(boardId: string, input: NewElement): Promise<Element> {
    const board = this.requireBoard(boardId);
    const init = this.initializers[input.type];
    const filled = init ? await init(board, input) : input;
    let url: string | null = filled.url ?? null;
    if (url !== null) {
      const resolved = await this.root.resolveField(url, 'url');
      url = resolved.boardId
        ? this.root.urlFor(resolved.boardId, resolved.relative)
        : this.root.rootUrl(resolved.relative);
    } else if (input.type !== 'text') {
      throw badRequest(`url is required for an element of type ${input.type}`);
    }
    const at = nowIso();
    const element: Element = {
      id: newId('el_'),
      board_id: boardId,
      type: filled.type,
      url,
      name: filled.name ?? null,
      data: { ...(filled.data ?? {}) },
      x: filled.x ?? 0,
      y: filled.y ?? 0,
      width: filled.width ?? null,
      height: filled.height ?? null,
      created_at: at,
      updated_at: at,
    };
    const probe = url !== null && MEDIA_TYPES.includes(element.type);
    if (probe) element.data.probe_status = 'pending';
    this.store.transaction(() => {
      this.store.insertElement(element);
      this.store.touchBoard(boardId, at);
    });
    this.emitSafely(() => this.events.emit('element-added', element, board));
    if (probe) this.probeLater(element);
    return element;
  }

  /** PATCH semantics: given fields replace; `data` is merged key by key (a key set to null is removed). */
  updateElement(boardId: string, elementId: string, patch: ElementPatch): Element {
    const updated = this.store.transaction(() => {
      const el = this.requireElement(boardId, elementId);
      const data = { ...el.data };
      for (const [k, v] of Object.entries(patch.data ?? {})) {
        if (v === null) delete data[k];
        else data[k] = v;
      }
      const next: Element = {
        ...el,
        name: patch.name !== undefined ? patch.name : el.name,
        x: patch.x ?? el.x,
        y: patch.y ?? el.y,
        width: patch.width !== undefined ? patch.width : el.width,
        height: patch.height !== undefined ? patch.height : el.height,
        data,
        updated_at: nowIso(),
      };
      this.store.updateElement(next);
      this.store.touchBoard(boardId, next.updated_at);
      return next;
    });
    this.emitSafely(() => this.events.emit('element-updated', updated));
    return updated;
  }

  /**
   * Read-modify-write of an element's data inside one SQLite transaction, so concurrent writers (html versions,
   * probes) never lose each other's keys. `fn` must be synchronous.
   */
  mutateElementData(
    elementId: string,
    fn: (data: Record<string, unknown>, element: Element) => Record<string, unknown>,
  ): Element {
    const updated = this.store.mutateElementData(elementId, fn);
    this.emitSafely(() => this.events.emit('element-updated', updated));
    return updated;
  }

  /** Removes the element record. Its file stays in the board folder: deleting a card never destroys a user's file. */
  deleteElement(boardId: string, elementId: string): void {
    const el = this.requireElement(boardId, elementId);
    this.store.transaction(() => {
      this.store.deleteElement(elementId);
      this.store.touchBoard(boardId, nowIso());
    });
    this.emitSafely(() => this.events.emit('element-deleted', el));
  }

  private emitSafely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ err }, 'board event listener failed');
    }
  }
}
