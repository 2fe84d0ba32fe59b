import type { Db } from '../db/database.js';
import { migrate } from '../db/database.js';
import type { IndexedHash } from './hash-index.js';
import type { PerceptualHash } from './perceptual-hash.js';

const MIGRATIONS = [
  `CREATE TABLE media_hashes (
    element_id TEXT NOT NULL,
    board_id TEXT NOT NULL REFERENCES boards(id) ON DELETE CASCADE,
    frame INTEGER NOT NULL,
    phash BLOB NOT NULL,
    dhash BLOB NOT NULL,
    PRIMARY KEY (element_id, frame)
  );
  CREATE INDEX media_hashes_board ON media_hashes(board_id);`,
];

/** 64-bit hash as 8 big-endian bytes. */
function toBlob(hi: number, lo: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt32BE(hi >>> 0, 0);
  b.writeUInt32BE(lo >>> 0, 4);
  return b;
}

interface HashRow {
  element_id: string;
  board_id: string;
  /** SQLite hands BLOBs back as plain Uint8Arrays. */
  phash: Uint8Array;
  dhash: Uint8Array;
}

/** SQL of the perceptual index: one row per hashed image or video key frame. */
export class MediaHashStore {
  constructor(private readonly db: Db) {
    migrate(db, 'media', MIGRATIONS);
  }

  replace(elementId: string, boardId: string, hashes: PerceptualHash[]): void {
    const del = this.db.prepare('DELETE FROM media_hashes WHERE element_id = ?');
    const ins = this.db.prepare(
      'INSERT INTO media_hashes (element_id, board_id, frame, phash, dhash) VALUES (?, ?, ?, ?, ?)',
    );
    this.db.transaction(() => {
      del.run(elementId);
      hashes.forEach((h, i) => ins.run(elementId, boardId, i, toBlob(h.pHi, h.pLo), toBlob(h.dHi, h.dLo)));
    })();
  }

  deleteElement(elementId: string): void {
    this.db.prepare('DELETE FROM media_hashes WHERE element_id = ?').run(elementId);
  }

  /** Every stored hash, grouped by element in frame order (read once at start into the in-memory index). */
  *all(): Generator<IndexedHash> {
    const rows = this.db
      .prepare('SELECT element_id, board_id, phash, dhash FROM media_hashes ORDER BY element_id, frame')
      .iterate() as IterableIterator<HashRow>;
    const word = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(at);
    for (const r of rows) {
      yield {
        elementId: r.element_id,
        boardId: r.board_id,
        pHi: word(r.phash, 0),
        pLo: word(r.phash, 4),
        dHi: word(r.dhash, 0),
        dLo: word(r.dhash, 4),
      };
    }
  }
}
