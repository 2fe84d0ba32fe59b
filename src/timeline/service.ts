import type { BoardService } from '../boards/service.js';
import type { Db } from '../db/database.js';
import { badRequest, notFound } from '../http/errors.js';
import { storedJson } from '../http/json-body.js';
import { newId, nowIso } from '../ids.js';
import {
  migrateProjectData,
  newProjectData,
  PROJECT_LIMITS,
  validateProjectData,
  type ProjectData,
} from './project.js';
import type { ProjectSummary } from './schemas.js';
import { ProjectStore, type ProjectRow } from './store.js';
import { latestItem, timelineDuration } from './timeline.js';

export interface Project extends ProjectSummary {
  data: ProjectData;
}

/** A timestamp later than `previous`, so last_modified changes on every save even within one millisecond. */
export function laterThan(previous: string | undefined): string {
  const now = nowIso();
  if (!previous || now > previous) return now;
  return new Date(Date.parse(previous) + 1).toISOString();
}

/** Video projects of a board: stored as given, read in the current layout. */
export class TimelineService {
  private readonly store: ProjectStore;

  constructor(
    db: Db,
    private readonly boards: BoardService,
  ) {
    this.store = new ProjectStore(db);
  }

  private view(row: Pick<ProjectRow, 'id' | 'name' | 'last_modified'>, stored: ProjectData): Project {
    const data = migrateProjectData(stored);
    const duration = timelineDuration(data);
    // A row saved before saves were checked may end at Infinity: reported as the largest number, never a 500.
    return {
      id: row.id,
      name: row.name,
      last_modified: row.last_modified,
      duration: Number.isFinite(duration) ? duration : Number.MAX_VALUE,
      data,
    };
  }

  list(boardId: string): ProjectSummary[] {
    this.boards.requireBoard(boardId);
    return this.store.list(boardId).map((row) => {
      if (row.duration !== null)
        return { id: row.id, name: row.name, last_modified: row.last_modified, duration: row.duration };
      const { data: _data, ...summary } = this.get(boardId, row.id);
      return summary;
    });
  }

  get(boardId: string, id: string): Project {
    this.boards.requireBoard(boardId);
    const row = this.store.get(boardId, id);
    if (!row) throw notFound(`Video project ${id} not found on board ${boardId}`);
    return this.view(row, JSON.parse(row.data) as ProjectData);
  }

  create(boardId: string, name: string): Project {
    this.boards.requireBoard(boardId);
    const trimmed = name.trim();
    if (!trimmed) throw badRequest('name must not be empty', { field: 'name' });
    const at = nowIso();
    const row: ProjectRow = {
      id: newId('vp_'),
      board_id: boardId,
      name: trimmed,
      data: JSON.stringify(newProjectData(newId('ch_'))),
      duration: 0,
      created_at: at,
      last_modified: at,
    };
    this.store.insert(row);
    return this.view(row, JSON.parse(row.data) as ProjectData);
  }

  /** Replaces the whole project state; `name` may be left out to keep the current one. */
  replace(boardId: string, id: string, body: { id?: string; name?: string; data: unknown }): Project {
    const current = this.get(boardId, id);
    if (body.id !== undefined && body.id !== id)
      throw badRequest(`id ${body.id} does not match the project ${id} in the path`, { field: 'id' });
    const name = body.name === undefined ? current.name : body.name.trim();
    if (!name) throw badRequest('name must not be empty', { field: 'name' });
    const data = validateProjectData(body.data);
    // An hour-long still image is a real item; `trimEnd: 1e6` (11.6 days) or a start and a length near 1e308 (whose
    // sum no answer could carry) are not.
    const latest = latestItem(data);
    const max = PROJECT_LIMITS.durationSeconds;
    if (latest && !(latest.end <= max))
      throw badRequest(`${latest.field} ends at ${latest.end} s; a timeline may last at most ${max} s (12 hours)`, {
        field: latest.field,
      });
    const text = storedJson(data, 'data', PROJECT_LIMITS.jsonBytes);
    const lastModified = laterThan(current.last_modified);
    // The answer is built from what was just stored, not parsed back from it.
    const saved = this.view({ id, name, last_modified: lastModified }, data);
    if (!this.store.replace(boardId, id, name, text, saved.duration, lastModified))
      throw notFound(`Video project ${id} not found on board ${boardId}`);
    return saved;
  }

  delete(boardId: string, id: string): void {
    this.boards.requireBoard(boardId);
    if (!this.store.delete(boardId, id)) throw notFound(`Video project ${id} not found on board ${boardId}`);
  }
}
