import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { DatabaseSync, StatementSync } from 'node:sqlite';

/**
 * The statement shape the stores use. Parameters are positional values or one object of named ones (`@name` in the
 * SQL, `{ name }` here, no other keys); SQLite refuses anything else when it binds. Rows are `unknown` until a store
 * casts them to its row type; BLOBs come back as Uint8Array.
 */
export interface Statement {
  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  iterate(...params: unknown[]): IterableIterator<unknown>;
}

/**
 * Node's own SQLite (`node:sqlite`, unflagged since 22.13; 22.15 added the statement option used below), so nothing native is installed or compiled on any
 * platform. Every Node line that has it still prints "SQLite is an experimental feature" once on load; that one
 * warning is dropped here (the API the stores use has not changed since 22.13), every other warning passes on.
 */
function loadSqlite(): typeof import('node:sqlite') {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]) {
    if (String(typeof warning === 'string' ? warning : warning.message).startsWith('SQLite is an experimental')) return;
    return (emitWarning as (...a: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    return createRequire(import.meta.url)('node:sqlite') as typeof import('node:sqlite');
  } catch (err) {
    throw new Error(
      `Board Media Service needs Node.js 22.15 or later (for node:sqlite); this is Node ${process.version}`,
      { cause: err },
    );
  } finally {
    process.emitWarning = emitWarning;
  }
}

let sqlite: typeof import('node:sqlite') | undefined;

/**
 * One SQLite connection with the few conveniences the stores use: `pragma`, and `transaction(fn)` that returns a
 * function running `fn` in a transaction (a savepoint when nested), rolled back when it throws.
 */
export class Db {
  private readonly raw: DatabaseSync;
  private depth = 0;

  constructor(file: string) {
    sqlite ??= loadSqlite();
    this.raw = new sqlite.DatabaseSync(file);
  }

  prepare(sql: string): Statement {
    const statement = this.raw.prepare(sql);
    // The stores bind whole records ({ ...element }) to statements that name only some of their fields.
    statement.setAllowUnknownNamedParameters(true);
    return statement as unknown as StatementSync & Statement;
  }

  exec(sql: string): void {
    this.raw.exec(sql);
  }

  /** `PRAGMA <text>`, answering its rows. */
  pragma(text: string): unknown[] {
    return this.raw.prepare(`PRAGMA ${text}`).all();
  }

  get inTransaction(): boolean {
    return this.depth > 0;
  }

  transaction<A extends unknown[], T>(fn: (...args: A) => T): (...args: A) => T {
    return (...args) => {
      const savepoint = `sp${this.depth}`;
      this.raw.exec(this.depth === 0 ? 'BEGIN' : `SAVEPOINT ${savepoint}`);
      this.depth++;
      try {
        const result = fn(...args);
        this.depth--;
        this.raw.exec(this.depth === 0 ? 'COMMIT' : `RELEASE ${savepoint}`);
        return result;
      } catch (err) {
        this.depth--;
        this.raw.exec(this.depth === 0 ? 'ROLLBACK' : `ROLLBACK TO ${savepoint}; RELEASE ${savepoint}`);
        throw err;
      }
    };
  }

  close(): void {
    this.raw.close();
  }
}

/** Opens (creating if needed) the service's SQLite database with WAL and foreign keys on. */
export function openDatabase(file: string): Db {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Db(file);
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
