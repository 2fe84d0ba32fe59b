import type { BoardService } from '../boards/service.js';
import type { Db } from '../db/database.js';
import { badRequest, notFound } from '../http/errors.js';
import { storedJson } from '../http/json-body.js';
import { newId, nowIso } from '../ids.js';
import { laterThan } from '../timeline/service.js';
import { MAX_PROJECT_BYTES, type Device, type ProjectStateT, type ProjectT, type SummaryT } from './schemas.js';
import { MockupStore, type MockupRow } from './store.js';

/** Fields the service owns: a PUT cannot set them (they are dropped from the saved state). */
const OWNED = ['id', 'created_at', 'updated_at'] as const;

/** The state of a new project: the device at rest, facing the viewer, on a gradient, no depth of field, 5 s. */
export function defaultState(name: string, device: Device): ProjectStateT {
  return {
    name,
    device,
    screen_source_url: null,
    transform: { position: { x: 0, y: 0, z: 0 }, rotation: { x: 0, y: 0, z: 0 }, scale: { x: 1, y: 1, z: 1 } },
    dof: { enabled: false, focus_distance: 2000, aperture: 20 },
    background: { mode: 'gradient', params: { from: '#1e293b', to: '#6366f1', angle: 135 } },
    keyframes: [],
    duration_seconds: 5,
  };
}

/** Mockup projects of a board, stored whole (unknown fields kept) and answered as saved. */
export class MockupService {
  private readonly store: MockupStore;

  constructor(
    db: Db,
    private readonly boards: BoardService,
  ) {
    this.store = new MockupStore(db);
  }

  private view(row: MockupRow): ProjectT {
    const state = JSON.parse(row.data) as ProjectStateT;
    return {
      ...state,
      id: row.id,
      screen_source_url: state.screen_source_url ?? null,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  list(boardId: string): SummaryT[] {
    this.boards.requireBoard(boardId);
    return this.store.list(boardId).map((r) => ({
      id: r.id,
      name: r.name,
      device: r.device as Device,
      updated_at: r.updated_at,
      duration_seconds: r.duration_seconds,
    }));
  }

  get(boardId: string, id: string): ProjectT {
    this.boards.requireBoard(boardId);
    const row = this.store.get(boardId, id);
    if (!row) throw notFound(`Mockup project ${id} not found on board ${boardId}`);
    return this.view(row);
  }

  create(boardId: string, name: string, device: Device): ProjectT {
    this.boards.requireBoard(boardId);
    const trimmed = name.trim();
    if (!trimmed) throw badRequest('name must not be empty', { field: 'body.name' });
    const at = nowIso();
    const state = defaultState(trimmed, device);
    const row: MockupRow = {
      id: newId('mk_'),
      board_id: boardId,
      name: trimmed,
      device,
      data: JSON.stringify(state),
      duration_seconds: state.duration_seconds,
      created_at: at,
      updated_at: at,
    };
    this.store.insert(row);
    return this.view(row);
  }

  /** Replaces the whole state (already type-checked by the route's schema); unknown fields are kept as sent. */
  replace(boardId: string, id: string, body: ProjectStateT & { id?: string }): ProjectT {
    const current = this.get(boardId, id);
    if (body.id !== undefined && body.id !== id)
      throw badRequest(`id ${body.id} does not match the project ${id} in the path`, { field: 'body.id' });
    const name = body.name.trim();
    if (!name) throw badRequest('name must not be empty', { field: 'body.name' });
    const state: Record<string, unknown> = { ...body, name, screen_source_url: body.screen_source_url ?? null };
    for (const key of OWNED) delete state[key];
    // Unknown fields are kept as sent, so the schema's own bounds do not bound the whole.
    const data = storedJson(state, 'body', MAX_PROJECT_BYTES);
    this.store.replace({
      id,
      board_id: boardId,
      name,
      device: body.device,
      data,
      duration_seconds: body.duration_seconds,
      updated_at: laterThan(current.updated_at),
    });
    return this.get(boardId, id);
  }

  delete(boardId: string, id: string): void {
    this.boards.requireBoard(boardId);
    if (!this.store.delete(boardId, id)) throw notFound(`Mockup project ${id} not found on board ${boardId}`);
  }
}
