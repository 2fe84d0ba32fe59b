import type { AppContext } from '../context.js';
import { badRequest } from '../http/errors.js';
import { runFfmpeg } from '../tools/ffmpeg.js';
import { loadSource, produceElement, type NewMediaResult } from './new-element.js';

/** The element's first audio stream as an MP3 (VBR quality 2, about 190 kbit/s) beside it on the board. */
export async function extractAudio(
  ctx: AppContext,
  boardId: string,
  elementId: string,
  signal?: AbortSignal,
): Promise<NewMediaResult> {
  const src = await loadSource(ctx, boardId, elementId);
  const info = await ctx.probes.probe(src.path);
  if (!info.audio) throw badRequest(`Element ${elementId} has no audio stream`);
  return produceElement(ctx, boardId, `${src.stem}.mp3`, (temp) =>
    runFfmpeg(ctx.tools, ['-i', src.path, '-map', '0:a:0', '-vn', '-c:a', 'libmp3lame', '-q:a', '2', temp], {
      signal,
      durationSeconds: info.duration,
    }),
  );
}
