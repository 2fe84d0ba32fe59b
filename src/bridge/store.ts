import type { Db } from '../db/database.js';
import { migrate } from '../db/database.js';

const MIGRATIONS = [
  `CREATE TABLE bridge_sessions (
     bot_id TEXT PRIMARY KEY,
     session_id TEXT NOT NULL,
     board_id TEXT NOT NULL REFERENCES boards(id) ON DELETE CASCADE,
     armed_at TEXT NOT NULL
   );
   CREATE TABLE bridge_chats (
     bot_id TEXT PRIMARY KEY,
     chat_id INTEGER NOT NULL,
     linked_at TEXT NOT NULL
   );
   CREATE TABLE bridge_sent_media (
     bot_id TEXT NOT NULL,
     media_url TEXT NOT NULL,
     sent_at TEXT NOT NULL,
     PRIMARY KEY (bot_id, media_url)
   );`,
];

interface SessionRow {
  bot_id: string;
  session_id: string;
  board_id: string;
}

interface ChatRow {
  bot_id: string;
  chat_id: number;
}

/**
 * The bridge's durable state: armed sessions, chat links and the media already sent per bot, so a restart keeps
 * them. The queues themselves live only in memory.
 */
export class BridgeStore {
  constructor(private readonly db: Db) {
    migrate(db, 'bridge', MIGRATIONS);
  }

  sessions(): SessionRow[] {
    return this.db.prepare('SELECT bot_id, session_id, board_id FROM bridge_sessions').all() as SessionRow[];
  }

  chats(): ChatRow[] {
    // A chat id that is not a safe integer (Infinity, stored by older code that converted "Infinity") names no chat:
    // such a link is ignored, as if unlinked, rather than making every status answer of its bot fail.
    return this.db
      .prepare(
        `SELECT bot_id, chat_id FROM bridge_chats
         WHERE typeof(chat_id) = 'integer' AND chat_id BETWEEN -9007199254740991 AND 9007199254740991`,
      )
      .all() as ChatRow[];
  }

  saveSession(row: SessionRow, at: string): void {
    this.db
      .prepare(
        `INSERT INTO bridge_sessions (bot_id, session_id, board_id, armed_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(bot_id) DO UPDATE SET session_id = excluded.session_id, board_id = excluded.board_id, armed_at = excluded.armed_at`,
      )
      .run(row.bot_id, row.session_id, row.board_id, at);
  }

  deleteSession(botId: string): void {
    this.db.prepare('DELETE FROM bridge_sessions WHERE bot_id = ?').run(botId);
  }

  saveChat(row: ChatRow, at: string): void {
    this.db
      .prepare(
        `INSERT INTO bridge_chats (bot_id, chat_id, linked_at) VALUES (?, ?, ?)
         ON CONFLICT(bot_id) DO UPDATE SET chat_id = excluded.chat_id, linked_at = excluded.linked_at`,
      )
      .run(row.bot_id, row.chat_id, at);
  }

  deleteChat(botId: string): void {
    this.db.prepare('DELETE FROM bridge_chats WHERE bot_id = ?').run(botId);
  }

  /** Records that a file (by its canonical url) went to a bot; false when it had already been sent. */
  markSent(botId: string, mediaUrl: string, at: string): boolean {
    const result = this.db
      .prepare('INSERT OR IGNORE INTO bridge_sent_media (bot_id, media_url, sent_at) VALUES (?, ?, ?)')
      .run(botId, mediaUrl, at);
    return result.changes > 0;
  }

  forgetSent(botId: string): void {
    this.db.prepare('DELETE FROM bridge_sent_media WHERE bot_id = ?').run(botId);
  }
}
