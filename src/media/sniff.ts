import type { FileKind } from '../files/media-types.js';

export interface Sniffed {
  kind: Exclude<FileKind, 'file'>;
  ext: string;
  mime: string;
}

/** Bytes of a file's head that `sniff` needs to tell every format it knows. */
export const SNIFF_BYTES = 512;

/** Extensions `sniff` recognises from bytes: a file claiming one of these whose bytes do not match is not that format. */
export const SNIFFABLE = new Set([
  'png',
  'jpg',
  'gif',
  'webp',
  'wav',
  'avi',
  'webm',
  'mkv',
  'avif',
  'heic',
  'mov',
  'm4a',
  'mp4',
  'ogg',
  'flac',
  'mp3',
  'svg',
]);

const ascii = (b: Buffer, at: number, text: string) =>
  b.length >= at + text.length && b.toString('latin1', at, at + text.length) === text;

/** ISO base media files (mp4, mov, avif, heic, m4a) by the major brand of their `ftyp` box. */
function isoBrand(b: Buffer): Sniffed | undefined {
  if (!ascii(b, 4, 'ftyp')) {
    // Old QuickTime files start with another atom.
    return ['moov', 'mdat', 'wide', 'free', 'skip'].some((a) => ascii(b, 4, a))
      ? { kind: 'video', ext: 'mov', mime: 'video/quicktime' }
      : undefined;
  }
  const brand = b.toString('latin1', 8, 12);
  if (brand === 'avif' || brand === 'avis') return { kind: 'image', ext: 'avif', mime: 'image/avif' };
  if (['heic', 'heix', 'mif1', 'msf1', 'hevc'].includes(brand))
    return { kind: 'image', ext: 'heic', mime: 'image/heic' };
  if (brand === 'qt  ') return { kind: 'video', ext: 'mov', mime: 'video/quicktime' };
  if (brand === 'M4A ' || brand === 'M4B ') return { kind: 'audio', ext: 'm4a', mime: 'audio/mp4' };
  return { kind: 'video', ext: 'mp4', mime: 'video/mp4' };
}

/**
 * The media type of a file from its first bytes, or `html` for a web page; undefined when it is none of the formats
 * below. Byte signatures win over the server's Content-Type, which is often generic or wrong.
 */
export function sniff(head: Buffer): Sniffed | 'html' | undefined {
  const b = head;
  if (b.length >= 8 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a)
    return { kind: 'image', ext: 'png', mime: 'image/png' };
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff)
    return { kind: 'image', ext: 'jpg', mime: 'image/jpeg' };
  if (ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a')) return { kind: 'image', ext: 'gif', mime: 'image/gif' };
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP')) return { kind: 'image', ext: 'webp', mime: 'image/webp' };
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WAVE')) return { kind: 'audio', ext: 'wav', mime: 'audio/wav' };
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'AVI ')) return { kind: 'video', ext: 'avi', mime: 'video/x-msvideo' };
  if (b.length >= 4 && b.readUInt32BE(0) === 0x1a45dfa3) {
    return b.subarray(0, 64).includes('webm')
      ? { kind: 'video', ext: 'webm', mime: 'video/webm' }
      : { kind: 'video', ext: 'mkv', mime: 'video/x-matroska' };
  }
  const iso = isoBrand(b);
  if (iso) return iso;
  if (ascii(b, 0, 'OggS')) return { kind: 'audio', ext: 'ogg', mime: 'audio/ogg' };
  if (ascii(b, 0, 'fLaC')) return { kind: 'audio', ext: 'flac', mime: 'audio/flac' };
  if (ascii(b, 0, 'ID3')) return { kind: 'audio', ext: 'mp3', mime: 'audio/mpeg' };
  // An MPEG audio frame sync with a layer set (layer bits 00 would be AAC ADTS).
  if (b.length >= 2 && b[0] === 0xff && (b[1] & 0xe0) === 0xe0 && (b[1] & 0x06) !== 0)
    return { kind: 'audio', ext: 'mp3', mime: 'audio/mpeg' };
  const text = b
    .toString('utf8', 0, Math.min(b.length, SNIFF_BYTES))
    .replace(/^\uFEFF/, '')
    .trimStart()
    .toLowerCase();
  if (/^<(!doctype html|html|head|body|script|iframe|meta|title|!--)/.test(text)) return 'html';
  if (text.startsWith('<svg') || (text.startsWith('<?xml') && text.includes('<svg')))
    return { kind: 'image', ext: 'svg', mime: 'image/svg+xml' };
  return undefined;
}
