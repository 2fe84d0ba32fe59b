import type { Db } from '../db/database.js';
import { migrate } from '../db/database.js';
import { notFound } from '../http/errors.js';
import { newId, nowIso } from '../ids.js';
import type { Preset, PresetInputs } from './schemas.js';
import { InvalidInput } from '../errors.js';

const MIGRATIONS = [
  `CREATE TABLE motion_presets (
    id TEXT PRIMARY KEY,
    board_id TEXT NOT NULL,
    element_id TEXT NOT NULL REFERENCES elements(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    composition TEXT NOT NULL,
    inputs TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (element_id, name)
  )`,
];

interface Row {
  id: string;
  name: string;
  composition: string;
  inputs: string;
  created_at: string;
  updated_at: string;
}

const toPreset = (r: Row): Preset => ({
  id: r.id,
  name: r.name,
  composition: r.composition,
  inputs: JSON.parse(r.inputs) as PresetInputs,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/** Named input sets of one project element, in SQLite; they go when the element is deleted. */
export class MotionPresetStore {
  constructor(private readonly db: Db) {
    migrate(db, 'motion', MIGRATIONS);
  }

  list(boardId: string, elementId: string): Preset[] {
    const rows = this.db
      .prepare('SELECT * FROM motion_presets WHERE board_id = ? AND element_id = ? ORDER BY name')
      .all(boardId, elementId) as Row[];
    return rows.map(toPreset);
  }

  /** Saves a preset; a preset of the same name on the same project is replaced (it keeps its id). */
  save(
    boardId: string,
    elementId: string,
    p: { name: string; composition: string; inputs: PresetInputs },
  ): { preset: Preset; created: boolean } {
    const at = nowIso();
    return this.db.transaction(() => {
      const existing = this.db
        .prepare('SELECT id FROM motion_presets WHERE element_id = ? AND name = ?')
        .get(elementId, p.name) as { id: string } | undefined;
      if (existing) {
        this.db
          .prepare('UPDATE motion_presets SET composition = ?, inputs = ?, updated_at = ? WHERE id = ?')
          .run(p.composition, JSON.stringify(p.inputs), at, existing.id);
        return { preset: this.get(boardId, elementId, existing.id), created: false };
      }
      const id = newId('mpreset_');
      this.db
        .prepare(
          'INSERT INTO motion_presets (id, board_id, element_id, name, composition, inputs, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(id, boardId, elementId, p.name, p.composition, JSON.stringify(p.inputs), at, at);
      return { preset: this.get(boardId, elementId, id), created: true };
    })();
  }

  get(boardId: string, elementId: string, id: string): Preset {
    const row = this.db
      .prepare('SELECT * FROM motion_presets WHERE id = ? AND board_id = ? AND element_id = ?')
      .get(id, boardId, elementId) as Row | undefined;
    if (!row) throw notFound(`Preset ${id} not found for element ${elementId}`);
    return toPreset(row);
  }

  /** The preset a render names by id or by name (404 when unknown). */
  find(
    boardId: string,
    elementId: string | undefined,
    by: { id?: string | null; name?: string | null },
  ): Preset | undefined {
    if (!by.id && !by.name) return undefined;
    if (!elementId)
      throw new InvalidInput(
        'preset_id/preset_name: presets belong to a project element; give element_id',
        undefined,
        'invalid_edit',
      );
    if (by.id) return this.get(boardId, elementId, by.id);
    const row = this.db
      .prepare('SELECT * FROM motion_presets WHERE board_id = ? AND element_id = ? AND name = ?')
      .get(boardId, elementId, by.name) as Row | undefined;
    if (!row) throw notFound(`No preset named ${JSON.stringify(by.name)} for element ${elementId}`);
    return toPreset(row);
  }

  delete(boardId: string, elementId: string, id: string): void {
    const r = this.db
      .prepare('DELETE FROM motion_presets WHERE id = ? AND board_id = ? AND element_id = ?')
      .run(id, boardId, elementId);
    if (r.changes === 0) throw notFound(`Preset ${id} not found for element ${elementId}`);
  }
}
