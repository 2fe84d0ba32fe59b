import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import { BoardOutputs } from '../boards/outputs.js';
import type { App, AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { tempPathIn } from '../files/atomic.js';
import { extensionForMime, kindOfFile } from '../files/media-types.js';
import { sanitizeFilename } from '../files/names.js';
import { ApiError, badRequest } from '../http/errors.js';
import { ErrorBody, errorResponses } from '../http/schemas.js';
import { parseJson } from '../http/json-body.js';
import { UploadResponse } from './schemas.js';

/** What the multipart parser (busboy) says about a body that is cut off or has no boundary. */
const MALFORMED_MULTIPART =
  /unexpected end of (form|multipart data)|boundary not found|malformed (part )?header|multipart: /i;

/** No file system names a file longer than 255 characters; longer names are refused before the file is read. */
const MAX_FILENAME_LENGTH = 1024;

function parseDataField(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = parseJson(value, 'data');
  } catch (err) {
    if (err instanceof DomainError && err.code !== 'malformed_json') throw err;
    throw badRequest('data must be a JSON object');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw badRequest('data must be a JSON object');
  return parsed as Record<string, unknown>;
}

/**
 * POST /api/upload: the file part is streamed to DATA_DIR/tmp (constant memory, fields may come in any order),
 * then moved into the board folder under a unique sanitised name. Over MAX_UPLOAD_BYTES the upload is 413 and the
 * partial file is removed.
 */
export async function registerUploads(app: App, ctx: AppContext): Promise<void> {
  const outputs = new BoardOutputs(ctx.media, ctx.boards);
  const tmpDir = path.join(ctx.config.dataDir, 'tmp');
  await fsp.mkdir(tmpDir, { recursive: true });
  await app.register(multipart, {
    limits: { fileSize: ctx.config.maxUploadBytes, files: 1, fields: 16, fieldSize: 1024 * 1024, parts: 20 },
  });

  app.post(
    '/api/upload',
    {
      schema: {
        tags: ['media'],
        summary: 'Upload a file to a board',
        description:
          'multipart/form-data with `board_id` and `file`; optional `add_to_board=true` also adds it as an element ' +
          '(returned as `element`) and optional `data` (a JSON object) is stored in that element. A filename longer ' +
          `than ${MAX_FILENAME_LENGTH} characters is a 400.`,
        consumes: ['multipart/form-data'],
        response: { 200: UploadResponse, ...errorResponses, 413: ErrorBody },
      },
    },
    async (req) => {
      if (!req.isMultipart())
        throw new ApiError(415, 'unsupported_media_type', 'Send the upload as multipart/form-data');
      const fields: Record<string, string> = {};
      let upload: { temp: string; filename: string; mimetype: string; out: fs.WriteStream } | undefined;
      try {
        for await (const part of req.parts()) {
          if (part.type === 'file') {
            if (part.fieldname !== 'file') {
              part.file.resume();
              throw badRequest(`unexpected file field "${part.fieldname}"; the file goes in "file"`);
            }
            // A part sent with `filename=""` comes with no filename at all, whatever the types say.
            const name = (part.filename as string | undefined) ?? '';
            if (name.length > MAX_FILENAME_LENGTH) {
              part.file.resume();
              throw badRequest(`file's filename is longer than ${MAX_FILENAME_LENGTH} characters`, [
                { field: 'file.filename', message: `must be at most ${MAX_FILENAME_LENGTH} characters` },
              ]);
            }
            const temp = tempPathIn(tmpDir, 'upload');
            upload = {
              temp,
              filename: name,
              mimetype: part.mimetype,
              out: fs.createWriteStream(temp, { flags: 'wx' }),
            };
            await pipeline(part.file, upload.out);
          } else {
            fields[part.fieldname] = String(part.value);
          }
        }
        const boardId = fields.board_id;
        if (!boardId) throw badRequest('board_id is required');
        if (!upload) throw badRequest('file is required');
        const board = ctx.boards.requireBoard(boardId);
        const data = fields.data !== undefined ? parseDataField(fields.data) : undefined;
        ctx.boards.checkClientData(data);
        let filename = sanitizeFilename(upload.filename || 'upload');
        if (!path.extname(filename)) {
          const ext = extensionForMime(upload.mimetype);
          if (ext) filename += `.${ext}`;
        }
        const out = await outputs.adopt(board.id, upload.temp, filename);
        // Nothing is kept from a request that failed: a file whose element could not be added is removed again.
        if (fields.add_to_board === 'true' || fields.add_to_board === '1')
          return await outputs.commit(out, { type: kindOfFile(filename, upload.mimetype), data });
        return await outputs.file(out);
      } catch (err) {
        if (upload) {
          // A stream destroyed while still opening creates its file afterwards: remove it only once it is closed.
          const out = upload.out;
          if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
          await fsp.rm(upload.temp, { force: true });
        }
        const code = (err as { code?: string }).code;
        if (code === 'FST_REQ_FILE_TOO_LARGE') {
          throw new ApiError(
            413,
            'payload_too_large',
            `The file is larger than the upload limit of ${ctx.config.maxUploadBytes} bytes`,
          );
        }
        if (code && code.startsWith('FST_') && (err as { statusCode?: number }).statusCode === 413) {
          throw new ApiError(413, 'payload_too_large', (err as Error).message);
        }
        if (err instanceof Error && MALFORMED_MULTIPART.test(err.message)) {
          throw new ApiError(400, 'malformed_multipart', `The multipart body is malformed: ${err.message}`);
        }
        throw err;
      }
    },
  );
}
