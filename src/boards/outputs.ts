import fsp from 'node:fs/promises';
import path from 'node:path';
import { commitUnique, moveFile, tempPathIn } from '../files/atomic.js';
import { kindOfFile } from '../files/media-types.js';
import type { MediaRoot } from '../files/media-root.js';
import { sanitizeFilename } from '../files/names.js';
import type { BoardService } from './service.js';
import type { Element, ElementType } from './schemas.js';

/** A file being produced for a board: a temp path in the board folder, and the name it will ask for. */
export interface PendingOutput {
  boardId: string;
  /** Where the work writes (a dotfile in the board folder, carrying the final extension so ffmpeg and sharp pick the format). */
  temp: string;
  /** The wanted name; a taken one becomes `name (n).ext`. */
  name: string;
}

/** What the element for a produced file is made of, besides its file. */
export interface OutputElement {
  type?: ElementType;
  data?: Record<string, unknown>;
}

/** A produced file with its unique name in the board folder. */
export interface FiledOutput {
  /** The name the file got in the board folder. */
  filename: string;
  /** `/media/<board_id>/<filename>` */
  url: string;
}

export interface CommittedOutput extends FiledOutput {
  element: Element;
}

/**
 * The one recipe for producing a file into a board: temp file in the board folder → unique name (never replacing a
 * file) → element added → leftovers removed on any failure or cancel. Used directly by work answered in the
 * request, and by the job runner for the output a job hands back (`JobOutcome.output`).
 */
export class BoardOutputs {
  constructor(
    private readonly media: MediaRoot,
    private readonly boards: BoardService,
  ) {}

  /** A temp path in the board folder for a file to be called `filename` (sanitised). */
  async reserve(boardId: string, filename: string): Promise<PendingOutput> {
    const dir = await this.media.boardDir(boardId);
    const name = sanitizeFilename(filename, 'media');
    return { boardId, temp: tempPathIn(dir, name), name };
  }

  /**
   * A finished file made elsewhere (an upload in DATA_DIR/tmp, a download's or a provider's file, an entry of an
   * imported archive) as a pending output of the board: moved into the board folder under a temp name (copied when it
   * lies on another file system), then committed or filed like any other. The source is gone afterwards either way.
   */
  async adopt(boardId: string, source: string, filename: string): Promise<PendingOutput> {
    const out = await this.reserve(boardId, filename);
    try {
      await moveFile(source, out.temp);
    } catch (err) {
      // A half-copied temp file in a connected folder would never be cleaned up at start (only the media root is).
      await this.discard(out);
      throw err;
    }
    return out;
  }

  /**
   * Claims a unique name for the finished temp file and adds it to the board. The temp file is gone afterwards
   * either way; a file whose element could not be added is removed again (it was created here, under a fresh name).
   */
  async commit(out: PendingOutput, element: OutputElement = {}): Promise<CommittedOutput> {
    const { filename, url } = await this.file(out);
    const dir = path.dirname(out.temp);
    try {
      const added = await this.boards.addElement(out.boardId, {
        type: element.type ?? kindOfFile(filename),
        url,
        name: filename,
        data: element.data,
      });
      return { element: added, filename, url };
    } catch (err) {
      await fsp.rm(path.join(dir, filename), { force: true });
      throw err;
    }
  }

  /**
   * Claims a unique name for the finished temp file without adding it to the board (previews that would litter it);
   * the temp file is gone afterwards either way.
   */
  async file(out: PendingOutput): Promise<FiledOutput> {
    let filename: string;
    try {
      filename = await commitUnique(out.temp, path.dirname(out.temp), out.name);
    } catch (err) {
      await this.discard(out);
      throw err;
    }
    return { filename, url: this.media.urlFor(out.boardId, filename) };
  }

  /** Removes what a failed or cancelled piece of work left of its output. */
  async discard(out: PendingOutput): Promise<void> {
    await fsp.rm(out.temp, { force: true });
  }

  /** reserve → `write` fills the temp path → commit; the temp file is removed on any failure, including an abort. */
  async produce(
    boardId: string,
    filename: string,
    write: (tempPath: string) => Promise<void>,
    element: OutputElement = {},
  ): Promise<CommittedOutput> {
    const out = await this.reserve(boardId, filename);
    try {
      await write(out.temp);
    } catch (err) {
      await this.discard(out);
      throw err;
    }
    return this.commit(out, element);
  }
}
