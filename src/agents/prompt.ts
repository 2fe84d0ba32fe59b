import fsp from 'node:fs/promises';
import type { ImagePart, ModelMessage, TextPart } from 'ai';
import sharp from 'sharp';
import type { AppContext } from '../context.js';
import type { Element } from '../boards/schemas.js';
import { AGENT_ACTIONS, type AgentType, type ChatRequest } from './schemas.js';
import type { Session } from './sessions.js';
import { NotFound } from '../errors.js';

/** Elements listed in the system prompt; a larger board is cut (the model can still be given any by reference). */
const BOARD_LISTING = 200;
/** Characters of a card's HTML given to the model; longer cards are cut with a note. */
const HTML_IN_PROMPT = 100_000;
/** Longest side of an image part: enough to see the picture, a bounded upload per reference. */
const IMAGE_SIDE = 1024;

const ROLE: Record<AgentType, string> = {
  'board-helper':
    'You help the user with their moodboard: you look at its elements and propose changes as action cards ' +
    '(the tools). Nothing changes until the user applies a card, so propose freely but precisely.',
  'prompt-suggestor':
    'You help the user find good prompts for image generation. Suggest prompts in your answer and propose the best ones ' +
    'as generate_image cards; use add_text to put a prompt on the board as a note.',
  terminal:
    "You work beside the board's agent terminal. Use send_to_terminal to type a command or a message into it, and the " +
    'board tools for changes on the board. The user approves every card first.',
};

function line(el: Element): string {
  const size = el.width !== null && el.height !== null ? ` ${el.width}x${el.height}` : '';
  return `- ${el.id} ${el.type}${el.name ? ` "${el.name}"` : ''} at (${el.x}, ${el.y})${size}${el.url ? ` ${el.url}` : ''}`;
}

/** Instructions, the tools this agent has, and the board as it is now (read fresh each turn). */
export function systemPrompt(ctx: AppContext, session: Session): string {
  const board = ctx.boards.requireBoard(session.boardId);
  const elements = ctx.boards.listElements(session.boardId);
  const listed = elements.slice(0, BOARD_LISTING).map(line).join('\n');
  const more = elements.length > BOARD_LISTING ? `\n(${elements.length - BOARD_LISTING} more elements not listed)` : '';
  return [
    ROLE[session.agentType],
    `Your tools: ${AGENT_ACTIONS[session.agentType].join(', ')}. Each call becomes a card the user applies or rejects. ` +
      'When a tool answers with an error, correct the arguments and call it again. Element ids must be ids of this board.',
    `Board "${board.name}" (${board.id}), ${elements.length} element(s):\n${listed || '(empty)'}${more}`,
  ].join('\n\n');
}

/** A reference as text: name, type, url, size, and the current HTML of html cards. */
async function describe(ctx: AppContext, el: Element): Promise<string> {
  const d = el.data as Record<string, unknown>;
  const facts: string[] = [`id ${el.id}`, `type ${el.type}`];
  if (el.name) facts.push(`name "${el.name}"`);
  if (el.url) facts.push(`url ${el.url}`);
  if (typeof d.width === 'number' && typeof d.height === 'number') facts.push(`${d.width}x${d.height} px`);
  if (typeof d.duration === 'number') facts.push(`${d.duration.toFixed(2)} s`);
  if (el.width !== null && el.height !== null) facts.push(`shown ${el.width}x${el.height} at (${el.x}, ${el.y})`);
  if (el.url && el.type !== 'text') {
    const file = await ctx.media.resolveUrl(el.url).catch(() => undefined);
    facts.push(file ? `${file.size} bytes` : 'file missing');
  }
  if (el.type === 'text' && typeof d.text === 'string') facts.push(`text: ${JSON.stringify(d.text.slice(0, 2000))}`);
  let text = `- ${facts.join(', ')}`;
  if (el.type === 'html' && el.url) {
    const file = await ctx.media.resolveUrl(el.url).catch(() => undefined);
    const html = file ? await fsp.readFile(file.path, 'utf8').catch(() => undefined) : undefined;
    if (html !== undefined) {
      const cut =
        html.length > HTML_IN_PROMPT ? `\n(cut: the first ${HTML_IN_PROMPT} of ${html.length} characters)` : '';
      text += `\n  Current HTML (version ${String(d.htmlVersion ?? 1)}):\n\`\`\`html\n${html.slice(0, HTML_IN_PROMPT)}\n\`\`\`${cut}`;
    }
  }
  return text;
}

/** The picture of an image element (a video's thumbnail), scaled down, as an image part; undefined if unreadable. */
async function imagePart(ctx: AppContext, el: Element): Promise<ImagePart | undefined> {
  const url =
    el.type === 'image' ? el.url : el.type === 'video' ? (el.data as Record<string, unknown>).thumbnail_url : undefined;
  if (typeof url !== 'string') return undefined;
  try {
    const file = await ctx.media.resolveUrl(url);
    const jpeg = await sharp(file.path, { failOn: 'error', animated: false })
      .rotate()
      .resize(IMAGE_SIDE, IMAGE_SIDE, { fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: 85 })
      .toBuffer();
    return { type: 'image', image: new Uint8Array(jpeg), mediaType: 'image/jpeg' };
  } catch {
    return undefined;
  }
}

export interface TurnInput {
  /** What the model gets this turn: the new messages, the last user message carrying the references and images. */
  send: ModelMessage[];
  /** What the session keeps for later turns: the same without image parts (they are large and were seen). */
  keep: ModelMessage[];
}

/**
 * The new messages of a turn with the references attached to the last user message. References must be elements of
 * the session's board (404 otherwise), checked before anything streams. Models that take no images (local servers)
 * get the description only.
 */
export async function turnInput(
  ctx: AppContext,
  session: Session,
  body: ChatRequest,
  acceptsImages: boolean,
): Promise<TurnInput> {
  const refs = (body.references ?? []).map((id) => {
    const el = ctx.boards.store.getElement(id);
    if (!el || el.board_id !== session.boardId) {
      throw new NotFound(
        `references: element ${id} is not on the session's board ${session.boardId}`,
        'reference_not_found',
        { field: 'body.references', id },
      );
    }
    return el;
  });
  const send: ModelMessage[] = body.messages.map((m) => ({ role: m.role, content: m.content }));
  const keep = send.slice();
  if (refs.length === 0) return { send, keep };
  const lastUser = send.map((m) => m.role).lastIndexOf('user');
  const at = lastUser === -1 ? send.length : lastUser;
  const note = `The user refers to these board elements:\n${(await Promise.all(refs.map((el) => describe(ctx, el)))).join('\n')}`;
  const images = acceptsImages
    ? (await Promise.all(refs.map((el) => imagePart(ctx, el)))).filter((p): p is ImagePart => p !== undefined)
    : [];
  const text = (lastUser === -1 ? '' : (send[at].content as string)) + (lastUser === -1 ? note : `\n\n${note}`);
  const parts: (TextPart | ImagePart)[] = [{ type: 'text', text }, ...images];
  const withRefs: ModelMessage = { role: 'user', content: parts };
  const keptNote = images.length
    ? `${text}\n(${images.length} image(s) of these elements were shown in this message)`
    : text;
  if (lastUser === -1) {
    send.push(withRefs);
    keep.push({ role: 'user', content: keptNote });
  } else {
    send[at] = withRefs;
    keep[at] = { role: 'user', content: keptNote };
  }
  return { send, keep };
}
