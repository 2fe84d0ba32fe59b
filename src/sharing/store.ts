import { migrate, type Db } from '../db/database.js';

type ShareKind = 'live' | 'archive';

/** path inside the share -> content key (sha-256 of the bytes, or of the source and recipe for derived files). */
export type Manifest = Record<string, string>;

export interface ShareRow {
  id: string;
  board_id: string;
  kind: ShareKind;
  url: string | null;
  download_url: string | null;
  include_history: number;
  /** live: the files that arrived on the worker (written file by file, so a retry resumes); archive: its files. */
  manifest: string;
  /** live: 1 once every file of the last upload arrived. */
  complete: number;
  created_at: string;
  updated_at: string;
}

const MIGRATIONS = [
  `CREATE TABLE shares (
    id TEXT PRIMARY KEY,
    board_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('live', 'archive')),
    url TEXT,
    download_url TEXT,
    include_history INTEGER NOT NULL DEFAULT 0,
    manifest TEXT NOT NULL DEFAULT '{}',
    complete INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE UNIQUE INDEX shares_one_live_per_board ON shares(board_id) WHERE kind = 'live';
  CREATE TABLE share_file_hashes (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ms REAL NOT NULL,
    sha256 TEXT NOT NULL
  );`,
];

/** SQL of shares, and a cache of file hashes keyed by path, size and mtime (re-shares do not re-read big files). */
export class ShareStore {
  constructor(private readonly db: Db) {
    migrate(db, 'sharing', MIGRATIONS);
  }

  live(boardId: string): ShareRow | undefined {
    return this.db.prepare("SELECT * FROM shares WHERE board_id = ? AND kind = 'live'").get(boardId) as
      | ShareRow
      | undefined;
  }

  /** Every share of a board (a deleted board's live share is ended from these; no foreign key drops them first). */
  ofBoard(boardId: string): ShareRow[] {
    return this.db.prepare('SELECT * FROM shares WHERE board_id = ?').all(boardId) as ShareRow[];
  }

  insert(row: ShareRow): void {
    this.db
      .prepare(
        `INSERT INTO shares (id, board_id, kind, url, download_url, include_history, manifest, complete, created_at, updated_at)
         VALUES (@id, @board_id, @kind, @url, @download_url, @include_history, @manifest, @complete, @created_at, @updated_at)`,
      )
      .run(row);
  }

  update(
    id: string,
    fields: Partial<Pick<ShareRow, 'manifest' | 'complete' | 'include_history' | 'updated_at'>>,
  ): void {
    const keys = Object.keys(fields);
    if (keys.length === 0) return;
    this.db
      .prepare(`UPDATE shares SET ${keys.map((k) => `${k} = @${k}`).join(', ')} WHERE id = @id`)
      .run({ ...fields, id });
  }

  delete(id: string): void {
    this.db.prepare('DELETE FROM shares WHERE id = ?').run(id);
  }

  cachedHash(path: string, size: number, mtimeMs: number): string | undefined {
    const row = this.db
      .prepare('SELECT sha256 FROM share_file_hashes WHERE path = ? AND size = ? AND mtime_ms = ?')
      .get(path, size, mtimeMs) as { sha256: string } | undefined;
    return row?.sha256;
  }

  rememberHash(path: string, size: number, mtimeMs: number, sha256: string): void {
    this.db
      .prepare(
        'INSERT INTO share_file_hashes (path, size, mtime_ms, sha256) VALUES (?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms, sha256 = excluded.sha256',
      )
      .run(path, size, mtimeMs, sha256);
  }
}
