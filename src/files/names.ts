import path from 'node:path';

const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i;

/**
 * Turns a client-supplied name into a safe single path segment: no separators, no control characters,
 * no leading dots (hidden files and `..`), no Windows-reserved names, at most 180 bytes.
 */
export function sanitizeFilename(input: string, fallback = 'file'): string {
  let name = path.basename(input.replace(/\\/g, '/'));
  name = name
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f<>:"|?*/\\]/g, '_')
    .replace(/^[.\s]+/, '')
    .replace(/[.\s]+$/, '')
    .replace(/\s+/g, ' ');
  let { name: stem, ext } = path.parse(name);
  if (WINDOWS_RESERVED.test(stem)) stem = `_${stem}`;
  if (!stem) stem = fallback;
  ext = ext.slice(0, 16);
  while (Buffer.byteLength(stem + ext) > 180) stem = stem.slice(0, -1);
  return stem + ext;
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
