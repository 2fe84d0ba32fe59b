import { migrate, type Db } from '../db/database.js';

export interface MockupRow {
  id: string;
  board_id: string;
  name: string;
  device: string;
  /** JSON text of the whole project state as saved (unknown fields included). */
  data: string;
  duration_seconds: number;
  created_at: string;
  updated_at: string;
}

const MIGRATIONS = [
  `CREATE TABLE mockup_projects (
    id TEXT PRIMARY KEY,
    board_id TEXT NOT NULL REFERENCES boards(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    device TEXT NOT NULL,
    data TEXT NOT NULL,
    duration_seconds REAL NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX mockup_projects_board ON mockup_projects(board_id, updated_at);`,
];

/** SQL of the mockup projects: one row per project; the list's fields are columns, the state a JSON blob. */
export class MockupStore {
  constructor(private readonly db: Db) {
    migrate(db, 'mockups', MIGRATIONS);
  }

  list(boardId: string): MockupRow[] {
    return this.db
      .prepare('SELECT * FROM mockup_projects WHERE board_id = ? ORDER BY updated_at DESC, id')
      .all(boardId) as MockupRow[];
  }

  /** A project of that board; a project of another board is not found. */
  get(boardId: string, id: string): MockupRow | undefined {
    return this.db.prepare('SELECT * FROM mockup_projects WHERE id = ? AND board_id = ?').get(id, boardId) as
      | MockupRow
      | undefined;
  }

  insert(row: MockupRow): void {
    this.db
      .prepare(
        `INSERT INTO mockup_projects (id, board_id, name, device, data, duration_seconds, created_at, updated_at)
         VALUES (@id, @board_id, @name, @device, @data, @duration_seconds, @created_at, @updated_at)`,
      )
      .run(row);
  }

  /** Replaces the whole state in one statement (a reader sees the old or the new project, never a mix). */
  replace(row: Omit<MockupRow, 'created_at'>): boolean {
    const r = this.db
      .prepare(
        `UPDATE mockup_projects SET name = @name, device = @device, data = @data, duration_seconds = @duration_seconds, updated_at = @updated_at
         WHERE id = @id AND board_id = @board_id`,
      )
      .run(row);
    return r.changes > 0;
  }

  delete(boardId: string, id: string): boolean {
    return this.db.prepare('DELETE FROM mockup_projects WHERE id = ? AND board_id = ?').run(id, boardId).changes > 0;
  }
}
