import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Element } from '../boards/schemas.js';
import { badRequest } from '../http/errors.js';
import { runFfmpeg } from '../tools/ffmpeg.js';
import { HashIndex } from './hash-index.js';
import { hashImageFile, type PerceptualHash } from './perceptual-hash.js';
import { MediaHashStore } from './store.js';
import type { AppContext } from '../context.js';
import { KeyedQueue } from '../jobs/keyed-queue.js';

const MAX_MATCHES = 50;
/**
 * Largest combined distance (pHash + dHash bits, 0..128) reported as a match. Measured: resized, JPEG q=40 and 5-10 %
 * cropped copies stay under 10, unrelated test images are 45 or more apart.
 */
const MAX_DISTANCE = 32;
/** Key frames hashed per video, spread evenly over its length. */
const VIDEO_FRAMES = 4;

interface SimilarMatch {
  board_id: string;
  element_id: string;
  url: string | null;
  name: string | null;
  distance: number;
  score: number;
}

const hashable = (el: Element) => el.type === 'image' || el.type === 'video';

/**
 * The perceptual index over every board's images and video key frames: hashes live in SQLite and are mirrored in a
 * HashIndex loaded at start. Elements are hashed after the prober has read them ('element-probed'), one at a time, and
 * on demand when a query names an element that has no hashes yet.
 */
export class SimilarityService {
  private readonly store: MediaHashStore;
  private readonly index = new HashIndex();
  private readonly queue = new KeyedQueue();
  private closed = false;

  constructor(private readonly ctx: AppContext) {
    this.store = new MediaHashStore(ctx.db);
    let current: { id: string; board: string; hashes: PerceptualHash[] } | undefined;
    for (const row of this.store.all()) {
      if (current?.id !== row.elementId) {
        if (current) this.index.set(current.id, current.board, current.hashes);
        current = { id: row.elementId, board: row.boardId, hashes: [] };
      }
      current.hashes.push(row);
    }
    if (current) this.index.set(current.id, current.board, current.hashes);
  }

  listen(): void {
    const { events } = this.ctx;
    events.on('element-probed', (element, { path: file }) => {
      if (hashable(element))
        void this.enqueue(element, file).catch((err) =>
          this.ctx.log.warn({ err, element: element.id }, 'perceptual hashing failed'),
        );
    });
    events.on('element-deleted', (element) => this.forget(element.id));
    // The rows go with the board (ON DELETE CASCADE); only the mirror needs clearing.
    events.on('board-deleted', (board) => this.index.removeBoard(board.id));
    this.ctx.onClose(async () => {
      this.closed = true;
      await this.queue.idle();
    });
  }

  /** Hashing runs one element at a time, so a burst of uploads does not start a crowd of ffmpeg processes. */
  private enqueue(element: Element, file: string): Promise<PerceptualHash[]> {
    return this.queue.run('hash', () => this.hashAndStore(element, file));
  }

  private forget(elementId: string): void {
    this.index.remove(elementId);
    this.store.deleteElement(elementId);
  }

  private async hashAndStore(element: Element, file: string): Promise<PerceptualHash[]> {
    if (this.closed) return [];
    const hashes = element.type === 'video' ? await this.hashVideo(file) : [await hashImageFile(file)];
    // The existence check and the writes run in one synchronous stretch, so a deletion cannot slip in between.
    try {
      this.ctx.boards.requireElement(element.board_id, element.id);
    } catch {
      return [];
    }
    this.store.replace(element.id, element.board_id, hashes);
    this.index.set(element.id, element.board_id, hashes);
    return hashes;
  }

  /** A few frames spread over the video, extracted as PNG and hashed like images. */
  private async hashVideo(file: string): Promise<PerceptualHash[]> {
    const info = await this.ctx.probes.probe(file);
    if (!info.video) return [];
    const duration = info.duration ?? 0;
    const tmpRoot = path.join(this.ctx.config.dataDir, 'tmp');
    await fsp.mkdir(tmpRoot, { recursive: true });
    const dir = await fsp.mkdtemp(path.join(tmpRoot, 'frames-'));
    try {
      const hashes: PerceptualHash[] = [];
      const count = duration > 0 ? VIDEO_FRAMES : 1;
      for (let i = 0; i < count; i++) {
        const at = (duration * (i + 0.5)) / count;
        const frame = path.join(dir, `${i}.png`);
        await runFfmpeg(this.ctx.tools, ['-ss', at.toFixed(3), '-i', file, '-frames:v', '1', '-an', frame], {
          timeoutMs: 60_000,
        });
        // A seek past the last decodable frame writes nothing; the other frames still describe the video.
        if (await fsp.stat(frame).catch(() => undefined)) hashes.push(await hashImageFile(frame));
      }
      return hashes;
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  }

  /** Matches for an element over every board, best first, the element itself excluded. */
  async findSimilar(boardId: string, elementId: string): Promise<{ matches: SimilarMatch[] }> {
    const { element, path: file } = await this.ctx.boards.elementFile(boardId, elementId);
    if (!hashable(element))
      throw badRequest(
        `Element ${elementId} is ${element.type === 'audio' ? 'audio' : `a ${element.type} element`}; find-similar takes images and videos`,
      );
    let query = this.index.hashesOf(elementId);
    if (query.length === 0) {
      try {
        query = await this.enqueue(element, file);
      } catch {
        throw badRequest(`Element ${elementId} could not be read as an image or video`);
      }
    }
    if (query.length === 0) throw badRequest(`Element ${elementId} has no frame to compare`);
    const matches: SimilarMatch[] = [];
    for (const m of this.index.search(query, {
      exclude: elementId,
      limit: MAX_MATCHES * 2,
      maxDistance: MAX_DISTANCE,
    })) {
      let el: Element;
      try {
        el = this.ctx.boards.requireElement(m.boardId, m.elementId);
      } catch {
        this.forget(m.elementId); // deleted behind our back (should not happen with the events, but never report it)
        continue;
      }
      matches.push({
        board_id: m.boardId,
        element_id: m.elementId,
        url: el.url,
        name: el.name,
        distance: m.distance,
        score: Math.round((1 - m.distance / 128) * 1000) / 1000,
      });
      if (matches.length >= MAX_MATCHES) break;
    }
    return { matches };
  }
}
