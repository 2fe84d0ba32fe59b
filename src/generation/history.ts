import type { Db } from '../db/database.js';
import { migrate } from '../db/database.js';
import { newId, nowIso } from '../ids.js';
import type { BoardEvents } from '../boards/events.js';

declare module '../boards/events.js' {
  interface BoardEventMap {
    /** A generation request was made or changed state (the live event stream's `generation.updated`). */
    'generation-updated': [HistoryEntry];
  }
}

type HistoryStatus = 'running' | 'queued' | 'complete' | 'error' | 'cancelled';

export interface HistoryEntry {
  id: string;
  board_id: string;
  model: string;
  provider: string;
  kind: string;
  prompt: string;
  negative_prompt: string | null;
  aspect_ratio: string | null;
  params: Record<string, unknown>;
  status: HistoryStatus;
  cost_estimate: number;
  job_id: string | null;
  provider_job_id: string | null;
  element_id: string | null;
  error: string | null;
  error_code: string | null;
  created_at: string;
  finished_at: string | null;
  /** Milliseconds from the request to the element (or the failure). */
  duration_ms: number | null;
}

const MIGRATIONS = [
  `CREATE TABLE ai_history (
    id TEXT PRIMARY KEY,
    board_id TEXT NOT NULL,
    model TEXT NOT NULL,
    provider TEXT NOT NULL,
    kind TEXT NOT NULL,
    prompt TEXT NOT NULL,
    negative_prompt TEXT,
    aspect_ratio TEXT,
    params TEXT NOT NULL DEFAULT '{}',
    status TEXT NOT NULL CHECK (status IN ('running','queued','complete','error','cancelled')),
    cost_estimate REAL NOT NULL DEFAULT 0,
    job_id TEXT,
    provider_job_id TEXT,
    element_id TEXT,
    error TEXT,
    error_code TEXT,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    duration_ms INTEGER
  );
  CREATE INDEX ai_history_board ON ai_history(board_id, created_at);
  CREATE INDEX ai_history_job ON ai_history(job_id);`,
];

interface Row extends Omit<HistoryEntry, 'params'> {
  params: string;
}

const fromRow = (r: Row): HistoryEntry => ({ ...r, params: JSON.parse(r.params) as Record<string, unknown> });

/** Every generation request leaves one row here (SQLite, scope `generation`); the board's history reads it. */
export class HistoryStore {
  constructor(
    private readonly db: Db,
    private readonly events: BoardEvents,
  ) {
    migrate(db, 'generation', MIGRATIONS);
  }

  /** Announces the entry as stored now. */
  private changed(id: string): HistoryEntry | undefined {
    const entry = this.get(id);
    if (entry) this.events.emit('generation-updated', entry);
    return entry;
  }

  insert(
    e: Pick<
      HistoryEntry,
      | 'board_id'
      | 'model'
      | 'provider'
      | 'kind'
      | 'prompt'
      | 'negative_prompt'
      | 'aspect_ratio'
      | 'params'
      | 'status'
      | 'cost_estimate'
    >,
  ): HistoryEntry {
    const id = newId('gen_');
    this.db
      .prepare(
        `INSERT INTO ai_history (id, board_id, model, provider, kind, prompt, negative_prompt, aspect_ratio, params, status, cost_estimate, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        id,
        e.board_id,
        e.model,
        e.provider,
        e.kind,
        e.prompt,
        e.negative_prompt,
        e.aspect_ratio,
        JSON.stringify(e.params),
        e.status,
        e.cost_estimate,
        nowIso(),
      );
    return this.changed(id)!;
  }

  get(id: string): HistoryEntry | undefined {
    const row = this.db.prepare('SELECT * FROM ai_history WHERE id = ?').get(id) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  update(
    id: string,
    fields: Partial<
      Pick<HistoryEntry, 'status' | 'job_id' | 'provider_job_id' | 'element_id' | 'error' | 'error_code'>
    >,
  ): void {
    const entries = Object.entries(fields);
    if (entries.length === 0) return;
    this.db
      .prepare(`UPDATE ai_history SET ${entries.map(([k]) => `${k} = ?`).join(', ')} WHERE id = ?`)
      .run(...entries.map(([, v]) => v ?? null), id);
    this.changed(id);
  }

  /** Records the end: status, element or error, and the time it took since the request. */
  finish(
    id: string,
    fields: { status: 'complete' | 'error' | 'cancelled'; element_id?: string; error?: string; error_code?: string },
  ): void {
    const entry = this.get(id);
    if (!entry) return;
    const at = new Date();
    this.db
      .prepare(
        'UPDATE ai_history SET status = ?, element_id = ?, error = ?, error_code = ?, finished_at = ?, duration_ms = ? WHERE id = ?',
      )
      .run(
        fields.status,
        fields.element_id ?? entry.element_id,
        fields.error ?? null,
        fields.error_code ?? null,
        at.toISOString(),
        at.getTime() - Date.parse(entry.created_at),
        id,
      );
    this.changed(id);
  }

  /**
   * At start: a request that was still waiting on its provider when the service stopped (an image answered at once,
   * or a queued one whose job was not yet created) has no one left to finish it; entries with a job belong to that
   * resumable job. Returns how many were closed.
   */
  closeInterrupted(): number {
    return this.db
      .prepare(
        `UPDATE ai_history SET status = 'error', error = 'Interrupted by a service restart', error_code = 'interrupted', finished_at = ? WHERE status IN ('running', 'queued') AND job_id IS NULL`,
      )
      .run(nowIso()).changes;
  }

  list(filter: { board_id?: string; limit: number }): HistoryEntry[] {
    // rowid breaks ties between entries created in the same millisecond, newest first.
    const rows = this.db
      .prepare(
        'SELECT * FROM ai_history WHERE (@board IS NULL OR board_id = @board) ORDER BY created_at DESC, rowid DESC LIMIT @limit',
      )
      .all({ board: filter.board_id ?? null, limit: filter.limit }) as Row[];
    return rows.map(fromRow);
  }
}
