import path from 'node:path';
import { isWindowsDevice } from './path-rules.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const MAX_NAME_BYTES = 180;
const TRAILING = /[.\s]/;

/**
 * Turns a client-supplied name into a safe single path segment: no separators, no control characters, no leading
 * dots (hidden files and `..`), no Windows device names, no `%` (ffmpeg reads it as an image-sequence pattern), at most
 * 180 bytes of well-formed UTF-8 (cut between characters, never inside one).
 */
export function sanitizeFilename(input: string, fallback = 'file'): string {
  let name = path.basename(input.replace(/\\/g, '/'));
  name = name
    .normalize('NFC')
    .replace(LONE_SURROGATE, '_')
    .replace(/[\u0000-\u001f\u007f-\u009f<>:"|?*/\\%]/g, '_')
    .replace(/^[.\s]+/, '');
  name = withoutTrailingDotsAndSpaces(name).replace(/\s+/g, ' ');
  let { name: stem, ext } = path.parse(name);
  if (isWindowsDevice(name)) stem = `_${stem}`;
  if (!stem) stem = fallback;
  ext = ext.slice(0, 16);
  return cutToBytes(stem, MAX_NAME_BYTES - Buffer.byteLength(ext)) + ext;
}

/** `/[.\s]+$/` would retry from every dot or space of a long run that is not at the end: quadratic. */
function withoutTrailingDotsAndSpaces(name: string): string {
  let end = name.length;
  while (end > 0 && TRAILING.test(name[end - 1])) end--;
  return name.slice(0, end);
}

/** The longest prefix of whole characters within `budget` UTF-8 bytes (at least one character): one pass. */
function cutToBytes(stem: string, budget: number): string {
  let kept = '';
  let bytes = 0;
  for (const char of stem) {
    bytes += Buffer.byteLength(char);
    if (bytes > budget && kept) break;
    kept += char;
  }
  return kept;
}

/** A readable filename stem from a title: `My Card!` -> `My Card`. */
export function filenameFromTitle(title: string | undefined, fallback: string, ext: string): string {
  const base = sanitizeFilename((title ?? '').trim() || fallback, fallback);
  return `${base.replace(/\.[a-z0-9]{1,5}$/i, '')}.${ext}`;
}

/** `name.ext` -> `name (n).ext`, the candidate used when `name.ext` exists. */
export function numberedName(filename: string, n: number): string {
  const { name, ext } = path.parse(filename);
  return `${name} (${n})${ext}`;
}

/** Replaces the extension of a filename. */
export function withExtension(filename: string, ext: string): string {
  const { name } = path.parse(filename);
  return `${name}.${ext.replace(/^\./, '')}`;
}
