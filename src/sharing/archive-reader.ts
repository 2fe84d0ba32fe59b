import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import yauzl from 'yauzl';
import { DomainError, InvalidInput } from '../errors.js';
import { SHARED_PATH } from './schemas.js';

/** Budgets of an imported archive, checked on the central directory before any entry is read. */
export interface ArchiveLimits {
  maxEntries: number;
  /** Largest uncompressed entry. */
  maxEntryBytes: number;
  /** Largest sum of uncompressed entries (declared, and counted while reading). */
  maxTotalBytes: number;
  /** Largest uncompressed : compressed ratio of an entry bigger than ratioFloorBytes. */
  maxRatio: number;
  ratioFloorBytes: number;
}

export const ARCHIVE_LIMITS = { maxEntries: 20_000, maxRatio: 100, ratioFloorBytes: 1024 * 1024 } as const;

const refuse = (message: string) => new InvalidInput(message, undefined, 'bad_archive');

const S_IFMT = 0o170000;
const FILE_TYPES: Record<number, string> = {
  0o120000: 'a symbolic link',
  0o020000: 'a character device',
  0o060000: 'a block device',
  0o010000: 'a FIFO',
  0o140000: 'a socket',
};
const ARCHIVE_EXT = /\.(zip|jar|7z|rar|tar|tgz|gz|bz2|xz|zst|lz|lzma|cab|iso)$/i;
const ARCHIVE_MAGIC = [
  Buffer.from('PK\x03\x04', 'latin1'),
  Buffer.from('7z\xbc\xaf\x27\x1c', 'latin1'),
  Buffer.from('Rar!', 'latin1'),
  Buffer.from([0x1f, 0x8b]),
];
const ALLOWED_DIRS = new Set(['media/', 'cards/']);
const sharedPath = new RegExp(SHARED_PATH);

interface Checked {
  entry: yauzl.Entry;
  name: string;
}

/** The entry's name as the archive spells it (UTF-8 when flagged, else byte by byte), NFC-normalised. */
function entryName(entry: yauzl.Entry): string {
  const raw = entry.fileName as unknown as Buffer;
  return raw.toString(entry.generalPurposeBitFlag & 0x800 ? 'utf8' : 'latin1').normalize('NFC');
}

/** Refuses names that could land outside the staging folder or mean something else on another system. */
function checkName(name: string): void {
  const shown = JSON.stringify(name.slice(0, 120));
  if (name.length === 0 || name.length > 255) throw refuse(`An entry name is empty or longer than 255 characters`);
  if (/[\u0000-\u001f\u007f]/.test(name)) throw refuse(`Entry ${shown} has control characters in its name`);
  if (name.includes('\\')) throw refuse(`Entry ${shown} has a backslash in its name`);
  if (/^[a-zA-Z]:/.test(name)) throw refuse(`Entry ${shown} starts with a drive letter`);
  if (name.startsWith('/')) throw refuse(`Entry ${shown} has an absolute path`);
  const segments = name.replace(/\/$/, '').split('/');
  if (segments.some((s) => s === '..')) throw refuse(`Entry ${shown} climbs out with ".."`);
  if (segments.some((s) => s === '' || s === '.')) throw refuse(`Entry ${shown} has an empty or "." segment`);
}

function checkEntry(entry: yauzl.Entry, name: string, limits: ArchiveLimits): void {
  const shown = JSON.stringify(name.slice(0, 120));
  // Unix mode bits live in the high half of the external attributes when the archive was made on Unix (host 3).
  const fileType = entry.versionMadeBy >> 8 === 3 ? (entry.externalFileAttributes >>> 16) & S_IFMT : 0;
  if (FILE_TYPES[fileType]) throw refuse(`Entry ${shown} is ${FILE_TYPES[fileType]}`);
  if (entry.isEncrypted()) throw refuse(`Entry ${shown} is encrypted`);
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8)
    throw refuse(
      `Entry ${shown} uses compression method ${entry.compressionMethod} (only stored and deflate are read)`,
    );
  if (ARCHIVE_EXT.test(name)) throw refuse(`Entry ${shown} is an archive inside the archive`);
  if (entry.uncompressedSize > limits.maxEntryBytes)
    throw refuse(`Entry ${shown} declares ${entry.uncompressedSize} bytes, over the limit of ${limits.maxEntryBytes}`);
  if (
    entry.uncompressedSize > limits.ratioFloorBytes &&
    entry.uncompressedSize > limits.maxRatio * Math.max(1, entry.compressedSize)
  ) {
    throw refuse(
      `Entry ${shown} expands ${Math.round(entry.uncompressedSize / Math.max(1, entry.compressedSize))} times, over the limit of ${limits.maxRatio}`,
    );
  }
  const isDir = name.endsWith('/');
  if (isDir ? !ALLOWED_DIRS.has(name) : name !== 'index.html' && name !== 'board.json' && !sharedPath.test(name)) {
    throw refuse(
      `Entry ${shown} is not part of a shared board (expected index.html, board.json, media/ and cards/ files)`,
    );
  }
}

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(
      file,
      { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true, strictFileNames: false },
      (err, zip) => (err ? reject(refuse(`Not a readable ZIP archive: ${err.message}`)) : resolve(zip)),
    ),
  );
}

/** Reads the whole central directory (no entry data), checking every entry and the budgets. */
function scan(zip: yauzl.ZipFile, limits: ArchiveLimits): Promise<Checked[]> {
  if (zip.entryCount > limits.maxEntries)
    return Promise.reject(refuse(`The archive has ${zip.entryCount} entries, over the limit of ${limits.maxEntries}`));
  return new Promise((resolve, reject) => {
    const seen = new Set<string>();
    const entries: Checked[] = [];
    let declared = 0;
    zip.on('entry', (entry: yauzl.Entry) => {
      try {
        const name = entryName(entry);
        checkName(name);
        checkEntry(entry, name, limits);
        // Case-folded: on case-insensitive file systems two names would be one file.
        const folded = name.toLowerCase();
        if (seen.has(folded)) throw refuse(`Entry ${JSON.stringify(name)} appears twice`);
        seen.add(folded);
        declared += entry.uncompressedSize;
        if (declared > limits.maxTotalBytes)
          throw refuse(`The archive declares more than ${limits.maxTotalBytes} bytes in total`);
        if (!name.endsWith('/')) entries.push({ entry, name });
        zip.readEntry();
      } catch (err) {
        reject(err);
      }
    });
    zip.on('end', () => resolve(entries));
    zip.on('error', (err: Error) => reject(refuse(`The archive is damaged: ${err.message}`)));
    zip.readEntry();
  });
}

function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<NodeJS.ReadableStream> {
  return new Promise((resolve, reject) =>
    zip.openReadStream(entry, (err, stream) =>
      err ? reject(refuse(`Entry cannot be read: ${err.message}`)) : resolve(stream),
    ),
  );
}

/**
 * Extracts a share archive into `staging` (a fresh, empty folder) after checking every entry: names (no `..`,
 * absolute paths, drive letters, backslashes, control characters; NFC; no duplicates), types (no links, devices,
 * encrypted entries, nested archives), and budgets (entries, per-entry and total size, ratio) from the central
 * directory before anything is read; then, while reading, a running byte counter and each entry's CRC-32.
 * Answers the extracted paths (relative, with `/`).
 */
export async function extractArchive(
  zipFile: string,
  staging: string,
  limits: ArchiveLimits,
  signal?: AbortSignal,
): Promise<Set<string>> {
  const zip = await openZip(zipFile);
  const realStaging = await fsp.realpath(staging);
  try {
    const entries = await scan(zip, limits);
    let total = 0;
    const extracted = new Set<string>();
    for (const { entry, name } of entries) {
      signal?.throwIfAborted();
      const target = path.resolve(realStaging, ...name.split('/'));
      if (!target.startsWith(realStaging + path.sep))
        throw refuse(`Entry ${JSON.stringify(name)} would land outside the staging folder`);
      await fsp.mkdir(path.dirname(target), { recursive: true });
      let crc = 0;
      let size = 0;
      let head = true;
      const meter = new Transform({
        transform(chunk: Buffer, _enc, done) {
          if (head) {
            head = false;
            if (ARCHIVE_MAGIC.some((m) => chunk.subarray(0, m.length).equals(m)))
              return done(refuse(`Entry ${JSON.stringify(name)} is an archive inside the archive`));
          }
          size += chunk.length;
          total += chunk.length;
          if (size > limits.maxEntryBytes || size > entry.uncompressedSize)
            return done(refuse(`Entry ${JSON.stringify(name)} holds more bytes than it declares`));
          if (total > limits.maxTotalBytes)
            return done(refuse(`The archive holds more than ${limits.maxTotalBytes} bytes`));
          crc = zlib.crc32(chunk, crc);
          done(null, chunk);
        },
      });
      try {
        await pipeline(await openEntry(zip, entry), meter, fs.createWriteStream(target, { flags: 'wx' }), { signal });
      } catch (err) {
        if (err instanceof DomainError || signal?.aborted) throw err;
        throw refuse(`Entry ${JSON.stringify(name)} cannot be read: ${(err as Error).message}`);
      }
      if (crc >>> 0 !== entry.crc32 >>> 0) throw refuse(`Entry ${JSON.stringify(name)} fails its CRC-32 check`);
      extracted.add(name);
    }
    return extracted;
  } finally {
    zip.close();
  }
}
