import path from 'node:path';

const WINDOWS_RESERVED = /^(con|prn|aux|nul|conin\$|conout\$|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])$/i;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const MAX_NAME_BYTES = 180;

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
    .replace(/^[.\s]+/, '')
    .replace(/[.\s]+$/, '')
    .replace(/\s+/g, ' ');
  let { name: stem, ext } = path.parse(name);
  // Windows opens a device for `con.tar.gz` or `aux .png` too: the part before the first dot, trimmed, decides.
  if (WINDOWS_RESERVED.test(name.split('.')[0].trim())) stem = `_${stem}`;
  if (!stem) stem = fallback;
  ext = ext.slice(0, 16);
  const chars = Array.from(stem);
  while (chars.length > 1 && Buffer.byteLength(chars.join('') + ext) > MAX_NAME_BYTES) chars.pop();
  return chars.join('') + ext;
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
