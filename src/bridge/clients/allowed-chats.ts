import { UsageError } from './cli-options.js';

/** The environment variable that lists the chats the bot obeys. */
export const ALLOWED_CHATS_ENV = 'TELEGRAM_ALLOWED_CHATS';

const CHAT_ID = /^-?\d{1,20}$/;
/** Telegram usernames: 4 to 32 characters, letters, digits and `_`, starting with a letter. */
const USERNAME = /^@([A-Za-z][A-Za-z0-9_]{3,31})$/;

/**
 * The chats a bot obeys, from a comma-separated list of chat ids (`123456`, `-1001234567890` for a group) and
 * `@usernames` (matched against the chat's own username, case-insensitively). An empty list allows no chat at all:
 * whoever holds the terminal must name their chat, or a stranger who finds the bot could type into it.
 */
export class ChatAllowlist {
  private constructor(
    private readonly ids: ReadonlySet<number>,
    private readonly usernames: ReadonlySet<string>,
  ) {}

  /** Parses the list; a malformed entry is a UsageError naming it. Blank entries (a trailing comma) are ignored. */
  static parse(list: string | undefined): ChatAllowlist {
    const ids = new Set<number>();
    const usernames = new Set<string>();
    for (const raw of (list ?? '').split(',')) {
      const entry = raw.trim();
      if (entry === '') continue;
      const username = USERNAME.exec(entry);
      if (username) usernames.add(username[1].toLowerCase());
      else if (CHAT_ID.test(entry) && Number.isSafeInteger(Number(entry))) ids.add(Number(entry));
      else
        throw new UsageError(
          `${ALLOWED_CHATS_ENV}: "${entry}" is neither a chat id (such as 123456789 or -1001234567890) nor an @username`,
        );
    }
    return new ChatAllowlist(ids, usernames);
  }

  get empty(): boolean {
    return this.ids.size === 0 && this.usernames.size === 0;
  }

  /** Whether the list names usernames, which only Telegram can map to a chat id. */
  get hasUsernames(): boolean {
    return this.usernames.size > 0;
  }

  allows(chat: { id: number; username?: string }): boolean {
    return this.ids.has(chat.id) || (chat.username !== undefined && this.usernames.has(chat.username.toLowerCase()));
  }

  /** What a refused chat and the log are told: the exact setting that would allow this chat. */
  howToAllow(chatId: number): string {
    return this.empty
      ? `start the bot with ${ALLOWED_CHATS_ENV}=${chatId}`
      : `add ${chatId} to ${ALLOWED_CHATS_ENV} and restart the bot`;
  }
}
