import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the bot sent to a chat through the fake Bot API. */
export interface Sent {
  method: string;
  chat_id: number;
  text?: string;
  caption?: string;
  file?: { field: string; filename: string; bytes: Buffer };
}

interface StoredFile {
  file_id: string;
  file_unique_id: string;
  file_path: string;
  bytes: Buffer;
}

type Params = Record<string, string | number | boolean | object | undefined>;

/**
 * A small Bot API server on 127.0.0.1 speaking the methods the chat bot uses: getMe, deleteWebhook, setMyCommands,
 * getUpdates (long polling with offset), sendMessage, sendPhoto/sendVideo/sendDocument (grammY's multipart form),
 * getFile, getChat and the file download path /file/bot<token>/<path>. Tests play the user with userSends*().
 */
export class FakeTelegram {
  readonly sent: Sent[] = [];
  readonly calls: string[] = [];
  /** Usernames of private chats (a private chat's username is its user's), by chat id. */
  readonly usernames = new Map<number, string>();
  private readonly updates: { update_id: number; message: object }[] = [];
  private nextUpdateId = 1;
  private nextMessageId = 1;
  private readonly files = new Map<string, StoredFile>();
  private readonly waiters = new Set<() => void>();
  private readonly server: http.Server;

  constructor(readonly token: string) {
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: false, error_code: 500, description: String(err) }));
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const w of [...this.waiters]) w();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  userSendsText(chatId: number, text: string): void {
    const entities = text.startsWith('/')
      ? [{ type: 'bot_command', offset: 0, length: text.split(/\s/)[0].length }]
      : undefined;
    this.push(chatId, { text, ...(entities ? { entities } : {}) });
  }

  userSendsPhoto(chatId: number, bytes: Buffer, caption?: string): void {
    const big = this.storeFile(bytes, 'photos', '.jpg');
    const small = this.storeFile(bytes.subarray(0, 10), 'photos', '.jpg');
    const size = (f: StoredFile, w: number) => ({
      file_id: f.file_id,
      file_unique_id: f.file_unique_id,
      width: w,
      height: w,
      file_size: f.bytes.length,
    });
    this.push(chatId, { photo: [size(small, 90), size(big, 320)], ...(caption ? { caption } : {}) });
  }

  userSendsVideo(chatId: number, bytes: Buffer, caption?: string): void {
    const f = this.storeFile(bytes, 'videos', '.mp4');
    this.push(chatId, {
      video: {
        file_id: f.file_id,
        file_unique_id: f.file_unique_id,
        width: 320,
        height: 240,
        duration: 1,
        mime_type: 'video/mp4',
        file_size: bytes.length,
      },
      ...(caption ? { caption } : {}),
    });
  }

  userSendsDocument(chatId: number, bytes: Buffer, fileName: string, caption?: string): void {
    const f = this.storeFile(bytes, 'documents', '');
    this.push(chatId, {
      document: { file_id: f.file_id, file_unique_id: f.file_unique_id, file_name: fileName, file_size: bytes.length },
      ...(caption ? { caption } : {}),
    });
  }

  /** Waits until the bot has sent something matching `pred` (checked against everything sent so far). */
  async waitForSent(pred: (s: Sent) => boolean, timeoutMs = 15_000, what = 'a message'): Promise<Sent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.sent.find(pred);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(
          `fake Telegram: timed out waiting for ${what}; sent so far: ${JSON.stringify(this.sent.map((s) => ({ ...s, file: s.file?.filename })))}`,
        );
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  private push(chatId: number, content: object): void {
    const username = this.usernames.get(chatId);
    const message = {
      message_id: this.nextMessageId++,
      date: Math.floor(Date.now() / 1000),
      chat: { id: chatId, type: 'private', first_name: 'User', ...(username ? { username } : {}) },
      from: { id: chatId, is_bot: false, first_name: 'User', ...(username ? { username } : {}) },
      ...content,
    };
    this.updates.push({ update_id: this.nextUpdateId++, message });
    for (const w of [...this.waiters]) w();
  }

  private storeFile(bytes: Buffer, folder: string, ext: string): StoredFile {
    const unique = crypto.randomBytes(6).toString('hex');
    const f = {
      file_id: `fid_${unique}`,
      file_unique_id: `uq_${unique}`,
      file_path: `${folder}/file_${unique}${ext}`,
      bytes,
    };
    this.files.set(f.file_id, f);
    return f;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const filePrefix = `/file/bot${this.token}/`;
    if (url.pathname.startsWith(filePrefix)) {
      const wanted = decodeURIComponent(url.pathname.slice(filePrefix.length));
      const f = [...this.files.values()].find((x) => x.file_path === wanted);
      if (!f) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': f.bytes.length }).end(f.bytes);
      return;
    }
    const m = /^\/bot([^/]+)\/(\w+)$/.exec(url.pathname);
    if (!m || m[1] !== this.token) {
      this.reply(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
      return;
    }
    const method = m[2];
    this.calls.push(method);
    const body = await readBody(req);
    const { params, files } = parseParams(req.headers['content-type'] ?? '', body);
    for (const [k, v] of url.searchParams) params[k] ??= v;
    const ok = (result: unknown) => this.reply(res, 200, { ok: true, result });

    switch (method) {
      case 'getMe':
        return ok({
          id: 4242,
          is_bot: true,
          first_name: 'Bridge',
          username: 'bridge_test_bot',
          can_join_groups: true,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
        });
      case 'deleteWebhook':
      case 'setMyCommands':
        return ok(true);
      case 'getUpdates':
        return ok(await this.getUpdates(params, req));
      case 'getFile': {
        const f = this.files.get(String(params.file_id));
        if (!f)
          return this.reply(res, 400, { ok: false, error_code: 400, description: 'Bad Request: invalid file_id' });
        return ok({
          file_id: f.file_id,
          file_unique_id: f.file_unique_id,
          file_size: f.bytes.length,
          file_path: f.file_path,
        });
      }
      case 'getChat': {
        const id = Number(params.chat_id);
        const username = this.usernames.get(id);
        return ok({
          id,
          type: 'private',
          first_name: 'User',
          ...(username ? { username } : {}),
          accent_color_id: 0,
          max_reaction_count: 11,
        });
      }
      case 'sendMessage': {
        const text = String(params.text ?? '');
        if (text.length === 0 || text.length > 4096) {
          return this.reply(res, 400, {
            ok: false,
            error_code: 400,
            description: 'Bad Request: message is too long or empty',
          });
        }
        this.sent.push({ method, chat_id: Number(params.chat_id), text });
        return ok({
          message_id: this.nextMessageId++,
          date: 0,
          chat: { id: Number(params.chat_id), type: 'private' },
          text,
        });
      }
      case 'sendPhoto':
      case 'sendVideo':
      case 'sendDocument': {
        const field = method.slice(4).toLowerCase();
        const ref = String(params[field] ?? '');
        const attached = ref.startsWith('attach://') ? files.get(ref.slice('attach://'.length)) : files.get(field);
        if (!attached)
          return this.reply(res, 400, { ok: false, error_code: 400, description: `Bad Request: no ${field} uploaded` });
        const caption = params.caption === undefined ? undefined : String(params.caption);
        this.sent.push({ method, chat_id: Number(params.chat_id), caption, file: { field, ...attached } });
        return ok({ message_id: this.nextMessageId++, date: 0, chat: { id: Number(params.chat_id), type: 'private' } });
      }
      default:
        return this.reply(res, 404, {
          ok: false,
          error_code: 404,
          description: `Not Found: method ${method} is not faked`,
        });
    }
  }

  private async getUpdates(params: Params, req: http.IncomingMessage): Promise<object[]> {
    const offset = Number(params.offset ?? 0);
    const limit = Number(params.limit ?? 100);
    const timeout = Number(params.timeout ?? 0);
    // Telegram forgets every update below the offset the client confirms.
    while (this.updates.length > 0 && this.updates[0].update_id < offset) this.updates.shift();
    if (this.updates.length === 0 && timeout > 0) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.waiters.delete(done);
          clearTimeout(timer);
          req.socket.off('close', done);
          resolve();
        };
        const timer = setTimeout(done, timeout * 1000);
        req.socket.once('close', done);
        this.waiters.add(done);
      });
    }
    return this.updates.slice(0, limit);
  }

  private reply(res: http.ServerResponse, status: number, body: object): void {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }
}

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of req) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

/** JSON bodies, and the multipart bodies grammY sends when a call carries an InputFile. */
function parseParams(
  contentType: string,
  body: Buffer,
): { params: Params; files: Map<string, { filename: string; bytes: Buffer }> } {
  const files = new Map<string, { filename: string; bytes: Buffer }>();
  if (body.length === 0) return { params: {}, files };
  if (contentType.includes('application/json')) return { params: JSON.parse(body.toString('utf8')) as Params, files };
  const boundary = /boundary=("?)([^";]+)\1/i.exec(contentType)?.[2];
  if (!boundary) throw new Error(`unsupported content type ${contentType}`);
  const params: Params = {};
  const delimiter = Buffer.from(`--${boundary}`);
  let pos = body.indexOf(delimiter);
  while (pos >= 0) {
    const start = pos + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next < 0) break;
    const part = body.subarray(start + 2, next - 2); // skip the CRLF after the delimiter and before the next one
    const headerEnd = part.indexOf('\r\n\r\n');
    const headers = part.subarray(0, headerEnd).toString('utf8');
    const content = part.subarray(headerEnd + 4);
    const name = /name="([^"]*)"/i.exec(headers)?.[1] ?? '';
    const filename = /filename=("?)([^";\r\n]*)\1/i.exec(headers)?.[2];
    if (filename !== undefined) files.set(name, { filename, bytes: Buffer.from(content) });
    else params[name] = content.toString('utf8');
    pos = next;
  }
  return { params, files };
}
