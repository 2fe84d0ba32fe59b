import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';

export type Db = BetterSqlite3.Database;

/**
 * better-sqlite3's driver, by Node version. The 12.x line is the last that runs on Node 20, but built against Node
 * 24.19+'s headers its statements abort the process when a garbage collection outside JavaScript frees them
 * (nodejs/node#65446). The 13.x line (Node-API, Node 22+) has no such objects; Node 22 and later load it, installed
 * as `better-sqlite3-napi`. Both have the same API.
 */
export const SqliteDatabase: typeof BetterSqlite3 = createRequire(import.meta.url)(
  Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3',
);

/** Opens (creating if needed) the service's SQLite database with WAL and foreign keys on. */
export function openDatabase(file: string): Db {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new SqliteDatabase(file);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = NORMAL');
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    scope TEXT NOT NULL,
    version INTEGER NOT NULL,
    applied_at TEXT NOT NULL,
    PRIMARY KEY (scope, version)
  )`);
  return db;
}

/**
 * Applies a scope's numbered migrations that have not run yet, each in its own transaction.
 * Each feature owns a scope (its folder name), so features add tables without sharing one global sequence.
 * Migration N is `migrations[N - 1]`; never edit or reorder a migration that has shipped, append a new one.
 */
export function migrate(db: Db, scope: string, migrations: readonly string[]): void {
  const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations WHERE scope = ?').get(scope) as {
    v: number | null;
  };
  const current = row.v ?? 0;
  if (current > migrations.length) {
    throw new Error(
      `database scope "${scope}" is at migration ${current}, newer than this build knows (${migrations.length})`,
    );
  }
  const record = db.prepare('INSERT INTO schema_migrations (scope, version, applied_at) VALUES (?, ?, ?)');
  for (let version = current + 1; version <= migrations.length; version++) {
    db.transaction(() => {
      db.exec(migrations[version - 1]);
      record.run(scope, version, new Date().toISOString());
    })();
  }
}
