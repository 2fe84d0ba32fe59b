import type { ModelMessage, Tool, ToolSet } from 'ai';
import type { Validator } from 'typebox/compile';
import { Cancelled, DomainError } from '../errors.js';
import { compileLater } from '../http/compile-later.js';
import type { ResolvedChatModel } from '../generation/models.js';
import type { ChatModel } from '../generation/sdk.js';
import { aiSdk } from '../generation/ai-sdk.js';
import { mapProviderError } from '../generation/errors.js';
import { ACTIONS, type AgentEnv } from './actions.js';
import { addCard, applyCard, newCardId, viewOf } from './cards.js';
import { systemPrompt, type TurnInput } from './prompt.js';
import { ACTION_PARAMS, AGENT_ACTIONS, type ActionCardView, type ActionType } from './schemas.js';
import type { AgentService, Card, Session } from './sessions.js';

/** Model calls of one turn: the first answer plus retries after tool results (a wrong argument corrected). */
export const MAX_STEPS = 8;
/** Messages a session keeps; older turns are dropped whole (a history never starts with a tool result). */
const MAX_HISTORY = 200;
/** Characters of content a session keeps, older turns dropped first (200 messages could hold 20 million). */
export const MAX_HISTORY_CHARS = 1_000_000;

const sizeOf = (m: ModelMessage) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)).length;

type Validators = Record<ActionType, Validator>;
type Ai = Awaited<ReturnType<typeof aiSdk>>;
const compiled = Object.entries(ACTION_PARAMS).map(([type, schema]) => [type, compileLater(schema)] as const);
/** Each action's argument check, compiled at the first turn. */
const loadValidators = async () =>
  Object.fromEntries(await Promise.all(compiled.map(async ([type, load]) => [type, await load()]))) as Validators;

/** The schema's complaints as one sentence the model can act on: `x must be number; unknown field "foo"`. */
function complaints(validator: Validator, value: unknown): string {
  const said = validator
    .Errors(value)
    .filter((e) => e.keyword !== 'boolean')
    .map((e) => {
      const field = e.instancePath.split('/').filter(Boolean).join('.') || 'arguments';
      const extra = (e.params as { additionalProperties?: string[] }).additionalProperties;
      return extra ? `unknown field(s) ${extra.map((f) => `"${f}"`).join(', ')}` : `${field} ${e.message}`;
    });
  return [...new Set(said)].join('; ');
}

/** What the model reads as the tool's result: the card it made and where it stands. */
function toolAnswer(card: Card): Record<string, unknown> {
  if (card.status === 'applied')
    return { action_id: card.id, status: 'applied', note: 'Auto-apply is on: the action was executed.' };
  if (card.status === 'failed') return { action_id: card.id, status: 'failed', error: card.error?.message };
  return {
    action_id: card.id,
    status: 'proposed',
    note: 'Shown to the user as a card; nothing changes until they apply it.',
  };
}

function tools(
  env: AgentEnv,
  sessions: AgentService,
  session: Session,
  turnCards: Card[],
  validators: Validators,
  ai: Ai,
): ToolSet {
  const set: ToolSet = {};
  for (const type of AGENT_ACTIONS[session.agentType]) {
    const def = ACTIONS[type] as (typeof ACTIONS)[ActionType];
    const t: Tool<Record<string, unknown>, Record<string, unknown>> = {
      description: def.description,
      inputSchema: ai.jsonSchema<Record<string, unknown>>(ACTION_PARAMS[type] as object, {
        validate: (value) =>
          validators[type].Check(value)
            ? { success: true, value: value as Record<string, unknown> }
            : {
                success: false,
                error: new Error(`Invalid arguments for ${type}: ${complaints(validators[type], value)}`),
              },
      }),
      execute: async (input, { abortSignal }) => {
        const signal = abortSignal ?? new AbortController().signal;
        const id = newCardId();
        const proposal = await def.propose(env, session, id, input as never, signal);
        const card = addCard(env.ctx.events, session, id, type, input, proposal);
        turnCards.push(card);
        // Auto-apply: the card runs as it arrives; a failure is the card's status, not the turn's.
        if (session.autoApply) await applyCard(env, sessions, session, card, signal).catch(() => undefined);
        return toolAnswer(card);
      },
    };
    set[type] = t;
  }
  return set;
}

type StreamPart = Awaited<ReturnType<ChatModel['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;

/**
 * `model` with each text piece handed to `onText` as the provider's stream yields it. streamText's own stages (tool
 * calls, its tee, the full stream) come after, each a hop before a piece reaches `fullStream`: a piece read here
 * leaves for the client sooner (the agents benchmark measures that way).
 */
function tapText(ai: Ai, model: ChatModel, onText: (text: string) => void): ChatModel {
  return ai.wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: 'v3',
      wrapStream: async ({ doStream }) => {
        const result = await doStream();
        const reader = result.stream.getReader();
        // Read as the provider yields, not when streamText's stages ask (they start asking only after their own
        // setup): the parts wait for them in this stream's queue, a model's answer being small.
        const stream = new ReadableStream<StreamPart>({
          start(queue) {
            void (async () => {
              try {
                for (let next = await reader.read(); !next.done; next = await reader.read()) {
                  const part = next.value;
                  if (part.type === 'text-delta' && part.delta) onText(part.delta);
                  queue.enqueue(part);
                }
                queue.close();
              } catch (err) {
                queue.error(err);
              }
            })();
          },
          cancel: (reason) => reader.cancel(reason),
        });
        return { ...result, stream };
      },
    },
  });
}

export interface TurnEvents {
  delta(text: string): void;
  action(card: ActionCardView): void;
}

export interface TurnResult {
  message: string;
  actions: ActionCardView[];
}

/**
 * One chat turn: the model streams text (each piece handed to `events.delta` at once) and calls tools; each valid
 * call becomes a card (handed to `events.action` when complete). Arguments that fail the schema or the checks go back
 * to the model as the tool's error, within MAX_STEPS model calls. On success the turn joins the session's history.
 * Throws the service's error (provider failures mapped; the session's own reason when it was ended meanwhile).
 */
export async function runTurn(
  env: AgentEnv,
  sessions: AgentService,
  session: Session,
  chat: ResolvedChatModel,
  input: TurnInput,
  signal: AbortSignal,
  events: TurnEvents,
): Promise<TurnResult> {
  const turnCards: Card[] = [];
  const validators = await loadValidators();
  const ai = await aiSdk();
  const timeout = AbortSignal.timeout(chat.callOptions.timeoutMs);
  const abortSignal = AbortSignal.any([signal, timeout]);
  let message = '';
  // Pieces the provider's stream yields once the turn has ended (aborted, failed) are not part of it.
  let open = true;
  const onText = (text: string) => {
    if (!open) return;
    message += text;
    events.delta(text);
  };
  try {
    const result = ai.streamText({
      model: tapText(ai, chat.model, onText),
      system: systemPrompt(env.ctx, session),
      messages: [...session.history, ...input.send],
      tools: tools(env, sessions, session, turnCards, validators, ai),
      stopWhen: ai.stepCountIs(MAX_STEPS),
      maxRetries: chat.callOptions.maxRetries,
      abortSignal,
      // Errors arrive as stream parts below; the default handler would print them to the console.
      onError: () => undefined,
    });
    for await (const part of result.fullStream) {
      if (part.type === 'tool-result') {
        const card = turnCards.find((c) => c.id === (part.output as { action_id?: string } | undefined)?.action_id);
        if (card) events.action(viewOf(card));
      } else if (part.type === 'start-step' && part.warnings.length > 0) {
        env.ctx.log.warn({ warnings: part.warnings, model: chat.entry.id }, 'the chat model warned about the call');
      } else if (part.type === 'error') {
        throw part.error;
      } else if (part.type === 'abort') {
        throw abortSignal.reason ?? new Error('aborted');
      }
    }
    const response = await result.response;
    remember(session, [...input.keep, ...response.messages]);
    return { message, actions: turnCards.map(viewOf) };
  } catch (err) {
    if (signal.aborted)
      throw signal.reason instanceof DomainError ? signal.reason : new Cancelled('The chat was cancelled', 'aborted');
    throw mapProviderError(err, chat.provider, timeout);
  } finally {
    open = false;
  }
}

function remember(session: Session, messages: ModelMessage[]): void {
  if (session.closed) return;
  const history = [...session.history, ...messages];
  let start = Math.max(0, history.length - MAX_HISTORY);
  let chars = history.slice(start).reduce((n, m) => n + sizeOf(m), 0);
  for (; chars > MAX_HISTORY_CHARS && start < history.length - 1; start++) chars -= sizeOf(history[start]);
  while (start < history.length && history[start].role !== 'user') start++;
  session.history = history.slice(start);
}
