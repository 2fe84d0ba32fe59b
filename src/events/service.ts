import type { AppContext } from '../context.js';
import type { Board } from '../boards/schemas.js';
import { jobView } from '../jobs/routes.js';
import type { JobUpdate } from '../jobs/runner.js';
import type { JobRecord } from '../jobs/store.js';
import { EventHub } from './hub.js';
import type { EventBoardSchema } from './schemas.js';
import type { Static } from 'typebox';

/** A running job's progress reaches the stream at most this often (the latest value always follows). */
const PROGRESS_INTERVAL_MS = 250;

/**
 * Turns what the service announces into live events: the board emitter (boards, elements, and what features add to
 * it: shares, the bridge, agent cards, generation) and the job runner's updates, each after its write. Nothing
 * else publishes, so every write reaches the stream from the one place that makes it.
 */
export class EventsService {
  readonly hub: EventHub;
  /** Per running job: when its last progress event went out, and the newer one waiting for its turn. */
  private readonly progress = new Map<string, { last: number; timer?: NodeJS.Timeout; pending?: JobRecord }>();

  constructor(private readonly ctx: AppContext) {
    this.hub = new EventHub(ctx.config.events, (reason, bytes) =>
      ctx.log.info({ reason, buffered_bytes: bytes }, 'an event stream was dropped'),
    );
    const on = ctx.events;
    const hub = this.hub;
    on.on('board-created', (b) => hub.publish('board.created', b.id, { board: this.boardOf(b) }));
    on.on('board-updated', (b) => hub.publish('board.updated', b.id, { board: this.boardOf(b) }));
    on.on('board-deleted', (board) => hub.publish('board.deleted', board.id, { board }));
    on.on('element-added', (element) => hub.publish('element.added', element.board_id, { element }));
    on.on('element-updated', (element) => hub.publish('element.updated', element.board_id, { element }));
    on.on('element-deleted', (element) => hub.publish('element.deleted', element.board_id, { element }));
    on.on('share-updated', (share) => hub.publish('share.updated', share.board_id, { share }));
    on.on('bridge-status', (status, boardId) => hub.publish('bridge.status', boardId ?? undefined, { status }));
    on.on('agent-card', (card) =>
      hub.publish('agent.card', card.boardId, { session_id: card.sessionId, action: card.action }),
    );
    on.on('generation-updated', (entry) => hub.publish('generation.updated', entry.board_id, { entry }));
    ctx.jobs.on('update', (job, update) => this.onJob(job, update));
  }

  private boardOf(board: Board): Static<typeof EventBoardSchema> {
    return { ...board, element_count: this.ctx.boards.store.countElements(board.id) };
  }

  private onJob(job: JobRecord, update: JobUpdate): void {
    const boardId = job.board_id ?? undefined;
    if (job.status === 'running') {
      this.progressed(job);
      return;
    }
    const throttle = this.progress.get(job.id);
    if (throttle) {
      clearTimeout(throttle.timer);
      this.progress.delete(job.id);
    }
    if (job.status === 'queued') this.hub.publish('job.queued', boardId, { job: jobView(job) });
    else if (job.status === 'complete') {
      const id = update.outputElementId;
      const element = id !== undefined ? (this.ctx.boards.store.getElement(id) ?? null) : null;
      this.hub.publish('job.completed', boardId, { job: jobView(job), element });
    } else if (job.status === 'error') this.hub.publish('job.failed', boardId, { job: jobView(job) });
    else this.hub.publish('job.cancelled', boardId, { job: jobView(job) });
  }

  /** At most one progress event per PROGRESS_INTERVAL_MS per job; a report inside it waits, replaced by newer ones. */
  private progressed(job: JobRecord): void {
    const slot = this.progress.get(job.id) ?? { last: 0 };
    this.progress.set(job.id, slot);
    const send = (record: JobRecord) => {
      slot.last = Date.now();
      this.hub.publish('job.progress', record.board_id ?? undefined, { job: jobView(record) });
    };
    const wait = slot.last + PROGRESS_INTERVAL_MS - Date.now();
    if (wait <= 0 && !slot.timer) {
      send(job);
      return;
    }
    slot.pending = job;
    slot.timer ??= setTimeout(
      () => {
        slot.timer = undefined;
        if (slot.pending) send(slot.pending);
        slot.pending = undefined;
      },
      Math.max(0, wait),
    ).unref();
  }

  /** The service is stopping: streams end, waiting progress is dropped. */
  close(): void {
    for (const slot of this.progress.values()) clearTimeout(slot.timer);
    this.progress.clear();
    this.hub.closeAll();
  }
}
