import type { Recorded } from './http-double.js';

/** A tool call the scripted assistant makes; `input` is sent as the call's JSON arguments. */
export interface ChatToolCall {
  id?: string;
  name: string;
  input: unknown;
}

/**
 * One assistant turn, scripted by a test and shared by the OpenAI and Anthropic doubles.
 * Streaming requests get `chunks` (or `text` cut into words) as separate deltas, then each tool call with its
 * arguments cut in two deltas, then the finish reason.
 */
export interface ChatTurn {
  text?: string;
  chunks?: string[];
  toolCalls?: ChatToolCall[];
  /** The provider's finish reason; by default `tool_calls`/`tool_use` with tool calls, else `stop`/`end_turn`. */
  finish?: string;
  usage?: { input: number; output: number };
}

/** A turn, or a function of the request that returns one (to answer from what the client sent). */
export type ChatScript = ChatTurn | ((req: Recorded) => ChatTurn);

/** The default turn when nothing is scripted: says which model answered. */
export const defaultTurn = (req: Recorded): ChatTurn => ({
  text: `Hello from ${String(req.json?.model ?? 'a model')}.`,
});

export function turnFor(queue: ChatScript[], req: Recorded): ChatTurn {
  const next = queue.shift() ?? defaultTurn;
  return typeof next === 'function' ? next(req) : next;
}

/** `text` cut after each space, so a stream has several deltas. */
export function pieces(turn: ChatTurn): string[] {
  if (turn.chunks) return turn.chunks;
  if (!turn.text) return [];
  return turn.text.match(/\S+\s*|\s+/g) ?? [turn.text];
}

/** JSON text cut in two, so clients must join argument deltas. */
export function halves(input: unknown): [string, string] {
  const s = JSON.stringify(input ?? {});
  const cut = Math.floor(s.length / 2);
  return [s.slice(0, cut), s.slice(cut)];
}
