import type { AppContext } from '../context.js';
import sharp, { type Metadata, type Sharp } from 'sharp';
import { badRequest } from '../http/errors.js';
import { loadSource, produceElement, type NewMediaResult } from './new-element.js';

import type { ConvertImageRequest } from './schemas.js';
export const IMAGE_FORMATS = ['png', 'jpg', 'webp', 'avif'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

function encode(pipeline: Sharp, format: ImageFormat): Sharp {
  switch (format) {
    case 'png':
      return pipeline.png();
    // JPEG has no alpha: transparent areas become white rather than black.
    case 'jpg':
      return pipeline.flatten({ background: '#ffffff' }).jpeg({ quality: 90, mozjpeg: true });
    case 'webp':
      return pipeline.webp({ quality: 85 });
    case 'avif':
      return pipeline.avif({ quality: 60, effort: 4 });
  }
}

/**
 * Converts an image element with sharp (libvips streams it in tiles; nothing is decoded whole in JS). EXIF orientation
 * is applied first, so the output is upright without relying on metadata. One of width/height keeps the aspect ratio,
 * both fit the image inside that box; upscaling is allowed because the client asked for the size.
 */
export async function convertImage(ctx: AppContext, req: ConvertImageRequest): Promise<NewMediaResult> {
  const src = await loadSource(ctx, req.board_id, req.element_id);
  let meta: Metadata;
  try {
    meta = await sharp(src.path, { failOn: 'error' }).metadata();
  } catch {
    throw badRequest(`Element ${req.element_id} is not an image sharp can read`);
  }
  if (!meta.width || !meta.height) throw badRequest(`Element ${req.element_id} is not an image`);
  const width = req.width ?? undefined;
  const height = req.height ?? undefined;
  let pipeline = sharp(src.path, { failOn: 'error' }).rotate();
  if (width || height) pipeline = pipeline.resize({ width, height, fit: 'inside' });
  const resized = width || height ? ` (${width ?? ''}x${height ?? ''})` : '';
  return produceElement(ctx, req.board_id, `${src.stem}${resized}.${req.format}`, async (temp) => {
    await encode(pipeline, req.format).toFile(temp);
  });
}
