import type { FastifyBaseLogger } from 'fastify';
import type { BoardEvents } from '../boards/events.js';
import type { BoardService } from '../boards/service.js';
import { MEDIA_TYPES, type Board, type Element } from '../boards/schemas.js';
import type { MediaRoot } from '../files/media-root.js';
import { nowIso } from '../ids.js';
import { hasControlCharacters, stripAnsi } from './ansi.js';
import { mediaItem, pathItem, textItem, type BridgeItem } from './items.js';
import { ItemQueue } from './queue.js';
import type { BridgeStatus } from './schemas.js';
import type { BridgeStore } from './store.js';
import { Conflict, InvalidInput } from '../errors.js';

declare module '../boards/events.js' {
  interface BoardEventMap {
    /**
     * A bot's session was armed or disarmed, or its chat linked or unlinked (the live event stream's `bridge.status`),
     * with the board concerned: the armed one, or the one just left.
     */
    'bridge-status': [BridgeStatus, string | null];
  }
}

/** Items kept per queue while nobody collects them; beyond this the oldest are dropped. */
const QUEUE_CAPACITY = 1000;

export type QueueResult =
  | { queued: true; bot_id: string; item: BridgeItem }
  | { queued: false; bot_id: string; reason: 'inactive' | 'empty' };

/** One bot's half of the bridge: armed session, chat link and its two queues. Nothing here is shared between bots. */
class BotBridge {
  session: { sessionId: string; boardId: string } | null = null;
  chatId: number | null = null;
  /** Long polls running on either queue; while any runs, a push must find this very entry. */
  polls = 0;
  readonly toMessenger = new ItemQueue<BridgeItem>(QUEUE_CAPACITY);
  readonly toTerminal = new ItemQueue<BridgeItem>(QUEUE_CAPACITY);

  constructor(readonly id: string) {}

  get active(): boolean {
    return this.session !== null && this.chatId !== null;
  }

  /** Holds nothing a later call could need: the entry may go, and a later call starts from the default state. */
  get idle(): boolean {
    return (
      this.session === null &&
      this.chatId === null &&
      this.polls === 0 &&
      this.toMessenger.length === 0 &&
      this.toTerminal.length === 0
    );
  }
}

/**
 * The terminal bridge's per-bot state machine (spec "Terminal bridge per bot"): a bot is active when a terminal
 * session is armed AND a chat is linked; items are queued only while active; disarming or unlinking drains both
 * queues and forgets which media were sent. Arming and linking are persisted, queues are not.
 *
 * Only arming and linking create an entry in memory. Reads work on a throwaway default, and a long poll holds an
 * entry only while it waits; an entry that holds nothing is dropped, so any number of bot ids costs no memory.
 */
export class BridgeService {
  private readonly bots = new Map<string, BotBridge>();

  constructor(
    private readonly store: BridgeStore,
    private readonly boards: BoardService,
    private readonly media: MediaRoot,
    private readonly log: FastifyBaseLogger,
    private readonly events: BoardEvents,
  ) {
    for (const s of store.sessions()) this.bot(s.bot_id).session = { sessionId: s.session_id, boardId: s.board_id };
    for (const c of store.chats()) this.bot(c.bot_id).chatId = c.chat_id;
  }

  /** Bots held in memory; tests check that reads and waits leave none behind. */
  get botCount(): number {
    return this.bots.size;
  }

  /** The bot's entry, created when missing: only for calls that store state or wait on a queue. */
  private bot(id: string): BotBridge {
    let bot = this.bots.get(id);
    if (!bot) {
      bot = new BotBridge(id);
      this.bots.set(id, bot);
    }
    return bot;
  }

  status(botId: string): BridgeStatus {
    const bot = this.bots.get(botId) ?? new BotBridge(botId);
    return {
      bot_id: botId,
      session_enabled: bot.session !== null,
      chat_linked: bot.chatId !== null,
      board_id: bot.session?.boardId ?? null,
      active: bot.active,
      session_id: bot.session?.sessionId ?? null,
      chat_id: bot.chatId,
    };
  }

  /** Announces the bot's state after a change; `boardId`: the board its session was on, when it was disarmed. */
  private changed(botId: string, boardId: string | null): void {
    const status = this.status(botId);
    this.events.emit('bridge-status', status, status.board_id ?? boardId);
  }

  /** Drops the entry of a bot that holds nothing, so bot ids that come and go leave no memory behind. */
  private forgetIfIdle(bot: BotBridge): void {
    if (bot.idle && this.bots.get(bot.id) === bot) this.bots.delete(bot.id);
  }

  /** Name of the board the bot's armed session works on (null when not armed). */
  boardName(botId: string): string | null {
    const boardId = this.bots.get(botId)?.session?.boardId;
    return boardId ? (this.boards.store.getBoard(boardId)?.name ?? null) : null;
  }

  /** Arms a terminal session for the bot. Another session taking over starts a fresh conversation (queues drained). */
  arm(botId: string, sessionId: string, boardId: string): BridgeStatus {
    this.boards.requireBoard(boardId);
    const bot = this.bot(botId);
    if (bot.session?.sessionId !== sessionId || bot.session.boardId !== boardId) {
      if (bot.session) this.drain(bot);
      bot.session = { sessionId, boardId };
      this.store.saveSession({ bot_id: botId, session_id: sessionId, board_id: boardId }, nowIso());
      this.changed(botId, boardId);
    }
    return this.status(botId);
  }

  /** Disarms; a session_id naming another session than the armed one changes nothing (a stale terminal exiting). */
  disarm(botId: string, sessionId?: string): BridgeStatus {
    const bot = this.bots.get(botId);
    if (bot?.session && (sessionId === undefined || bot.session.sessionId === sessionId)) {
      const left = bot.session.boardId;
      bot.session = null;
      this.store.deleteSession(botId);
      this.drain(bot);
      this.forgetIfIdle(bot);
      this.changed(botId, left);
    }
    return this.status(botId);
  }

  /** Links a chat; another chat taking over starts a fresh conversation (queues drained). */
  link(botId: string, chatId: number): BridgeStatus {
    const bot = this.bot(botId);
    if (bot.chatId !== chatId) {
      if (bot.chatId !== null) this.drain(bot);
      bot.chatId = chatId;
      this.store.saveChat({ bot_id: botId, chat_id: chatId }, nowIso());
      this.changed(botId, null);
    }
    return this.status(botId);
  }

  /** Unlinks; a chat_id naming another chat than the linked one changes nothing. */
  unlink(botId: string, chatId?: number): BridgeStatus {
    const bot = this.bots.get(botId);
    if (bot && bot.chatId !== null && (chatId === undefined || bot.chatId === chatId)) {
      bot.chatId = null;
      this.store.deleteChat(botId);
      this.drain(bot);
      this.forgetIfIdle(bot);
      this.changed(botId, null);
    }
    return this.status(botId);
  }

  /** Live bots whose armed terminal session works on this board (the agents' send_to_terminal). */
  liveOnBoard(boardId: string): BridgeStatus[] {
    return [...this.bots.values()]
      .filter((b) => b.active && b.session?.boardId === boardId)
      .map((b) => this.status(b.id));
  }

  /** Terminal output for the chat, stored without escape sequences. */
  queueToMessenger(botId: string, text: string): QueueResult {
    const bot = this.bots.get(botId);
    if (!bot?.active) return { queued: false, bot_id: botId, reason: 'inactive' };
    const clean = stripAnsi(text);
    if (clean.trim() === '') return { queued: false, bot_id: botId, reason: 'empty' };
    return this.push(bot.toMessenger, bot, textItem(clean));
  }

  /** A chat message to type into the terminal; control characters are removed so a message cannot drive the terminal. */
  queueTextToTerminal(botId: string, text: string): QueueResult {
    const bot = this.bots.get(botId);
    if (!bot?.active) return { queued: false, bot_id: botId, reason: 'inactive' };
    const clean = stripAnsi(text);
    if (clean.trim() === '') return { queued: false, bot_id: botId, reason: 'empty' };
    return this.push(bot.toTerminal, bot, textItem(clean));
  }

  /**
   * A board file handed to the terminal as its absolute path (404 when the file is missing). A path with control
   * characters (a file in a connected folder may be named so) is refused: typed, it could submit or drive the terminal.
   */
  async queuePathToTerminal(botId: string, url: string): Promise<QueueResult> {
    const file = await this.media.resolveUrl(url);
    if (hasControlCharacters(file.path)) {
      throw new InvalidInput(
        'The path of this file contains control characters (such as ESC, CR or LF), so it is not typed into the terminal; rename the file',
        { url },
        'unsafe_path',
      );
    }
    const bot = this.bots.get(botId);
    if (!bot?.active) return { queued: false, bot_id: botId, reason: 'inactive' };
    return this.push(bot.toTerminal, bot, pathItem(this.canonicalUrl(file), file.path));
  }

  /**
   * send-media: the file goes to exactly one bot, never broadcast. With session_id, the bot whose armed session it
   * is; else the explicitly named bot; else the only live bot. Each failure is a 409 that says which case it is.
   */
  async sendMedia(input: { url: string; caption?: string; sessionId?: string; botId?: string }): Promise<QueueResult> {
    const file = await this.media.resolveUrl(input.url);
    const bot = this.routeMedia(input.sessionId, input.botId);
    const url = this.canonicalUrl(file);
    this.store.markSent(bot.id, url, nowIso());
    return this.push(bot.toMessenger, bot, mediaItem(url, input.caption));
  }

  private routeMedia(sessionId: string | undefined, botId: string | undefined): BotBridge {
    if (sessionId !== undefined) {
      // One terminal may be armed for several bots; the file goes to the one of them that is live (or the named one).
      const holders = [...this.bots.values()].filter((b) => b.session?.sessionId === sessionId);
      if (holders.length === 0) {
        throw new Conflict(
          `Terminal session ${sessionId} is not connected to any bot; arm the bridge for it first`,
          {
            session_id: sessionId,
          },
          'terminal_not_connected',
        );
      }
      if (botId !== undefined) {
        const named = holders.find((b) => b.id === botId);
        if (!named) {
          throw new Conflict(
            `Terminal session ${sessionId} is connected to bot ${holders.map((b) => b.id).join(', ')}, not to bot ${botId}`,
            {
              session_id: sessionId,
              bot_id: botId,
            },
            'terminal_not_connected',
          );
        }
        return this.requireActive(named);
      }
      const live = holders.filter((b) => b.active);
      if (live.length === 1) return live[0];
      if (live.length === 0) return this.requireActive(holders[0]);
      throw new Conflict(
        `Terminal session ${sessionId} is live on ${live.length} bots; pass bot_id to say which one gets the file`,
        {
          session_id: sessionId,
          bot_ids: live.map((b) => b.id),
        },
        'ambiguous_bridge',
      );
    }
    if (botId !== undefined) return this.requireActive(this.bots.get(botId) ?? new BotBridge(botId));
    const live = [...this.bots.values()].filter((b) => b.active);
    if (live.length === 1) return live[0];
    if (live.length === 0) {
      throw new Conflict(
        'No bot is live: no terminal session is armed with a linked chat, so there is nowhere to send the file',
        undefined,
        'no_live_bridge',
      );
    }
    throw new Conflict(
      `${live.length} bots are live; pass session_id (or bot_id) to say which one gets the file`,
      {
        bot_ids: live.map((b) => b.id),
      },
      'ambiguous_bridge',
    );
  }

  private requireActive(bot: BotBridge): BotBridge {
    if (bot.active) return bot;
    const missing = bot.session === null ? 'no terminal session is armed' : 'no chat is linked';
    throw new Conflict(`Bot ${bot.id} is not live: ${missing}`, this.status(bot.id), 'terminal_not_connected');
  }

  /**
   * Board media hook: a media element added to the board of an active bot goes to that bot's chat, unless it came
   * from the chat (loop guard) or that bot already got the file. Synchronous, so the item is queued before the
   * request that added the element is answered. The element's url is already validated and canonical (addElement).
   */
  onElementAdded(element: Element, board: Board): void {
    if (!element.url || !MEDIA_TYPES.includes(element.type)) return;
    const fromChat = element.data.bridge_origin === 'messenger';
    for (const bot of this.bots.values()) {
      if (!bot.active || bot.session?.boardId !== board.id) continue;
      // A file from the chat is recorded as sent, so a later element for the same file is not echoed back either.
      const first = this.store.markSent(bot.id, element.url, nowIso());
      if (first && !fromChat) this.push(bot.toMessenger, bot, mediaItem(element.url));
    }
  }

  /** A deleted board takes its armed sessions with it (the rows go by cascade). */
  onBoardDeleted(board: Board): void {
    for (const bot of this.bots.values()) {
      if (bot.session?.boardId === board.id) {
        bot.session = null;
        this.drain(bot);
        this.forgetIfIdle(bot);
        this.changed(bot.id, board.id);
      }
    }
  }

  /**
   * Runs one long poll on a bot's queue. The entry exists while the poll waits (a push after arming and linking
   * must wake it) and is dropped afterwards if it holds nothing.
   */
  async poll<T>(
    botId: string,
    direction: 'to-messenger' | 'to-terminal',
    wait: (queue: ItemQueue<BridgeItem>) => Promise<T>,
  ): Promise<T> {
    const bot = this.bot(botId);
    bot.polls++;
    try {
      return await wait(direction === 'to-messenger' ? bot.toMessenger : bot.toTerminal);
    } finally {
      bot.polls--;
      this.forgetIfIdle(bot);
    }
  }

  /** Answers every waiting long poll (service shutdown). */
  wakeAll(): void {
    for (const bot of this.bots.values()) {
      bot.toMessenger.wakeAll();
      bot.toTerminal.wakeAll();
    }
  }

  private push(queue: ItemQueue<BridgeItem>, bot: BotBridge, item: BridgeItem): QueueResult {
    if (!queue.push(item)) this.log.warn({ bot_id: bot.id }, 'bridge queue full: its oldest item was dropped');
    return { queued: true, bot_id: bot.id, item };
  }

  private drain(bot: BotBridge): void {
    bot.toMessenger.clear();
    bot.toTerminal.clear();
    this.store.forgetSent(bot.id);
  }

  private canonicalUrl(file: { boardId?: string; relative: string }): string {
    return file.boardId ? this.media.urlFor(file.boardId, file.relative) : this.media.rootUrl(file.relative);
  }
}
