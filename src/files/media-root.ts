import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Conflict, DomainError } from '../errors.js';
import { badRequest, notFound } from '../http/errors.js';
import { isInside, realpathOf, realpathOfSync, segmentProblem } from './path-rules.js';

/** Where a `/media/...` URL points on disk. */
export interface ResolvedMedia {
  /** Absolute, symlink-free path of the file. */
  path: string;
  /** The board whose folder holds the file, when it is a board file. */
  boardId?: string;
  /** Path of the file relative to its board folder (or to the media root). */
  relative: string;
  size: number;
  mtime: Date;
}

/**
 * The real path of `segments` under `base` when something exists there and, with every symlink resolved, still lies
 * inside `base` with no dotfile on the way; undefined otherwise (missing, or a link that leads out or to a dotfile).
 * Every read of a file the service finds by a name from a request or a record (media, card files and versions,
 * presets) goes through here. A realpath is canonical, so when it starts with `base/` the base holds the file; only
 * otherwise (a base reached through a symlink, or an escape) is the base resolved and asked again, which spares one
 * file-system call on almost every request.
 */
export async function resolveInside(base: string, segments: string[]): Promise<string | undefined> {
  try {
    const real = await realpathOf(path.join(base, ...segments));
    if (isInside(real, base)) return real;
    return isInside(real, await realpathOf(base).catch(() => undefined)) ? real : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads a regular file inside `base` (see resolveInside); undefined when it is missing, not a file, or outside.
 * The resolved path is opened with O_NOFOLLOW, so a file swapped for a link after the check is not followed.
 */
export async function readInside(base: string, segments: string[]): Promise<Buffer | undefined> {
  const real = await resolveInside(base, segments);
  if (!real) return undefined;
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(real, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
  } catch {
    return undefined;
  }
  try {
    return (await handle.stat()).isFile() ? await handle.readFile() : undefined;
  } finally {
    await handle.close();
  }
}

/**
 * Creates the folder `segments` under `base` if needed and returns its real path, provided it lies inside `base`
 * (a folder replaced by a link that leads out is refused): writes and deletes by name happen only in such folders.
 */
export async function folderInside(base: string, segments: string[]): Promise<string> {
  const dir = path.join(base, ...segments);
  // A dangling link in the way makes mkdir fail; the check below then refuses it.
  await fsp.mkdir(dir, { recursive: true }).catch(() => undefined);
  const real = await resolveInside(base, segments);
  if (!real || !(await fsp.stat(real)).isDirectory())
    throw new Conflict(`${dir} leads outside ${base}`, undefined, 'unsafe_folder');
  return real;
}

/**
 * Opens a regular file for reading, synchronously: NONBLOCK so that a FIFO cannot wait for a writer, NOFOLLOW so that
 * a last component that became a symlink after the containment check is not followed. Undefined when it cannot be
 * opened or is not a regular file. The caller closes `fd`.
 */
export function openRegularFile(real: string): { fd: number; stat: fs.Stats } | undefined {
  let fd: number;
  try {
    fd = fs.openSync(real, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0) | (fs.constants.O_NOFOLLOW ?? 0));
  } catch {
    return undefined;
  }
  const stat = fs.fstatSync(fd);
  if (stat.isFile()) return { fd, stat };
  fs.closeSync(fd);
  return undefined;
}

function realpathOrUndefined(p: string): string | undefined {
  try {
    return realpathOfSync(p);
  } catch {
    return undefined;
  }
}

/**
 * The media root (`DATA_DIR/media`) and the mapping between `/media/...` URLs and files. Board folders are
 * `media/admin/<board_id>/` unless the board has a connected folder; `boardFolder` tells which (undefined: no board).
 * Every path that comes from a request goes through `resolveUrl`, which refuses anything that could leave its base.
 */
export class MediaRoot {
  readonly root: string;
  readonly boardsRoot: string;

  constructor(
    dataDir: string,
    private readonly boardFolder: (boardId: string) => string | null | undefined,
  ) {
    this.root = path.join(dataDir, 'media');
    this.boardsRoot = path.join(this.root, 'admin');
    fs.mkdirSync(this.boardsRoot, { recursive: true });
  }

  /** The folder holding a board's files (created on demand). Throws 404 for an unknown board. */
  async boardDir(boardId: string): Promise<string> {
    const dir = this.boardDirSync(boardId);
    await fsp.mkdir(dir, { recursive: true });
    return dir;
  }

  private boardDirSync(boardId: string): string {
    const connected = this.boardFolder(boardId);
    if (connected === undefined) throw notFound(`Board ${boardId} not found`);
    return connected ?? path.join(this.boardsRoot, boardId);
  }

  /** Default folder of a board inside the media root (its files when it has no connected folder). */
  defaultBoardDir(boardId: string): string {
    return path.join(this.boardsRoot, boardId);
  }

  /** Public URL of a board file, in the short form the spec uses. */
  urlFor(boardId: string, relative: string): string {
    return `/media/${encodeURIComponent(boardId)}/${relative.split(/[\\/]/).map(encodeURIComponent).join('/')}`;
  }

  /** Public URL of a file stored directly under the media root (share archives, thumbnails). */
  rootUrl(relative: string): string {
    return `/media/${relative.split(/[\\/]/).map(encodeURIComponent).join('/')}`;
  }

  /**
   * Splits a `/media/...` URL (absolute URLs and query strings are tolerated) into its base folder and the
   * decoded, validated segments inside it. No file-system access beyond the board lookup.
   */
  locate(url: string): { base: string; segments: string[]; boardId?: string } {
    let pathname = url;
    if (/^[a-z][a-z0-9+.-]*:/i.test(url)) {
      try {
        pathname = new URL(url).pathname;
      } catch {
        throw badRequest(`"${url}" is not a valid URL`);
      }
    }
    pathname = pathname.split(/[?#]/)[0];
    if (!pathname.startsWith('/media/')) throw badRequest(`"${url}" is not a /media/... URL`);
    const segments = pathname
      .slice('/media/'.length)
      .split('/')
      .map((raw) => {
        let seg: string;
        try {
          seg = decodeURIComponent(raw);
        } catch {
          throw badRequest('Malformed percent-encoding in media path');
        }
        if (segmentProblem(seg)) throw badRequest('Media path contains a forbidden segment');
        return seg;
      });
    if (segments.length === 0) throw badRequest('Empty media path');
    if (segments[0] === 'admin' && segments.length >= 3) {
      return { base: this.boardDirSync(segments[1]), segments: segments.slice(2), boardId: segments[1] };
    }
    const connected = segments.length >= 2 ? this.boardFolder(segments[0]) : undefined;
    if (connected !== undefined) {
      return {
        base: connected ?? this.defaultBoardDir(segments[0]),
        segments: segments.slice(1),
        boardId: segments[0],
      };
    }
    return { base: this.root, segments };
  }

  /** Resolves a `/media/...` URL to an existing regular file inside its base folder, or throws 400/404. */
  async resolveUrl(url: string): Promise<ResolvedMedia> {
    const { base, segments, boardId } = this.locate(url);
    const real = await resolveInside(base, segments);
    const stat = real ? await fsp.stat(real).catch(() => undefined) : undefined;
    if (!real || !stat?.isFile()) throw notFound(`No media file at ${url.split('?')[0]}`);
    return { path: real, boardId, relative: segments.join('/'), size: stat.size, mtime: stat.mtime };
  }

  /** The content of the file a `/media/...` URL names (resolveUrl's checks; the file is read without following a link). */
  async readUrl(url: string): Promise<Buffer> {
    const { path: real } = await this.resolveUrl(url);
    const content = await readInside(path.dirname(real), [path.basename(real)]);
    if (content === undefined) throw notFound(`No media file at ${url.split('?')[0]}`);
    return content;
  }

  /**
   * Opens the regular file a `/media/...` URL names, inside its base folder, for reading; throws 400/404. For the
   * serving hot path: the look-ups are synchronous system calls (microseconds on the dentry and inode caches) where
   * each asynchronous one was a round trip through libuv's thread pool, which bounded small range requests. The
   * caller must close `fd`.
   */
  openInside(url: string): Omit<ResolvedMedia, 'size' | 'mtime'> & { fd: number; stat: fs.Stats } {
    const { base, segments, boardId } = this.locate(url);
    const missing = () => notFound(`No media file at ${url.split('?')[0]}`);
    let real: string;
    try {
      real = realpathOfSync(path.join(base, ...segments));
    } catch {
      throw missing();
    }
    if (!isInside(real, base) && !isInside(real, realpathOrUndefined(base))) throw missing();
    const opened = openRegularFile(real);
    if (!opened) throw missing();
    return { ...opened, path: real, boardId, relative: segments.join('/') };
  }

  /** Like resolveUrl, but a missing file is a 400 naming the field (for request bodies that reference media). */
  async resolveField(url: string, field: string): Promise<ResolvedMedia> {
    try {
      return await this.resolveUrl(url);
    } catch (err) {
      if (err instanceof DomainError) err.message = `${field}: ${err.message}`;
      throw err;
    }
  }
}
