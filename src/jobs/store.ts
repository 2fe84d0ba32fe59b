import type { Static } from 'typebox';
import type { Db } from '../db/database.js';
import type { JOB_STATUSES, JobSchema } from '../http/schemas.js';
import { migrate } from '../db/database.js';

type JobStatus = (typeof JOB_STATUSES)[number];

/** A job as stored: its public view plus the params its handler runs with and the error's kind and details. */
export type JobRecord<P = unknown> = Static<typeof JobSchema> & {
  params: P;
  /** The failure's kind (src/errors.ts), so a waiter can answer it as the job failed; internal. */
  error_kind: string | null;
  error_details: unknown;
};

const MIGRATIONS = [
  `CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    board_id TEXT,
    status TEXT NOT NULL CHECK (status IN ('queued','running','complete','error','cancelled')),
    progress REAL NOT NULL DEFAULT 0,
    eta_seconds REAL,
    output_url TEXT,
    error TEXT,
    params TEXT NOT NULL DEFAULT '{}',
    result TEXT,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT
  );
  CREATE INDEX jobs_status ON jobs(status, created_at);`,
  // A failed job keeps what it failed with, not only the message.
  `ALTER TABLE jobs ADD COLUMN error_code TEXT;
  ALTER TABLE jobs ADD COLUMN error_kind TEXT;
  ALTER TABLE jobs ADD COLUMN error_details TEXT;
  UPDATE jobs SET error_code = 'cancelled' WHERE status = 'cancelled';`,
  // Kinds are named <feature>.<verb>: a render queued before the rename still runs after it.
  `UPDATE jobs SET kind = 'timeline.render' WHERE kind = 'video-project-render';`,
];

interface Row extends Omit<JobRecord, 'params' | 'result' | 'error_details'> {
  params: string;
  result: string | null;
  error_details: string | null;
}

const JSON_COLUMNS = new Set(['result', 'error_details']);

/** A job without its params, as lists show it. */
export type JobSummary = Omit<JobRecord, 'params'>;

const summaryFromRow = (r: Omit<Row, 'params'>): JobSummary => ({
  ...r,
  result: r.result ? JSON.parse(r.result) : null,
  error_details: r.error_details ? JSON.parse(r.error_details) : null,
});

/**
 * params are parsed when first read: a render's hold its whole project (up to 8 MiB), and most readers never look at
 * them (the update event after every progress write, a poll of the status).
 */
const fromRow = (r: Row): JobRecord => {
  const job = summaryFromRow(r) as JobRecord;
  let params: unknown;
  Object.defineProperty(job, 'params', {
    enumerable: true,
    configurable: true,
    get: () => (params ??= JSON.parse(r.params)),
  });
  return job;
};

/** SQL for the jobs table; the runner is its only user. */
export class JobStore {
  /** Every column but params: a job's params may hold a whole project (a render's snapshot, up to 8 MiB). */
  private readonly summaryColumns: string;

  constructor(private readonly db: Db) {
    migrate(db, 'jobs', MIGRATIONS);
    this.summaryColumns = (db.prepare('PRAGMA table_info(jobs)').all() as { name: string }[])
      .map((c) => c.name)
      .filter((name) => name !== 'params')
      .join(', ');
  }

  insert(job: Pick<JobRecord, 'id' | 'kind' | 'board_id' | 'params' | 'created_at'>): void {
    this.db
      .prepare(`INSERT INTO jobs (id, kind, board_id, status, params, created_at) VALUES (?, ?, ?, 'queued', ?, ?)`)
      .run(job.id, job.kind, job.board_id, JSON.stringify(job.params ?? {}), job.created_at);
  }

  get(id: string): JobRecord | undefined {
    const row = this.db.prepare('SELECT * FROM jobs WHERE id = ?').get(id) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  update(id: string, fields: Partial<Omit<JobRecord, 'id' | 'kind' | 'params' | 'created_at'>>): void {
    const entries = Object.entries(fields).map(
      ([k, v]) => [k, JSON_COLUMNS.has(k) && v !== null && v !== undefined ? JSON.stringify(v) : v] as const,
    );
    if (entries.length === 0) return;
    const sql = `UPDATE jobs SET ${entries.map(([k]) => `${k} = ?`).join(', ')} WHERE id = ?`;
    this.db.prepare(sql).run(...entries.map(([, v]) => v ?? null), id);
  }

  byStatus(status: JobStatus): JobRecord[] {
    return (this.db.prepare('SELECT * FROM jobs WHERE status = ? ORDER BY created_at').all(status) as Row[]).map(
      fromRow,
    );
  }

  /** The newest jobs, without their params: no list shows them, and 500 renders could hold 500 projects. */
  list(filter: { kind?: string; board_id?: string; limit: number }): JobSummary[] {
    const rows = this.db
      .prepare(
        `SELECT ${this.summaryColumns} FROM jobs WHERE (@kind IS NULL OR kind = @kind) AND (@board IS NULL OR board_id = @board)
         ORDER BY created_at DESC LIMIT @limit`,
      )
      .all({
        kind: filter.kind ?? null,
        board: filter.board_id ?? null,
        limit: Number.isSafeInteger(filter.limit) ? filter.limit : 100,
      }) as Omit<Row, 'params'>[];
    return rows.map(summaryFromRow);
  }
}
