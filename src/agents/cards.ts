import type { BoardEvents } from '../boards/events.js';
import type { Board, Element } from '../boards/schemas.js';
import { Conflict, DomainError, Internal, NotFound } from '../errors.js';
import { newId } from '../ids.js';
import { ACTIONS, type AgentEnv, type Proposal } from './actions.js';
import type { ActionCardView, ActionType } from './schemas.js';
import type { AgentService, Card, Session } from './sessions.js';

export const viewOf = (card: Card): ActionCardView => ({
  id: card.id,
  type: card.type,
  params: card.params,
  preview: card.preview,
  status: card.status,
  ...(card.error ? { error: card.error } : {}),
});

declare module '../boards/events.js' {
  interface BoardEventMap {
    /** A card was proposed, applied, rejected or failed (the live event stream's `agent.card`). */
    'agent-card': [{ sessionId: string; boardId: string; action: ActionCardView }];
  }
}

/** Tells whoever listens (the live event stream) the card's new state. */
const announce = (events: BoardEvents, session: Session, card: Card) =>
  events.emit('agent-card', { sessionId: session.id, boardId: session.boardId, action: viewOf(card) });

export const newCardId = () => newId('act_');

/** Stores a checked proposal as a `proposed` card of the session. */
export function addCard(
  events: BoardEvents,
  session: Session,
  id: string,
  type: ActionType,
  params: Record<string, unknown>,
  proposal: Proposal,
): Card {
  if (session.closed) throw new Error('The agent session was closed');
  const card: Card = {
    id,
    type,
    params: proposal.params ?? params,
    preview: proposal.preview,
    status: 'proposed',
    applying: false,
    ...(proposal.target ? { target: { id: proposal.target.id, name: proposal.target.name } } : {}),
  };
  session.cards.set(id, card);
  announce(events, session, card);
  return card;
}

export function requireCard(session: Session, actionId: string): Card {
  const card = session.cards.get(actionId);
  if (!card) throw new NotFound(`Agent session ${session.id} has no action ${actionId}`, 'action_not_found');
  return card;
}

export interface Applied {
  action: ActionCardView;
  elements: Element[];
  job_id?: string;
  board: Board & { elements: Element[] };
}

function asDomainError(err: unknown): DomainError {
  if (err instanceof DomainError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new Internal('action_failed', `The action failed: ${message}`);
}

/**
 * Executes a card (apply-action, or auto-apply as it arrives). Applied twice or rejected → 409; its element deleted
 * since it was proposed → 409 naming it; an execution that throws marks the card `failed` (it may be applied again).
 */
export async function applyCard(
  env: AgentEnv,
  sessions: AgentService,
  session: Session,
  card: Card,
  signal: AbortSignal,
): Promise<Applied> {
  if (card.status === 'applied')
    throw new Conflict(`Action ${card.id} was already applied`, undefined, 'action_already_applied');
  if (card.status === 'rejected') throw new Conflict(`Action ${card.id} was rejected`, undefined, 'action_rejected');
  if (card.applying) throw new Conflict(`Action ${card.id} is being applied`, undefined, 'action_in_progress');
  card.applying = true;
  session.applying++;
  try {
    if (card.target) {
      const el = env.ctx.boards.store.getElement(card.target.id);
      if (!el || el.board_id !== session.boardId) {
        const name = card.target.name ? ` ("${card.target.name}")` : '';
        throw new Conflict(
          `Element ${card.target.id}${name} was deleted after action ${card.id} was proposed`,
          {
            element_id: card.target.id,
          },
          'element_deleted',
        );
      }
    }
    const def = ACTIONS[card.type] as (typeof ACTIONS)[ActionType];
    const outcome = await def.apply(env, session, card.params as never, signal);
    card.status = 'applied';
    delete card.error;
    announce(env.ctx.events, session, card);
    return { action: viewOf(card), ...outcome, board: env.ctx.boards.getBoardWithElements(session.boardId) };
  } catch (err) {
    const e = asDomainError(err);
    card.status = 'failed';
    card.error = { code: e.code, message: e.message };
    announce(env.ctx.events, session, card);
    throw e;
  } finally {
    card.applying = false;
    session.applying--;
    sessions.touch(session);
  }
}

/** Drops a proposed (or failed) card; rejecting it again changes nothing, an applied one cannot be taken back (409). */
export function rejectCard(events: BoardEvents, session: Session, card: Card): ActionCardView {
  if (card.status === 'applied')
    throw new Conflict(`Action ${card.id} was already applied`, undefined, 'action_already_applied');
  if (card.applying) throw new Conflict(`Action ${card.id} is being applied`, undefined, 'action_in_progress');
  if (card.status !== 'rejected') {
    card.status = 'rejected';
    announce(events, session, card);
  }
  return viewOf(card);
}
