import type { AppContext } from '../context.js';
import type { Element } from '../boards/schemas.js';
import type { BridgeService } from '../bridge/service.js';
import { writeNewFile } from '../files/atomic.js';
import { filenameFromTitle } from '../files/names.js';
import type { GenerationContext } from '../generation/context.js';
import { costEstimate, generate } from '../generation/generate.js';
import { isQueued, listModels, resolveModel } from '../generation/models.js';
import type { HtmlCardService } from '../html/card-html.js';
import { convertImage, IMAGE_FORMATS, type ImageFormat } from '../media/convert-image.js';
import { validateConvertVideo, VIDEO_FORMATS, type VideoCodec, type VideoFormat } from '../media/convert-video.js';
import { JOB_CONVERT } from '../media/jobs.js';
import { elementSources, type NewMediaResult } from '../media/new-element.js';
import { trimMedia } from '../media/trim.js';
import { Previews } from './previews.js';
import type { ActionParamsOf, ActionType } from './schemas.js';
import type { Session } from './sessions.js';
import { Conflict } from '../errors.js';

/**
 * What actions run with: the service context, the preview renderer, and what other features built and hand on (registerFeatures).
 */
export interface AgentEnv {
  ctx: AppContext;
  previews: Previews;
  /** The terminal bridge, for send_to_terminal. */
  bridge: BridgeService;
  /** Generation's providers and history, for generate_image and the chat model. */
  generation: GenerationContext;
  /** The html feature's card HTML, for update_element_html. */
  cards: HtmlCardService;
}

/** A card's content before it is stored: what the user sees, the arguments it will run with, the element it touches. */
export interface Proposal {
  preview: Record<string, unknown>;
  /** The arguments with defaults filled in, so the card runs exactly what its preview showed. */
  params?: Record<string, unknown>;
  target?: Element;
}

/** The elements an executed card created or changed; a queued generation adds the job whose result comes later. */
export interface Outcome {
  elements: Element[];
  job_id?: string;
}

interface ActionDef<T extends ActionType> {
  /** The tool's description for the model. */
  description: string;
  /**
   * Checks what the schema cannot (the element exists on the board, is of the right kind, the values fit it) and
   * builds the preview. A thrown Error's message goes back to the model as the tool's result; no card is made.
   */
  propose(
    env: AgentEnv,
    session: Session,
    cardId: string,
    params: ActionParamsOf<T>,
    signal: AbortSignal,
  ): Promise<Proposal>;
  /** Executes the card through the service's own functions. */
  apply(env: AgentEnv, session: Session, params: ActionParamsOf<T>, signal: AbortSignal): Promise<Outcome>;
}

/** An element of the session's board, for the model: a wrong id is its mistake, said so it can pick another. */
function boardElement(env: AgentEnv, session: Session, id: string, kinds?: Element['type'][]): Element {
  const el = env.ctx.boards.store.getElement(id);
  if (!el || el.board_id !== session.boardId)
    throw new Error(`There is no element ${id} on this board; use an id from the board's element list`);
  if (kinds && !kinds.includes(el.type))
    throw new Error(
      `Element ${id} is ${el.type === 'image' ? 'an' : 'a'} ${el.type}; this action needs ${kinds.join(' or ')}`,
    );
  return el;
}

const SPACE = /\s/;
const skipSpace = (text: string, at: number) => {
  while (at < text.length && SPACE.test(text[at])) at++;
  return at;
};

/**
 * Whether the html opens with `<html` after white space, an optional doctype and comments. A scan rather than one
 * regex: a repeated lazy comment group backtracks exponentially over a page of many comments (30 took seconds).
 */
function isFullDocument(html: string): boolean {
  let at = skipSpace(html, 0);
  if (html.slice(at, at + 14).toLowerCase() === '<!doctype html') {
    const end = html.indexOf('>', at);
    if (end < 0) return false;
    at = skipSpace(html, end + 1);
  }
  while (html.startsWith('<!--', at)) {
    const end = html.indexOf('-->', at + 4);
    if (end < 0) return false;
    at = skipSpace(html, end + 3);
  }
  return /^<html[\s>]/i.test(html.slice(at, at + 6));
}

function requireDocument(html: string): void {
  if (!isFullDocument(html))
    throw new Error('html must be a full HTML document: <!doctype html><html><head>...</head><body>...</body></html>');
}

const elementOf = (env: AgentEnv, session: Session, id: string) => env.ctx.boards.requireElement(session.boardId, id);

export const ACTIONS: { [T in ActionType]: ActionDef<T> } = {
  generate_image: {
    description:
      'Propose generating an image from a prompt with an image model; the image is added to the board when applied.',
    async propose(env, _session, _cardId, p) {
      const g = env.generation;
      const available = (await listModels(g)).image.map((m) => m.id);
      const id = p.model ?? available[0];
      if (!id) throw new Error('No image model is configured on this service, so no image can be generated');
      const { entry } = await resolveModel(g, id, ['image'], 'model').catch((err: Error) => {
        throw new Error(`${err.message}. Image models available: ${available.join(', ') || 'none'}`);
      });
      const ratios = entry.aspectRatios ?? [];
      const ratio = p.aspect_ratio ?? ratios[0];
      if (ratio !== undefined && ratios.length > 0 && !ratios.includes(ratio)) {
        throw new Error(`Model ${entry.id} takes the aspect ratios ${ratios.join(', ')}, not ${ratio}`);
      }
      return {
        params: { ...p, model: entry.id, ...(ratio !== undefined ? { aspect_ratio: ratio } : {}) },
        preview: {
          model: entry.id,
          model_label: entry.label,
          provider: entry.provider,
          prompt: p.prompt,
          aspect_ratio: ratio ?? null,
          cost_estimate: costEstimate(entry, {}),
          currency: 'USD',
          queued: isQueued(entry),
        },
      };
    },
    async apply(env, session, p, signal) {
      const answer = await generate(
        env.generation,
        { board_id: session.boardId, model: p.model ?? '', prompt: p.prompt, aspect_ratio: p.aspect_ratio ?? '' },
        signal,
      );
      if (answer.status === 'queued') return { elements: [], job_id: answer.job_id };
      return { elements: [elementOf(env, session, answer.element.id)] };
    },
  },

  update_element_html: {
    description:
      "Propose replacing an html card's document with a new full HTML document (the card keeps its earlier versions).",
    async propose(env, session, cardId, p, signal) {
      const el = boardElement(env, session, p.element_id, ['html']);
      requireDocument(p.html);
      const frame = await env.previews.frame(session.id, cardId, p.html, Previews.size(el.width, el.height), signal);
      return { target: el, preview: { element: el, html_version: el.data.htmlVersion ?? 1, html: p.html, ...frame } };
    },
    async apply(env, session, p) {
      return { elements: [(await env.cards.write(session.boardId, p.element_id, p.html)).element] };
    },
  },

  create_html_card: {
    description: 'Propose a new html card on the board from a full HTML document.',
    async propose(env, session, cardId, p, signal) {
      requireDocument(p.html);
      const frame = await env.previews.frame(session.id, cardId, p.html, Previews.size(), signal);
      return { preview: { name: p.name, x: p.x ?? 0, y: p.y ?? 0, html: p.html, ...frame } };
    },
    async apply(env, session, p) {
      const dir = await env.ctx.media.boardDir(session.boardId);
      const filename = await writeNewFile(dir, filenameFromTitle(p.name, 'card', 'html'), p.html);
      const url = env.ctx.media.urlFor(session.boardId, filename);
      return {
        elements: [
          await env.ctx.boards.addElement(session.boardId, { type: 'html', url, name: p.name, x: p.x, y: p.y }),
        ],
      };
    },
  },

  add_text: {
    description: 'Propose a text note on the board.',
    async propose(_env, _session, _cardId, p) {
      return { preview: { text: p.text, x: p.x ?? 0, y: p.y ?? 0 } };
    },
    async apply(env, session, p) {
      return {
        elements: [
          await env.ctx.boards.addElement(session.boardId, { type: 'text', data: { text: p.text }, x: p.x, y: p.y }),
        ],
      };
    },
  },

  move_element: {
    description: 'Propose moving an element to board coordinates x, y.',
    async propose(env, session, _cardId, p) {
      const el = boardElement(env, session, p.element_id);
      return { target: el, preview: { element: el, from: { x: el.x, y: el.y }, to: { x: p.x, y: p.y } } };
    },
    async apply(env, session, p) {
      return { elements: [env.ctx.boards.updateElement(session.boardId, p.element_id, { x: p.x, y: p.y })] };
    },
  },

  delete_element: {
    description: 'Propose removing an element from the board (its file stays in the board folder).',
    async propose(env, session, _cardId, p) {
      const el = boardElement(env, session, p.element_id);
      return { target: el, preview: { element: el } };
    },
    async apply(env, session, p) {
      const el = elementOf(env, session, p.element_id);
      env.ctx.boards.deleteElement(session.boardId, p.element_id);
      return { elements: [el] };
    },
  },

  trim_media: {
    description: 'Propose cutting start_seconds..end_seconds of a video or audio element into a new element.',
    async propose(env, session, _cardId, p) {
      const el = boardElement(env, session, p.element_id, ['video', 'audio']);
      if (!(p.start_seconds < p.end_seconds)) throw new Error('start_seconds must be less than end_seconds');
      const duration = typeof el.data.duration === 'number' ? el.data.duration : undefined;
      if (duration !== undefined && p.end_seconds > duration + 0.001) {
        throw new Error(
          `end_seconds ${p.end_seconds} is past the end of element ${el.id} (${duration.toFixed(3)} s long)`,
        );
      }
      return {
        target: el,
        preview: {
          element: el,
          start_seconds: p.start_seconds,
          end_seconds: p.end_seconds,
          length_seconds: p.end_seconds - p.start_seconds,
        },
      };
    },
    async apply(env, session, p, signal) {
      const r = await trimMedia(env.ctx, { board_id: session.boardId, ...p }, signal);
      return { elements: [elementOf(env, session, r.element.id)] };
    },
  },

  convert_media: {
    description:
      'Propose converting an image (png, jpg, webp, avif; optional width/height) or a video (mp4, webm, mov; optional codec, bitrate) into a new element.',
    async propose(env, session, _cardId, p) {
      const el = boardElement(env, session, p.element_id, ['image', 'video']);
      if (el.type === 'image') {
        if (!(IMAGE_FORMATS as readonly string[]).includes(p.format))
          throw new Error(`An image converts to ${IMAGE_FORMATS.join(', ')}, not ${p.format}`);
        if (p.codec !== undefined || p.bitrate !== undefined)
          throw new Error('codec and bitrate are for videos; omit them for an image');
        const params = { element_id: p.element_id, format: p.format, width: p.width, height: p.height };
        return {
          target: el,
          params,
          preview: { element: el, format: p.format, width: p.width ?? null, height: p.height ?? null },
        };
      }
      if (!(VIDEO_FORMATS as readonly string[]).includes(p.format))
        throw new Error(`A video converts to ${VIDEO_FORMATS.join(', ')}, not ${p.format}`);
      if (p.width !== undefined || p.height !== undefined)
        throw new Error('width and height are for images; omit them for a video');
      const format = p.format as VideoFormat;
      const codec: VideoCodec = p.codec ?? (format === 'webm' ? 'vp9' : 'h264');
      try {
        validateConvertVideo({ board_id: session.boardId, element_id: el.id, format, codec, bitrate: p.bitrate });
      } catch (err) {
        throw new Error((err as Error).message, { cause: err });
      }
      const params = { element_id: p.element_id, format, codec, ...(p.bitrate ? { bitrate: p.bitrate } : {}) };
      return { target: el, params, preview: { element: el, format, codec, bitrate: p.bitrate ?? null } };
    },
    async apply(env, session, p, signal) {
      const el = elementOf(env, session, p.element_id);
      const req = { board_id: session.boardId, element_id: p.element_id };
      const r =
        el.type === 'image'
          ? await convertImage(env.ctx, { ...req, format: p.format as ImageFormat, width: p.width, height: p.height })
          : ((await env.ctx.jobs.runNow(
              JOB_CONVERT,
              {
                ...req,
                format: p.format as VideoFormat,
                codec: p.codec ?? 'h264',
                bitrate: p.bitrate,
                sources: elementSources(env.ctx, req.board_id, [req.element_id]),
              },
              signal,
            )) as NewMediaResult);
      return { elements: [elementOf(env, session, r.element.id)] };
    },
  },

  send_to_terminal: {
    description: "Propose typing text into the board's agent terminal (through the terminal bridge) and submitting it.",
    async propose(env, session, _cardId, p) {
      const live = env.bridge.liveOnBoard(session.boardId);
      return {
        preview: {
          text: p.text,
          terminals: live.map((s) => ({ bot_id: s.bot_id, session_id: s.session_id })),
          connected: live.length > 0,
        },
      };
    },
    async apply(env, session, p) {
      const bridge = env.bridge;
      const live = bridge.liveOnBoard(session.boardId);
      if (live.length === 0) {
        throw new Conflict(
          `No terminal is live on board ${session.boardId}: arm the terminal bridge for it and link a chat`,
          undefined,
          'terminal_not_connected',
        );
      }
      const terminals = new Set(live.map((s) => s.session_id));
      if (terminals.size > 1) {
        throw new Conflict(
          `${terminals.size} terminals are live on board ${session.boardId}; disarm all but one`,
          { session_ids: [...terminals] },
          'ambiguous_bridge',
        );
      }
      // One terminal armed for several bots reads each bot's queue: the text goes to one of them, typed once.
      const result = bridge.queueTextToTerminal(live[0].bot_id, p.text);
      if (!result.queued)
        throw new Conflict(`The terminal bridge did not queue the text (${result.reason})`, undefined, 'not_queued');
      return { elements: [] };
    },
  },
};
