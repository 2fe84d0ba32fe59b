import type { PerceptualHash } from './perceptual-hash.js';

export interface IndexedHash extends PerceptualHash {
  elementId: string;
  boardId: string;
}

interface HashMatch {
  elementId: string;
  boardId: string;
  distance: number;
}

const INITIAL_CAPACITY = 1024;

/**
 * In-memory mirror of every stored hash, in flat typed arrays (four 32-bit words per hash) so that a query is one
 * linear scan with inline popcounts and no allocation per entry: 100,000 hashes take a few milliseconds. Entries of
 * one element are found through `slotsOf`; removal swaps the last entry into the freed slot.
 */
export class HashIndex {
  private words = new Uint32Array(INITIAL_CAPACITY * 4);
  private owner = new Int32Array(INITIAL_CAPACITY);
  private size = 0;
  /** Element ordinals keep the scan on integers; ids and boards are looked up only for the few matches. */
  private readonly ordinalOf = new Map<string, number>();
  private readonly elements: { id: string; boardId: string; slots: number[] }[] = [];
  private readonly freeOrdinals: number[] = [];

  get count(): number {
    return this.size;
  }

  has(elementId: string): boolean {
    return this.ordinalOf.has(elementId);
  }

  hashesOf(elementId: string): PerceptualHash[] {
    const ord = this.ordinalOf.get(elementId);
    if (ord === undefined) return [];
    return this.elements[ord].slots.map((s) => ({
      pHi: this.words[s * 4],
      pLo: this.words[s * 4 + 1],
      dHi: this.words[s * 4 + 2],
      dLo: this.words[s * 4 + 3],
    }));
  }

  /** Replaces the hashes of one element. */
  set(elementId: string, boardId: string, hashes: PerceptualHash[]): void {
    this.remove(elementId);
    if (hashes.length === 0) return;
    const ord = this.freeOrdinals.pop() ?? this.elements.length;
    this.elements[ord] = { id: elementId, boardId, slots: [] };
    this.ordinalOf.set(elementId, ord);
    for (const h of hashes) {
      if (this.size === this.owner.length) this.grow();
      const s = this.size++;
      this.words.set([h.pHi, h.pLo, h.dHi, h.dLo], s * 4);
      this.owner[s] = ord;
      this.elements[ord].slots.push(s);
    }
  }

  remove(elementId: string): void {
    const ord = this.ordinalOf.get(elementId);
    if (ord === undefined) return;
    // Highest slots first, so a swapped-in last entry is never one of this element's own pending slots.
    for (const slot of [...this.elements[ord].slots].sort((a, b) => b - a)) {
      const last = --this.size;
      if (slot !== last) {
        this.words.copyWithin(slot * 4, last * 4, last * 4 + 4);
        const moved = this.owner[last];
        this.owner[slot] = moved;
        const slots = this.elements[moved].slots;
        slots[slots.indexOf(last)] = slot;
      }
    }
    this.ordinalOf.delete(elementId);
    this.freeOrdinals.push(ord);
  }

  removeBoard(boardId: string): void {
    for (const [id, ord] of [...this.ordinalOf]) if (this.elements[ord].boardId === boardId) this.remove(id);
  }

  /**
   * The elements nearest to any of `query`, at most `limit`, each at its best distance (over all frame pairs), best
   * first, at most `maxDistance`. Distances are small integers, so results are bucketed by distance instead of sorted.
   */
  search(query: PerceptualHash[], opts: { exclude?: string; limit: number; maxDistance: number }): HashMatch[] {
    const exclude = opts.exclude !== undefined ? (this.ordinalOf.get(opts.exclude) ?? -1) : -1;
    const buckets: number[][] = Array.from({ length: opts.maxDistance + 1 }, () => []);
    const w = this.words;
    const q = Uint32Array.from(query.flatMap((h) => [h.pHi, h.pLo, h.dHi, h.dLo]));
    for (let s = 0; s < this.size; s++) {
      if (this.owner[s] === exclude) continue;
      const b = s * 4;
      let best = 255;
      for (let j = 0; j < q.length; j += 4) {
        let d = 0;
        for (let k = 0; k < 4; k++) {
          let x = w[b + k] ^ q[j + k];
          x -= (x >>> 1) & 0x55555555;
          x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
          x = (x + (x >>> 4)) & 0x0f0f0f0f;
          d += Math.imul(x, 0x01010101) >>> 24;
        }
        if (d < best) best = d;
      }
      if (best <= opts.maxDistance) buckets[best].push(s);
    }
    const seen = new Set<number>();
    const out: HashMatch[] = [];
    for (let d = 0; d < buckets.length && out.length < opts.limit; d++) {
      for (const s of buckets[d]) {
        const ord = this.owner[s];
        if (seen.has(ord)) continue;
        seen.add(ord);
        const el = this.elements[ord];
        out.push({ elementId: el.id, boardId: el.boardId, distance: d });
        if (out.length >= opts.limit) break;
      }
    }
    return out;
  }

  private grow(): void {
    const words = new Uint32Array(this.words.length * 2);
    words.set(this.words);
    const owner = new Int32Array(this.owner.length * 2);
    owner.set(this.owner);
    this.words = words;
    this.owner = owner;
  }
}
