import type { ModelMessage } from 'ai';
import { newId, nowIso } from '../ids.js';
import type { ActionType, AgentType, CardStatus } from './schemas.js';
import { Conflict, NotFound, ShuttingDown } from '../errors.js';

/** A card as the session keeps it; `target` is the element the action works on, checked again at apply time. */
export interface Card {
  id: string;
  type: ActionType;
  params: Record<string, unknown>;
  preview: Record<string, unknown>;
  status: CardStatus;
  error?: { code: string; message: string };
  target?: { id: string; name: string | null };
  /** Set while the card executes, so a second apply cannot run it twice. */
  applying: boolean;
}

export interface Session {
  readonly id: string;
  readonly boardId: string;
  readonly agentType: AgentType;
  readonly model: string;
  readonly startedAt: string;
  /** The conversation so far (user turns without their images, assistant answers, tool calls and results). */
  history: ModelMessage[];
  readonly cards: Map<string, Card>;
  autoApply: boolean;
  /** The chat in flight: end-session and expiry abort it. */
  turn?: AbortController;
  /** Applies running now; like a chat, they keep the session from expiring. */
  applying: number;
  closed: boolean;
}

/**
 * Open sessions at once: a desktop user has a few; each may keep up to 2 MB of conversation (MAX_HISTORY_CHARS), so
 * this bounds what sessions hold in memory. Idle ones expire and free their place.
 */
export const MAX_LIVE_SESSIONS = 100;

/** Ids of closed sessions remembered, so a late call learns "expired" rather than "not found"; oldest dropped first. */
const MAX_CLOSED = 10_000;

type Closed = 'ended' | 'expired';

/**
 * Agent sessions live in memory only (a restart ends them). Each has an idle timer, pushed back by every call; a
 * session idle for `idleMs` expires: its chat (if any) is aborted, its memory and preview files are freed, and its id
 * answers 404 `session_expired` from then on.
 */
export class AgentService {
  private readonly live = new Map<string, { session: Session; timer: NodeJS.Timeout }>();
  private readonly closedIds = new Map<string, Closed>();

  constructor(
    private readonly idleMs: number,
    /** Frees what a session holds outside this map (its preview files). */
    private readonly onClosed: (session: Session) => void,
  ) {}

  get size(): number {
    return this.live.size;
  }

  create(input: { boardId: string; agentType: AgentType; model: string }): Session {
    if (this.live.size >= MAX_LIVE_SESSIONS)
      throw new Conflict(
        `${MAX_LIVE_SESSIONS} agent sessions are open, the most at once; end one (or let one expire) first`,
        undefined,
        'too_many_sessions',
      );
    const session: Session = {
      id: newId('ags_'),
      ...input,
      startedAt: nowIso(),
      history: [],
      cards: new Map(),
      autoApply: false,
      applying: 0,
      closed: false,
    };
    const timer = setTimeout(() => this.expireIfIdle(session.id), this.idleMs);
    timer.unref();
    this.live.set(session.id, { session, timer });
    return session;
  }

  /** The open session, its idle time reset; 404 `session_expired` or `session_not_found` otherwise. */
  require(id: string): Session {
    const entry = this.live.get(id);
    if (!entry) {
      const closed = this.closedIds.get(id);
      if (closed === 'expired') {
        throw new NotFound(
          `Agent session ${id} expired after ${Math.round(this.idleMs / 1000)} s without activity; start a new one`,
          'session_expired',
        );
      }
      throw new NotFound(
        closed === 'ended' ? `Agent session ${id} was ended` : `No agent session ${id}`,
        'session_not_found',
      );
    }
    entry.timer.refresh();
    return entry.session;
  }

  /** Marks activity that ran for a while (a chat or an apply that just finished). */
  touch(session: Session): void {
    this.live.get(session.id)?.timer.refresh();
  }

  /** Ends a session (idempotent for one already closed); 404 for an id that never existed. */
  end(id: string): void {
    if (this.live.has(id)) return this.close(id, 'ended');
    if (!this.closedIds.has(id)) throw new NotFound(`No agent session ${id}`, 'session_not_found');
  }

  /** A deleted board ends its sessions (their chats aborted): nothing is left for them to work on. */
  endBoard(boardId: string): void {
    for (const [id, { session }] of [...this.live]) if (session.boardId === boardId) this.close(id, 'ended');
  }

  /** Service shutdown: every chat aborted, everything freed. */
  closeAll(): void {
    const stopping = new ShuttingDown('The service is stopping; the agent session ended with it', 'service_stopping');
    for (const id of [...this.live.keys()]) this.close(id, 'ended', stopping);
  }

  private expireIfIdle(id: string): void {
    const entry = this.live.get(id);
    if (!entry) return;
    // A long chat or apply is activity: the idle time starts when it ends.
    if (entry.session.turn || entry.session.applying > 0) return void entry.timer.refresh();
    this.close(id, 'expired');
  }

  private close(
    id: string,
    why: Closed,
    reason = new Conflict(`The agent session was ${why} during the chat`, undefined, `session_${why}`),
  ): void {
    const entry = this.live.get(id);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.live.delete(id);
    const { session } = entry;
    session.closed = true;
    session.turn?.abort(reason);
    session.history = [];
    session.cards.clear();
    this.closedIds.set(id, why);
    if (this.closedIds.size > MAX_CLOSED) this.closedIds.delete(this.closedIds.keys().next().value!);
    this.onClosed(session);
  }
}
