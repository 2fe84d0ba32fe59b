import path from 'node:path';

const IMAGE = new Set(['png', 'jpg', 'jpeg', 'gif', 'webp', 'avif', 'bmp', 'tif', 'tiff', 'svg', 'heic', 'heif']);
const VIDEO = new Set(['mp4', 'm4v', 'mov', 'webm', 'mkv', 'avi', 'mpg', 'mpeg', 'ogv', 'gifv', 'wmv', 'flv', 'mxf']);
const AUDIO = new Set(['mp3', 'wav', 'ogg', 'oga', 'opus', 'flac', 'aac', 'm4a', 'aif', 'aiff', 'wma']);
const HTML = new Set(['html', 'htm']);

export type FileKind = 'image' | 'video' | 'audio' | 'html' | 'file';

/** The element type a file becomes on a board, from its extension and (when known) its MIME type. */
export function kindOfFile(filename: string, mimeType?: string): FileKind {
  const ext = path.extname(filename).slice(1).toLowerCase();
  if (IMAGE.has(ext)) return 'image';
  if (VIDEO.has(ext)) return 'video';
  if (AUDIO.has(ext)) return 'audio';
  if (HTML.has(ext)) return 'html';
  const major = mimeType?.split('/')[0];
  if (major === 'image' || major === 'video' || major === 'audio') return major;
  if (mimeType === 'text/html') return 'html';
  return 'file';
}

const EXT_BY_MIME: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/avif': 'avif',
  'image/svg+xml': 'svg',
  'video/mp4': 'mp4',
  'video/quicktime': 'mov',
  'video/webm': 'webm',
  'video/x-matroska': 'mkv',
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/ogg': 'ogg',
  'audio/aac': 'aac',
  'audio/mp4': 'm4a',
  'audio/flac': 'flac',
  'text/html': 'html',
};

/** A file extension for a MIME type, when the name a client gave has none. */
export function extensionForMime(mimeType: string | undefined): string | undefined {
  return mimeType ? EXT_BY_MIME[mimeType.split(';')[0].trim().toLowerCase()] : undefined;
}
