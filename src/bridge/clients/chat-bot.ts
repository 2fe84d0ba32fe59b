import path from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { setTimeout as sleep } from 'node:timers/promises';
import { Bot, GrammyError, InputFile, type Context } from 'grammy';
import type { BridgeItem } from '../items.js';
import { kindOfFile } from '../../files/media-types.js';
import { ALLOWED_CHATS_ENV, type ChatAllowlist } from './allowed-chats.js';
import { BridgeHttpError, type BridgeClient } from './bridge-client.js';
import { splitMessage } from './split-message.js';

interface ChatBotOptions {
  token: string;
  bridge: BridgeClient;
  /** The only chats the bot obeys or delivers to; an empty list refuses every chat. */
  allowedChats: ChatAllowlist;
  /** Root of the Telegram Bot API (a local Bot API server, or a fake one in tests). */
  apiRoot?: string;
  /** Seconds each to-messenger long poll waits. */
  pollWaitSeconds?: number;
  log?: (message: string, err?: unknown) => void;
}

const PHOTO_EXTENSIONS = new Set(['.jpg', '.jpeg', '.png', '.webp']);
const VIDEO_EXTENSIONS = new Set(['.mp4']);

/**
 * The chat end of the bridge: one Telegram bot (one token, one bot_id). It links one chat with /link, forwards that
 * chat's messages and files to the terminal, and delivers what the terminal sends (text and media) to the chat.
 * Only chats on the allowlist are obeyed at all, and of those only the linked one once a chat is linked: a bot's
 * username is public, and whoever it obeys can type into the user's terminal.
 */
export class ChatBot {
  readonly bot: Bot;
  private readonly bridge: BridgeClient;
  private readonly pollWait: number;
  private readonly log: (message: string, err?: unknown) => void;
  private readonly stopping = new AbortController();
  /** Whether a chat id is allowed, for lists with @usernames (Telegram maps those to ids; asked once per chat). */
  private readonly allowedById = new Map<number, boolean>();
  private pollLoop?: Promise<void>;
  private polling?: Promise<void>;

  constructor(private readonly opts: ChatBotOptions) {
    this.bridge = opts.bridge;
    this.pollWait = opts.pollWaitSeconds ?? 25;
    this.log =
      opts.log ??
      ((m, err) => process.stderr.write(`[bot ${opts.bridge.botId}] ${m}${err ? `: ${String(err)}` : ''}\n`));
    this.bot = new Bot(opts.token, opts.apiRoot ? { client: { apiRoot: opts.apiRoot } } : undefined);
    this.install();
  }

  /** Starts receiving chat updates and delivering bridge items; resolves once both are running. */
  async start(): Promise<void> {
    await this.bot.init();
    if (this.opts.allowedChats.empty) {
      this.log(
        `no chat is allowed (${ALLOWED_CHATS_ENV} is empty), so every chat is refused. Send the bot a message to learn ` +
          `your chat's id, then restart it with ${ALLOWED_CHATS_ENV}=<id>`,
      );
    }
    await this.unlinkDisallowedChat();
    await this.bot.api.setMyCommands([
      { command: 'link', description: 'Link this chat to the terminal bridge' },
      { command: 'unlink', description: 'Unlink this chat' },
      { command: 'status', description: 'Show the bridge status' },
    ]);
    await new Promise<void>((resolve, reject) => {
      this.polling = this.bot.start({ allowed_updates: ['message'], onStart: () => resolve() }).catch((err) => {
        this.log('Telegram polling stopped', err);
        reject(err);
      });
    });
    this.pollLoop = this.deliverLoop();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.bot.stop();
    await Promise.allSettled([this.pollLoop, this.polling]);
  }

  private install(): void {
    const bot = this.bot;
    bot.catch((err) => this.log('update failed', err.error));

    // Only allowed chats are obeyed, and once a chat is linked, only that chat.
    bot.use(async (ctx, next) => {
      const chat = ctx.chat;
      if (chat === undefined) return;
      const chatId = chat.id;
      if (!this.opts.allowedChats.allows(chat)) {
        const how = this.opts.allowedChats.howToAllow(chatId);
        this.log(
          `refused chat ${chatId}${chat.username ? ` (@${chat.username})` : ''}: it is not allowed; to allow it, ${how}`,
        );
        await ctx.reply(
          `This chat (id ${chatId}) is not allowed to use this bot, so nothing sent here reaches the terminal. To allow it, ${how}.`,
        );
        return;
      }
      this.allowedById.set(chatId, true);
      const status = await this.bridge.status();
      if (status.chat_linked && status.chat_id !== chatId) {
        await ctx.reply('Sorry, this bot is linked to another chat and only takes orders from there.');
        return;
      }
      if (!status.chat_linked && !/^\/(link|status)\b/.test(ctx.message?.text ?? '')) {
        await ctx.reply('This chat is not linked to a terminal yet. Send /link to connect it.');
        return;
      }
      await next();
    });

    bot.command('link', async (ctx) => {
      const s = await this.bridge.chat(ctx.chat.id, true);
      await ctx.reply(
        s.board_name !== null
          ? `Linked to board "${s.board_name}". Messages here now go to the terminal.`
          : 'Linked. No terminal session is armed yet; messages will flow once one is.',
      );
    });

    bot.command('unlink', async (ctx) => {
      await this.bridge.chat(ctx.chat.id, false);
      await ctx.reply('Unlinked. Send /link to connect again.');
    });

    bot.command('status', async (ctx) => {
      const s = await this.bridge.status();
      const lines = [
        `Bot: ${s.bot_id}`,
        `Chat linked: ${s.chat_linked ? (s.chat_id === ctx.chat.id ? 'yes, this chat' : 'another chat') : 'no'}`,
        `Terminal armed: ${s.session_enabled ? `yes (${s.session_id}, board ${s.board_id})` : 'no'}`,
        `Active: ${s.active ? 'yes' : 'no'}`,
      ];
      await ctx.reply(lines.join('\n'));
    });

    bot.on('message:text', async (ctx) => {
      const res = await this.bridge.toTerminal({ kind: 'text', text: ctx.message.text });
      if (!res.queued) await ctx.reply('No terminal is connected right now; that message was not delivered.');
    });

    bot.on(['message:photo', 'message:video', 'message:document'], (ctx) => this.forwardFile(ctx));
  }

  /** A file from the chat: onto the board (marked as coming from the chat), then its path to the terminal. */
  private async forwardFile(ctx: Context): Promise<void> {
    const msg = ctx.message!;
    const status = await this.bridge.status();
    if (!status.active || !status.board_id) {
      await ctx.reply('No terminal is connected right now; that file was not delivered.');
      return;
    }
    const file = await ctx.getFile();
    if (!file.file_path) throw new Error('Telegram gave no file_path for the file');
    const root = this.opts.apiRoot ?? 'https://api.telegram.org';
    const res = await fetch(`${root}/file/bot${this.opts.token}/${file.file_path}`);
    if (!res.ok) throw new Error(`downloading the file from Telegram answered ${res.status}`);
    const blob = await res.blob();
    const ext = path.extname(file.file_path);
    const name =
      msg.document?.file_name ??
      msg.video?.file_name ??
      `${msg.photo ? 'photo' : 'video'}-${file.file_unique_id}${ext || (msg.photo ? '.jpg' : '.mp4')}`;
    const uploaded = await this.bridge.upload(status.board_id, blob, name, { bridge_origin: 'messenger' });
    try {
      await this.bridge.toTerminal({ kind: 'path', url: uploaded.url });
    } catch (err) {
      // The service refuses a path it is not safe to type (control characters in the board's folder, say).
      if (!(err instanceof BridgeHttpError && err.status === 400)) throw err;
      await ctx.reply(
        `The file is on the board, but its path was not typed into the terminal. ${err.message.replace(/^400: /, '')}`,
      );
      return;
    }
    if (msg.caption) await this.bridge.toTerminal({ kind: 'text', text: msg.caption });
  }

  /** Long-polls to-messenger and delivers each item, in order, to the linked chat. */
  private async deliverLoop(): Promise<void> {
    const signal = this.stopping.signal;
    let failures = 0;
    while (!signal.aborted) {
      let items: BridgeItem[];
      try {
        items = await this.bridge.poll('to-messenger', this.pollWait, signal);
        failures = 0;
      } catch (err) {
        if (signal.aborted) return;
        failures++;
        this.log('polling the service failed', err);
        await sleep(Math.min(30_000, 500 * 2 ** failures), undefined, { signal }).catch(() => {});
        continue;
      }
      if (items.length === 0) continue;
      const chatId = await this.bridge.status().then(
        (s) => s.chat_id,
        () => null,
      );
      if (chatId === null) {
        this.log(`no linked chat: ${items.length} item(s) dropped`);
        continue;
      }
      const allowed = await this.chatAllowed(chatId).catch((err) => {
        this.log(`checking chat ${chatId} against the allowlist failed`, err);
        return false;
      });
      if (!allowed) {
        this.log(`the linked chat ${chatId} is not allowed: ${items.length} item(s) dropped`);
        continue;
      }
      for (const item of items) {
        try {
          await this.deliver(chatId, item);
        } catch (err) {
          this.log(`delivering item ${item.id} failed`, err);
        }
      }
    }
  }

  /** Whether the bot may deliver to a chat it only knows by id (the linked one). */
  private async chatAllowed(chatId: number): Promise<boolean> {
    const list = this.opts.allowedChats;
    if (list.allows({ id: chatId })) return true;
    if (!list.hasUsernames) return false;
    let allowed = this.allowedById.get(chatId);
    if (allowed === undefined) {
      const chat = await this.bot.api.getChat(chatId);
      allowed = list.allows({ id: chatId, username: 'username' in chat ? chat.username : undefined });
      this.allowedById.set(chatId, allowed);
    }
    return allowed;
  }

  /** A chat linked before the allowlist said otherwise (or by a stranger, before there was one) is unlinked at start. */
  private async unlinkDisallowedChat(): Promise<void> {
    const { chat_id: chatId } = await this.bridge.status();
    if (chatId === null || (await this.chatAllowed(chatId))) return;
    await this.bridge.chat(chatId, false);
    this.log(
      `unlinked chat ${chatId}, which is not allowed; to allow it, ${this.opts.allowedChats.howToAllow(chatId)}`,
    );
  }

  private async deliver(chatId: number, item: BridgeItem): Promise<void> {
    if (item.kind === 'text' && item.text) {
      for (const chunk of splitMessage(item.text)) await this.withRetry(() => this.bot.api.sendMessage(chatId, chunk));
    } else if (item.kind === 'media' && item.url) {
      await this.sendMedia(chatId, item.url, item.caption);
    }
  }

  /** Photo or video when Telegram can show it as one, a document otherwise (or when it refuses the photo/video). */
  private async sendMedia(chatId: number, url: string, caption?: string): Promise<void> {
    const filename = decodeURIComponent(url.split('/').pop() ?? 'file');
    const ext = path.extname(filename).toLowerCase();
    const kind = kindOfFile(filename);
    const input = async () =>
      new InputFile(Readable.fromWeb((await this.bridge.media(url)).body as NodeReadableStream<Uint8Array>), filename);
    const other = { ...(caption ? { caption } : {}) };
    try {
      if (kind === 'image' && PHOTO_EXTENSIONS.has(ext)) {
        await this.withRetry(async () => this.bot.api.sendPhoto(chatId, await input(), other));
        return;
      }
      if (kind === 'video' && VIDEO_EXTENSIONS.has(ext)) {
        await this.withRetry(async () => this.bot.api.sendVideo(chatId, await input(), other));
        return;
      }
    } catch (err) {
      if (!(err instanceof GrammyError && err.error_code === 400)) throw err;
      this.log(`Telegram refused ${filename} as ${kind}; sending it as a document`, err);
    }
    await this.withRetry(async () => this.bot.api.sendDocument(chatId, await input(), other));
  }

  /** Retries a Bot API call when Telegram asks to slow down (429) or the network hiccups. */
  private async withRetry<T>(call: () => Promise<T>, attempts = 3): Promise<T> {
    for (let i = 1; ; i++) {
      try {
        return await call();
      } catch (err) {
        const retryAfter = err instanceof GrammyError ? err.parameters.retry_after : undefined;
        const transient = err instanceof GrammyError ? err.error_code === 429 : true;
        if (i >= attempts || !transient) throw err;
        await sleep((retryAfter ?? i) * 1000);
      }
    }
  }
}
