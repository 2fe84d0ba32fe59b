import crypto from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Short random URL-safe id, prefixed by kind (`el_k3j9...`). 12 base-36 chars is about 62 bits. */
export function newId(prefix: string, length = 12): string {
  const bytes = crypto.randomBytes(length);
  let out = '';
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return `${prefix}${out}`;
}

export const nowIso = (): string => new Date().toISOString();
