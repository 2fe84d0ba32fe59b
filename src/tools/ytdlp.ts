import fsp from 'node:fs/promises';
import path from 'node:path';
import { runProcess } from './ffmpeg.js';
import type { Tools } from './locate.js';

export interface YtdlpOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Per-file size limit; larger media is skipped by yt-dlp itself. */
  maxBytes?: number;
  /** The proxy every connection goes through (the address policy's loopback proxy, src/net/proxy.ts). */
  proxy?: string;
}

/**
 * Lets yt-dlp extract the media of a web page (a post with several images/videos gives several files) into `outDir`,
 * which must be empty. Returns the files it wrote, in the post's order. Killed on abort or after the time limit.
 */
export async function ytdlpDownload(
  tools: Tools,
  url: string,
  outDir: string,
  opts: YtdlpOptions = {},
): Promise<string[]> {
  const ytdlp = await tools.require('ytdlp');
  const ffmpeg = await tools.info('ffmpeg');
  const args = [
    '--no-progress',
    '--no-warnings',
    '--no-mtime',
    '--restrict-filenames',
    '--no-part',
    '-P',
    outDir,
    '-o',
    '%(autonumber)03d-%(title).60s.%(ext)s',
  ];
  if (opts.maxBytes) args.push('--max-filesize', String(opts.maxBytes));
  if (ffmpeg.path) args.push('--ffmpeg-location', ffmpeg.path);
  if (opts.proxy) args.push('--proxy', opts.proxy);
  args.push('--', url);
  // yt-dlp hands its proxy to the ffmpeg it runs through http_proxy; a no_proxy inherited from the service would let
  // ffmpeg go around it.
  const env = opts.proxy ? { ...process.env, no_proxy: '', NO_PROXY: '' } : undefined;
  await runProcess(ytdlp.path, args, { signal: opts.signal, timeoutMs: opts.timeoutMs, env }, 'yt-dlp');
  const names = (await fsp.readdir(outDir)).filter((n) => !n.endsWith('.part') && !n.endsWith('.ytdl')).sort();
  return names.map((n) => path.join(outDir, n));
}
