import { migrate, type Db } from '../db/database.js';

export interface ProjectRow {
  id: string;
  board_id: string;
  name: string;
  /** JSON text of the project data, stored as given. */
  data: string;
  /** The summary's duration, kept at each save so a listing never parses the projects; null in older rows. */
  duration: number | null;
  created_at: string;
  last_modified: string;
}

const MIGRATIONS = [
  `CREATE TABLE video_projects (
    id TEXT PRIMARY KEY,
    board_id TEXT NOT NULL REFERENCES boards(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_modified TEXT NOT NULL
  );
  CREATE INDEX video_projects_board ON video_projects(board_id, last_modified);`,
  `ALTER TABLE video_projects ADD COLUMN duration REAL;`,
];

/** SQL of the video projects: one row per project, its data a JSON blob replaced whole on each save. */
export class ProjectStore {
  constructor(private readonly db: Db) {
    migrate(db, 'timeline', MIGRATIONS);
  }

  /** The projects of a board without their data, most recently saved first. */
  list(boardId: string): Omit<ProjectRow, 'data'>[] {
    return this.db
      .prepare(
        'SELECT id, board_id, name, duration, created_at, last_modified FROM video_projects WHERE board_id = ? ORDER BY last_modified DESC, id',
      )
      .all(boardId) as Omit<ProjectRow, 'data'>[];
  }

  /** A project of that board; a project of another board is not found. */
  get(boardId: string, id: string): ProjectRow | undefined {
    return this.db.prepare('SELECT * FROM video_projects WHERE id = ? AND board_id = ?').get(id, boardId) as
      | ProjectRow
      | undefined;
  }

  insert(row: ProjectRow): void {
    this.db
      .prepare(
        'INSERT INTO video_projects (id, board_id, name, data, duration, created_at, last_modified) VALUES (@id, @board_id, @name, @data, @duration, @created_at, @last_modified)',
      )
      .run(row);
  }

  /** Replaces name and data in one statement (atomic: a reader sees the old or the new project, never a mix). */
  replace(boardId: string, id: string, name: string, data: string, duration: number, lastModified: string): boolean {
    const r = this.db
      .prepare(
        'UPDATE video_projects SET name = ?, data = ?, duration = ?, last_modified = ? WHERE id = ? AND board_id = ?',
      )
      .run(name, data, duration, lastModified, id, boardId);
    return r.changes > 0;
  }

  delete(boardId: string, id: string): boolean {
    return this.db.prepare('DELETE FROM video_projects WHERE id = ? AND board_id = ?').run(id, boardId).changes > 0;
  }
}
