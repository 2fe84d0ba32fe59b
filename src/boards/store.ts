import type { Db } from '../db/database.js';
import { migrate } from '../db/database.js';
import { notFound } from '../http/errors.js';
import { storedJson } from '../http/json-body.js';
import { nowIso } from '../ids.js';
import type { Board, BoardSummary, Element, ElementType } from './schemas.js';

/** An element's `data` as stored JSON: a client merges keys into it one PATCH at a time, so it is bounded here. */
export const MAX_ELEMENT_DATA_BYTES = 1024 * 1024;

const MIGRATIONS = [
  `CREATE TABLE boards (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    connected_folder TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE TABLE elements (
    id TEXT PRIMARY KEY,
    board_id TEXT NOT NULL REFERENCES boards(id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    url TEXT,
    name TEXT,
    data TEXT NOT NULL DEFAULT '{}',
    x REAL NOT NULL DEFAULT 0,
    y REAL NOT NULL DEFAULT 0,
    width REAL,
    height REAL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX elements_board ON elements(board_id, created_at);`,
];

interface ElementRow extends Omit<Element, 'data'> {
  data: string;
}

/**
 * Position and size as numbers an answer can carry. Requests can no longer store Infinity (bodies are validated as
 * sent), but a database written by older code may hold it in these REAL columns: such a value reads as the field's
 * default (0, or null for a size) instead of making every answer about the board fail; the next write stores it.
 */
const finiteOr = <T>(v: number | null, fallback: T): number | T =>
  typeof v === 'number' && Number.isFinite(v) ? v : fallback;

const toElement = (r: ElementRow): Element => ({
  ...r,
  x: finiteOr(r.x, 0),
  y: finiteOr(r.y, 0),
  width: finiteOr(r.width, null),
  height: finiteOr(r.height, null),
  data: JSON.parse(r.data) as Record<string, unknown>,
});

/** SQL for boards and elements. */
export class BoardStore {
  /** Prepared once: every /media request looks its board up, and compiling the SQL cost more than running it. */
  private readonly boardById;
  /** connectedFolderOf's answers, forgotten on every write to boards. */
  private readonly folders = new Map<string, string | null | undefined>();

  constructor(private readonly db: Db) {
    migrate(db, 'boards', MIGRATIONS);
    this.boardById = db.prepare('SELECT id, name, connected_folder, created_at, updated_at FROM boards WHERE id = ?');
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  listBoards(): BoardSummary[] {
    return this.db
      .prepare(
        `SELECT b.id, b.name, b.created_at, b.updated_at, COUNT(e.id) AS element_count
         FROM boards b LEFT JOIN elements e ON e.board_id = b.id GROUP BY b.id ORDER BY b.updated_at DESC, b.id`,
      )
      .all() as BoardSummary[];
  }

  getBoard(id: string): Board | undefined {
    return this.boardById.get(id) as Board | undefined;
  }

  /**
   * A board's connected folder (null: none; undefined: no such board), remembered until the next write to boards:
   * every /media request asks, and the query with its file lock cost a tenth of a 64 KiB range. Nothing is
   * remembered inside a transaction, whose writes could still roll back.
   */
  connectedFolderOf(id: string): string | null | undefined {
    if (this.folders.has(id)) return this.folders.get(id);
    const folder = this.getBoard(id)?.connected_folder;
    if (!this.db.inTransaction) {
      if (this.folders.size >= 1024) this.folders.clear();
      this.folders.set(id, folder);
    }
    return folder;
  }

  connectedFolders(): string[] {
    return (
      this.db.prepare('SELECT DISTINCT connected_folder AS f FROM boards WHERE connected_folder IS NOT NULL').all() as {
        f: string;
      }[]
    ).map((r) => r.f);
  }

  insertBoard(b: Board): void {
    this.folders.clear();
    this.db
      .prepare(
        'INSERT INTO boards (id, name, connected_folder, created_at, updated_at) VALUES (@id, @name, @connected_folder, @created_at, @updated_at)',
      )
      .run(b);
  }

  updateBoard(id: string, fields: Partial<Pick<Board, 'name' | 'connected_folder' | 'updated_at'>>): void {
    const keys = Object.keys(fields) as (keyof typeof fields)[];
    if (keys.length === 0) return;
    this.folders.clear();
    this.db
      .prepare(`UPDATE boards SET ${keys.map((k) => `${k} = @${k}`).join(', ')} WHERE id = @id`)
      .run({ ...fields, id });
  }

  deleteBoard(id: string): void {
    this.folders.clear();
    this.db.prepare('DELETE FROM boards WHERE id = ?').run(id);
  }

  touchBoard(id: string, at: string): void {
    this.db.prepare('UPDATE boards SET updated_at = ? WHERE id = ?').run(at, id);
  }

  listElements(boardId: string, type?: ElementType): Element[] {
    const rows = this.db
      .prepare('SELECT * FROM elements WHERE board_id = ? AND (? IS NULL OR type = ?) ORDER BY created_at, rowid')
      .all(boardId, type ?? null, type ?? null) as ElementRow[];
    return rows.map(toElement);
  }

  getElement(id: string): Element | undefined {
    const row = this.db.prepare('SELECT * FROM elements WHERE id = ?').get(id) as ElementRow | undefined;
    return row ? toElement(row) : undefined;
  }

  insertElement(e: Element): void {
    this.db
      .prepare(
        `INSERT INTO elements (id, board_id, type, url, name, data, x, y, width, height, created_at, updated_at)
         VALUES (@id, @board_id, @type, @url, @name, @data, @x, @y, @width, @height, @created_at, @updated_at)`,
      )
      .run({ ...e, data: storedJson(e.data, 'data', MAX_ELEMENT_DATA_BYTES) });
  }

  /** Rewrites an element's data in one transaction (the prober stores its facts here; features via BoardService). */
  mutateElementData(
    elementId: string,
    fn: (data: Record<string, unknown>, element: Element) => Record<string, unknown>,
  ): Element {
    return this.transaction(() => {
      const el = this.getElement(elementId);
      if (!el) throw notFound(`Element ${elementId} not found`);
      const next: Element = { ...el, data: fn({ ...el.data }, el), updated_at: nowIso() };
      this.updateElement(next);
      return next;
    });
  }

  updateElement(e: Element): void {
    this.db
      .prepare(
        `UPDATE elements SET url = @url, name = @name, data = @data, x = @x, y = @y, width = @width, height = @height,
         updated_at = @updated_at WHERE id = @id`,
      )
      .run({ ...e, data: storedJson(e.data, 'data', MAX_ELEMENT_DATA_BYTES) });
  }

  deleteElement(id: string): void {
    this.db.prepare('DELETE FROM elements WHERE id = ?').run(id);
  }

  countFileElements(boardId: string): number {
    return (
      this.db.prepare('SELECT COUNT(*) AS n FROM elements WHERE board_id = ? AND url IS NOT NULL').get(boardId) as {
        n: number;
      }
    ).n;
  }
}
