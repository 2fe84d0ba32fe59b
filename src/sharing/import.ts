import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { AppContext } from '../context.js';
import type { Element, NewElement } from '../boards/schemas.js';
import { DomainError, InvalidInput, TooLarge, UpstreamFailed } from '../errors.js';
import { BoardOutputs } from '../boards/outputs.js';
import { sanitizeFilename, withExtension } from '../files/names.js';
import { compileLater } from '../http/compile-later.js';
import { badRequest } from '../http/errors.js';
import { jsonValueCount } from '../http/json-body.js';
import { parseHttpUrl } from '../media/download.js';
import { ARCHIVE_LIMITS, extractArchive, type ArchiveLimits } from './archive-reader.js';
import { publicData, sha256File } from './page.js';
import {
  BoardJsonSchema,
  type BoardJson,
  type ImportAnswerT,
  type ImportBodyT,
  type SharedElement,
} from './schemas.js';
import type { Progress } from './service.js';

/** board.json is read whole into memory: it must stay small. */
const MAX_BOARD_JSON_BYTES = 32 * 1024 * 1024;
/** 10,000 elements and 100,000 generations (the format's own limits) take about 1.5 million. */
const MAX_BOARD_JSON_VALUES = 2_000_000;
const boardJsonCheck = compileLater(BoardJsonSchema);

const invalid = (message: string) => new InvalidInput(message, undefined, 'bad_share');

/** Where the files of a shared board come from: an extracted archive, or a live share read over HTTP. */
interface Source {
  /** Puts `rel` (a path board.json names) into the staging folder and answers its path there. */
  fetch(rel: string): Promise<string>;
}

/**
 * Imports a shared board (live URL or uploaded archive) into a board, all or nothing: every file is staged and checked
 * (board.json against its schema, each file against its sha-256) before anything touches the board; if adding the
 * elements fails part-way, the elements added are removed again and the files moved in are deleted.
 */
export class Importer {
  private readonly outputs: BoardOutputs;

  constructor(private readonly ctx: AppContext) {
    this.outputs = new BoardOutputs(ctx.media, ctx.boards);
  }

  limits(): ArchiveLimits {
    return {
      ...ARCHIVE_LIMITS,
      maxEntryBytes: this.ctx.config.downloadMaxBytes,
      maxTotalBytes: 4 * this.ctx.config.downloadMaxBytes,
    };
  }

  /** The checks that need no file or network. */
  check(boardId: string, body: ImportBodyT): void {
    this.ctx.boards.requireBoard(boardId);
    if ((body.from_url === undefined) === (body.from_zip === undefined))
      throw badRequest('Send exactly one of from_url and from_zip', { field: 'body.from_url' });
    if (body.from_url !== undefined) parseHttpUrl(body.from_url);
    if (body.from_zip !== undefined) this.ctx.media.locate(body.from_zip);
  }

  async run(boardId: string, body: ImportBodyT, p: Progress = {}): Promise<ImportAnswerT> {
    this.check(boardId, body);
    const tmp = path.join(this.ctx.config.dataDir, 'tmp');
    await fsp.mkdir(tmp, { recursive: true });
    const staging = await fsp.mkdtemp(path.join(tmp, 'import-'));
    try {
      let source: Source;
      if (body.from_zip !== undefined) {
        const zip = await this.ctx.media.resolveField(body.from_zip, 'from_zip');
        const extracted = await extractArchive(zip.path, staging, this.limits(), p.signal);
        source = {
          fetch: async (rel) => {
            if (!extracted.has(rel)) throw invalid(`board.json names ${rel}, which the archive does not hold`);
            return path.join(staging, ...rel.split('/'));
          },
        };
      } else {
        source = this.urlSource(body.from_url!, staging, p.signal);
      }
      const board = await this.readBoardJson(await source.fetch('board.json'));
      const staged = await this.stage(board, source, p);
      return await this.commit(boardId, body.mode, board, staged);
    } finally {
      await fsp.rm(staging, { recursive: true, force: true });
    }
  }

  /**
   * Files of a live share: `<share url>/<path>`, each within the download limits and all together within four of them,
   * through the address policy (ctx.outbound). A share answers its files itself: a redirect is its error, never followed.
   */
  private urlSource(fromUrl: string, staging: string, signal?: AbortSignal): Source {
    const url = parseHttpUrl(fromUrl);
    url.search = '';
    url.hash = '';
    url.pathname = url.pathname.replace(/index\.html$/, '');
    if (!url.pathname.endsWith('/')) url.pathname += '/';
    const { maxEntryBytes, maxTotalBytes } = this.limits();
    let total = 0;
    const fetched = new Map<string, Promise<string>>();
    const fetchOnce = async (rel: string): Promise<string> => {
      const target = path.join(staging, ...rel.split('/'));
      await fsp.mkdir(path.dirname(target), { recursive: true });
      const timeout = AbortSignal.timeout(this.ctx.config.downloadTimeoutMs);
      const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
      const where = new URL(rel, url);
      let res: Response | undefined;
      // One retry: a kept-alive connection the server closed at the same moment fails a GET that never reached it.
      for (let attempt = 0; !res; attempt++) {
        try {
          res = await this.ctx.outbound.get(where, { signal: both });
        } catch (err) {
          if (signal?.aborted) throw signal.reason;
          if (err instanceof DomainError) throw err;
          if (attempt === 1 || timeout.aborted)
            throw new UpstreamFailed('unreachable', `Could not fetch ${where.href}: ${(err as Error).message}`);
        }
      }
      if (!res.ok || !res.body) {
        await res.body?.cancel();
        if (rel === 'board.json' && res.status === 404)
          throw invalid(`${url.href} is not a shared board (no board.json)`);
        throw new UpstreamFailed('upstream_error', `${where.href} answered ${res.status}`);
      }
      let size = 0;
      const limit = rel === 'board.json' ? MAX_BOARD_JSON_BYTES : maxEntryBytes;
      const meter = new Transform({
        transform(chunk: Buffer, _enc, done) {
          size += chunk.length;
          total += chunk.length;
          if (size > limit)
            return done(new TooLarge(`${rel} is larger than its limit of ${limit} bytes`, 'payload_too_large'));
          if (total > maxTotalBytes)
            return done(new TooLarge(`The shared board is larger than ${maxTotalBytes} bytes`, 'payload_too_large'));
          done(null, chunk);
        },
      });
      try {
        await pipeline(
          Readable.fromWeb(res.body as WebReadableStream<Uint8Array>),
          meter,
          fs.createWriteStream(target, { flags: 'wx' }),
          { signal: both },
        );
      } catch (err) {
        if (err instanceof DomainError) throw err;
        if (signal?.aborted) throw signal.reason;
        throw new UpstreamFailed('unreachable', `Could not fetch ${where.href}: ${(err as Error).message}`);
      }
      return target;
    };
    // Elements showing the same content name the same file: it is fetched once.
    return {
      fetch: (rel) => {
        let p = fetched.get(rel);
        if (!p) fetched.set(rel, (p = fetchOnce(rel)));
        return p;
      },
    };
  }

  private async readBoardJson(file: string): Promise<BoardJson> {
    const st = await fsp.stat(file);
    if (st.size > MAX_BOARD_JSON_BYTES) throw invalid(`board.json is larger than ${MAX_BOARD_JSON_BYTES} bytes`);
    const text = await fsp.readFile(file, 'utf8');
    // Parsing costs by values, not bytes: 32 MiB of `[0]` would be 16 million of them, parsed on the event loop.
    const values = jsonValueCount(text);
    if (values > MAX_BOARD_JSON_VALUES)
      throw invalid(`board.json holds ${values} JSON values, over the limit of ${MAX_BOARD_JSON_VALUES}`);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw invalid(`board.json is not JSON: ${(err as Error).message}`);
    }
    const checkBoardJson = await boardJsonCheck();
    if (!checkBoardJson.Check(value)) {
      const first = [...checkBoardJson.Errors(value)][0];
      throw invalid(
        `board.json${first?.instancePath ? ` at ${first.instancePath}` : ''}: ${first?.message ?? 'does not match the share format'}`,
      );
    }
    const board = value as BoardJson;
    for (const el of board.elements) this.ctx.boards.checkClientData(publicData(el.data));
    return board;
  }

  /** Brings every element's file into staging and checks it against its declared sha-256. */
  private async stage(board: BoardJson, source: Source, p: Progress): Promise<Map<SharedElement, string>> {
    const staged = new Map<SharedElement, string>();
    let n = 0;
    for (const el of board.elements) {
      p.signal?.throwIfAborted();
      if (el.type === 'html' && el.html) staged.set(el, await source.fetch(el.html.path));
      else if (el.file) {
        const file = await source.fetch(el.file.path);
        if ((await sha256File(file)) !== el.file.sha256)
          throw invalid(`${el.file.path} does not match its sha-256 in board.json`);
        staged.set(el, file);
      }
      p.onProgress?.((++n / board.elements.length) * 0.9);
    }
    return staged;
  }

  private async commit(
    boardId: string,
    mode: ImportBodyT['mode'],
    board: BoardJson,
    staged: Map<SharedElement, string>,
  ): Promise<ImportAnswerT> {
    const target =
      mode === 'new-board' ? (await this.ctx.boards.createBoard(board.board.name || 'Imported board')).id : boardId;
    const before = mode === 'replace' ? this.ctx.boards.listElements(target) : [];
    const added: Element[] = [];
    const moved: string[] = [];
    // A staged file several elements share is moved for the last of them and copied for the others.
    const uses = new Map<string, number>();
    for (const f of staged.values()) uses.set(f, (uses.get(f) ?? 0) + 1);
    try {
      const dir = await this.ctx.media.boardDir(target);
      for (const el of board.elements) {
        const input: NewElement = {
          type: el.type,
          name: el.name,
          data: publicData(el.data),
          x: el.x,
          y: el.y,
          width: el.width,
          height: el.height,
        };
        const file = staged.get(el);
        if (file) {
          const wanted =
            el.type === 'html'
              ? withExtension(sanitizeFilename(el.name ?? 'card', 'card'), 'html')
              : sanitizeFilename(el.file!.name, 'file');
          const left = uses.get(file)!;
          uses.set(file, left - 1);
          const from = left > 1 ? `${file}.copy-${left}` : file;
          if (left > 1) await fsp.copyFile(file, from);
          const filed = await this.outputs.file(await this.outputs.adopt(target, from, wanted));
          moved.push(path.join(dir, filed.filename));
          input.url = filed.url;
        } else if (el.type !== 'text') {
          continue; // an element whose file was missing when it was shared has nothing to import
        }
        added.push(await this.ctx.boards.addElement(target, input));
      }
    } catch (err) {
      for (const e of added) this.ctx.boards.deleteElement(target, e.id);
      await Promise.all(moved.map((f) => fsp.rm(f, { force: true })));
      if (mode === 'new-board') {
        await fsp.rm(this.ctx.media.defaultBoardDir(target), { recursive: true, force: true });
        await this.ctx.boards.deleteBoard(target);
      }
      throw err;
    }
    // Replace: the old elements go only once every new one is in (their files stay in the board folder).
    for (const e of before) this.ctx.boards.deleteElement(target, e.id);
    return { board_id: target, mode, imported: added.length };
  }
}
