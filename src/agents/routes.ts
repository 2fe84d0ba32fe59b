import type { FastifyRequest } from 'fastify';
import type { App, AppContext } from '../context.js';
import type { BridgeService } from '../bridge/service.js';
import type { GenerationContext } from '../generation/context.js';
import type { HtmlParts } from '../html/routes.js';
import { resolveChatModel } from '../generation/models.js';
import { errorResponses } from '../http/schemas.js';
import { abortOnDisconnect } from '../http/client-abort.js';
import { openEventStream } from '../http/sse.js';
import { Cancelled, Conflict, DomainError, Internal } from '../errors.js';
import type { AgentEnv } from './actions.js';
import { applyCard, rejectCard, requireCard } from './cards.js';
import { runTurn } from './chat.js';
import { Previews } from './previews.js';
import { turnInput } from './prompt.js';
import {
  AGENT_ACTIONS,
  ApplyAnswer,
  AutoApplyAnswer,
  AutoApplyBody,
  CardBody,
  ChatAnswer,
  ChatBody,
  EndAnswer,
  EndBody,
  RejectAnswer,
  SessionAnswer,
  SessionBody,
  agentErrors,
} from './schemas.js';
import { AgentService } from './sessions.js';

const tags = ['agents'];
const BASE = '/api/agents';

/** One JSON body only when asked for it; the spec's default is the event stream. */
function wantsJson(req: FastifyRequest): boolean {
  const accept = req.headers.accept ?? '';
  return /application\/json/i.test(accept) && !/text\/event-stream/i.test(accept);
}

const sseEvent = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** Agents (spec "Agents"): sessions, a streamed chat that proposes action cards, apply / reject / auto-apply. */
export const registerAgents = async (
  app: App,
  ctx: AppContext,
  uses: { bridge: BridgeService; generation: GenerationContext; html: Pick<HtmlParts, 'cards' | 'renderer'> },
): Promise<AgentService> => {
  const previews = new Previews(ctx, uses.html.renderer);
  await previews.removeAll(); // sessions do not survive a restart, nor do their previews
  const env: AgentEnv = {
    ctx,
    previews,
    bridge: uses.bridge,
    generation: uses.generation,
    cards: uses.html.cards,
  };
  const sessions = new AgentService(ctx.config.agents.sessionIdleMs, (s) => {
    previews
      .removeSession(s.id)
      .catch((err: unknown) => ctx.log.warn({ err, session: s.id }, 'could not remove agent previews'));
  });
  const onBoardDeleted = (board: { id: string }) => sessions.endBoard(board.id);
  ctx.events.on('board-deleted', onBoardDeleted);
  ctx.onClose(() => {
    ctx.events.off('board-deleted', onBoardDeleted);
  });
  /** Chat answers still being written; shutdown waits for them (briefly) once their chats are aborted. */
  const answering = new Set<Promise<void>>();
  // Chats end before the server stops: their streams get their last event and finish now, so the server finds their
  // connections idle and closes them, instead of waiting for the keep-alive time or the grace period.
  app.addHook('preClose', async () => {
    sessions.closeAll();
    await Promise.race([Promise.all(answering), new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
    await new Promise((resolve) => setImmediate(resolve));
  });

  app.post(
    `${BASE}/session`,
    {
      schema: {
        tags,
        summary: 'Start an agent session on a board with a chat model',
        description:
          'Sessions live in memory (a restart ends them) and expire after AGENT_SESSION_IDLE_SECONDS (default 3600) without a call.',
        body: SessionBody,
        response: { 200: SessionAnswer, ...errorResponses },
      },
    },
    async (req) => {
      const { board_id, agent_type, model } = req.body;
      ctx.boards.requireBoard(board_id);
      await resolveChatModel(uses.generation, model);
      const s = sessions.create({ boardId: board_id, agentType: agent_type, model });
      return {
        session_id: s.id,
        started_at: s.startedAt,
        board_id,
        agent_type,
        model,
        actions: AGENT_ACTIONS[agent_type],
      };
    },
  );

  app.post(
    `${BASE}/chat`,
    {
      schema: {
        tags,
        summary: 'Chat with the agent; the answer streams as Server-Sent Events with action cards',
        description:
          '`text/event-stream` (default): `event: message` `{delta}` as the model writes, `event: action` with each card when complete, ' +
          'then `event: done` `{message, actions}` or `event: error` `{error: {code, message}}`. With `Accept: application/json`: the ' +
          'same `{message, actions}` as one body. A client that disconnects aborts the model call. One chat at a time per session (409).',
        body: ChatBody,
        response: { 200: ChatAnswer, ...agentErrors },
      },
    },
    async (req, reply) => {
      const session = sessions.require(req.body.session_id);
      if (session.turn)
        throw new Conflict(`Agent session ${session.id} is already answering a chat`, undefined, 'chat_in_progress');
      ctx.boards.requireBoard(session.boardId); // deleted since the session started → 404, not a stream
      const chat = await resolveChatModel(uses.generation, session.model, 'session.model');
      // Local servers' models may not take images: they get the references as text only.
      const input = await turnInput(ctx, session, req.body, chat.provider !== 'openai-compatible');
      sessions.require(session.id); // ended while the references were read → 404 now, not a stream
      if (session.turn)
        throw new Conflict(`Agent session ${session.id} is already answering a chat`, undefined, 'chat_in_progress');
      const turn = new AbortController();
      session.turn = turn;
      reply.raw.once('close', () => {
        if (!reply.raw.writableEnded) turn.abort(new Cancelled('The client disconnected', 'client_gone'));
      });
      const answered = new Promise<void>((resolve) => reply.raw.once('close', resolve));
      answering.add(answered);
      void answered.then(() => answering.delete(answered));
      const finish = () => {
        if (session.turn === turn) session.turn = undefined;
        sessions.touch(session);
      };

      if (wantsJson(req)) {
        try {
          return await runTurn(env, sessions, session, chat, input, turn.signal, {
            delta: () => undefined,
            action: () => undefined,
          });
        } finally {
          finish();
        }
      }

      // Written straight to node's response: each write reaches the socket at once. Through a stream piped by
      // fastify, a write made while the SDK's stream stages run (promise jobs) was handed on only after all of them,
      // which for a packet holding a whole short answer meant after the answer's last piece.
      const res = openEventStream(reply);
      // Node's response corks its socket on a write until the next tick, and that tick comes only after every
      // pending promise job (the SDK's stages working through the rest of the packet). The first write of such a
      // burst is uncorked, so it leaves at once; the rest of the burst leaves together when the tick comes (one
      // system call instead of one per piece: a packet holding a whole answer is a burst of them).
      let burst = false;
      const write = (text: string) => {
        if (res.writableEnded || res.destroyed) return;
        res.write(text);
        if (burst) return;
        burst = true;
        process.nextTick(() => (burst = false));
        if (res.socket?.writableCorked) res.socket.uncork();
      };
      // A comment first: the headers leave at once, not with the first event (the client knows that the stream is
      // open, and the first event's packet is the event alone).
      write(': stream open\n\n');
      const send = (event: string, data: unknown) => write(sseEvent(event, data));
      runTurn(env, sessions, session, chat, input, turn.signal, {
        delta: (delta) => send('message', { delta }),
        action: (card) => send('action', card),
      })
        .then(
          (result) => send('done', result),
          (err: unknown) => {
            const e = err instanceof DomainError ? err : new Internal('internal', 'The chat failed');
            if (!(err instanceof DomainError)) ctx.log.error({ err }, 'agent chat failed');
            send('error', { error: { code: e.code, message: e.message } });
          },
        )
        .finally(() => {
          finish();
          if (!res.writableEnded) res.end();
        });
      return reply;
    },
  );

  app.post(
    `${BASE}/apply-action`,
    {
      schema: {
        tags,
        summary: 'Execute an action card through the service; returns the elements it created or changed and the board',
        description:
          '409 when already applied, rejected, being applied, or when its element was deleted since; 404 for an unknown card. ' +
          'A failing execution answers its error and marks the card failed (it may be applied again).',
        body: CardBody,
        response: { 200: ApplyAnswer, ...agentErrors },
      },
    },
    async (req, reply) => {
      const session = sessions.require(req.body.session_id);
      return applyCard(env, sessions, session, requireCard(session, req.body.action_id), abortOnDisconnect(reply));
    },
  );

  app.post(
    `${BASE}/reject-action`,
    {
      schema: {
        tags,
        summary: 'Drop an action card; the board is not touched',
        body: CardBody,
        response: { 200: RejectAnswer, ...agentErrors },
      },
    },
    async (req) => {
      const session = sessions.require(req.body.session_id);
      return { action: rejectCard(ctx.events, session, requireCard(session, req.body.action_id)) };
    },
  );

  app.post(
    `${BASE}/auto-apply`,
    {
      schema: {
        tags,
        summary: 'While enabled, new action cards execute as they arrive (status applied or failed in the stream)',
        description: 'Off for a new session; it ends with the session.',
        body: AutoApplyBody,
        response: { 200: AutoApplyAnswer, ...errorResponses },
      },
    },
    async (req) => {
      const session = sessions.require(req.body.session_id);
      session.autoApply = req.body.enabled;
      return { session_id: session.id, auto_apply: session.autoApply };
    },
  );

  app.post(
    `${BASE}/end-session`,
    {
      schema: {
        tags,
        summary: 'End a session and free its memory; a chat in flight is aborted. Ending it again changes nothing',
        body: EndBody,
        response: { 200: EndAnswer, ...errorResponses },
      },
    },
    async (req) => {
      sessions.end(req.body.session_id);
      return { session_id: req.body.session_id, ended: true as const };
    },
  );
  return sessions;
};
