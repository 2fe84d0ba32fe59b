import fsp from 'node:fs/promises';
import path from 'node:path';
import { badRequest } from '../http/errors.js';
import { runFfmpeg } from '../tools/ffmpeg.js';
import { probe } from '../tools/ffprobe.js';
import { aiSdk } from './ai-sdk.js';
import { CATALOGUE, type CatalogueEntry } from './catalogue.js';
import type { GenerationContext } from './context.js';
import { mapProviderError } from './errors.js';
import { PROVIDER_ENV, type ProviderSettings } from './providers.js';
import type { TranscribeBody } from './schemas.js';
import { transcriptionModel } from './sdk.js';
import { InvalidInput } from '../errors.js';

/** Mono 16 kHz MP3 at 32 kbit/s: speech stays clear, and 25 MB holds about 100 minutes. */
const COMPACT_AUDIO = ['-vn', '-map', '0:a:0', '-ac', '1', '-ar', '16000', '-c:a', 'libmp3lame', '-b:a', '32k'];
/** Silence that may separate pieces: quieter than -35 dB for at least 0.4 s. */
const SILENCE_FILTER = 'silencedetect=noise=-35dB:d=0.4';
/** Pieces are planned this much under the limit: the byte rate is an average, a piece can run a little above it. */
const PIECE_MARGIN = 0.9;

export interface Segment {
  start: number;
  end: number;
  text: string;
}

export interface TranscribeAnswer {
  text: string;
  language: string | null;
  segments?: Segment[];
  pieces: number;
}

/** The first configured speech model, or 400 naming the keys that would enable one. */
function speechModel(g: GenerationContext): { entry: CatalogueEntry; settings: ProviderSettings } {
  const entries = CATALOGUE.filter((e) => e.kind === 'transcription');
  for (const entry of entries) {
    const settings = g.providers.settings(entry.provider);
    if (settings) return { entry, settings };
  }
  const keys = [...new Set(entries.map((e) => PROVIDER_ENV[e.provider].key))];
  throw new InvalidInput(
    `Transcription needs a speech provider: set ${keys.join(' or ')} (or PUT /api/ai/providers/openai with an api_key)`,
    { env: keys },
    'provider_not_configured',
  );
}

/**
 * Where to cut `duration` seconds into pieces of at most `maxSeconds`: at the middle of the last silence in the
 * second half of each stretch, or hard at the limit when a stretch has no silence.
 */
function planPieces(
  duration: number,
  maxSeconds: number,
  silences: { start: number; end: number }[],
): [number, number][] {
  const pieces: [number, number][] = [];
  let start = 0;
  while (duration - start > maxSeconds) {
    const limit = start + maxSeconds;
    const mids = silences.map((s) => (s.start + s.end) / 2).filter((m) => m > start + maxSeconds / 2 && m <= limit);
    const cut = mids.length ? mids[mids.length - 1] : limit;
    pieces.push([start, cut]);
    start = cut;
  }
  pieces.push([start, duration]);
  return pieces;
}

/** A path as an option value inside a filter graph: escaped for the option parser, then again for the graph parser. */
const filterValue = (v: string) => v.replace(/[\\':]/g, '\\$&').replace(/[\\'[\],;]/g, '\\$&');

/** Silences as ffmpeg's silencedetect reports them, read from the frame metadata it writes to `file`. */
function parseSilences(text: string, duration: number): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  let open: number | undefined;
  for (const line of text.split('\n')) {
    const m = /^lavfi\.silence_(start|end)=(-?[\d.]+)/.exec(line.trim());
    if (!m) continue;
    const t = Math.max(0, Number(m[2]));
    if (m[1] === 'start') open = t;
    else if (open !== undefined) {
      out.push({ start: open, end: t });
      open = undefined;
    }
  }
  if (open !== undefined) out.push({ start: open, end: duration });
  return out;
}

/**
 * POST /api/ai/transcribe: the element's audio, extracted by ffmpeg to compact mono MP3; past the provider's upload
 * limit it is cut on silences into pieces sent one after another, and the texts joined in order (segment times
 * shifted by each piece's start). The transcript is kept on the element as `data.transcript`.
 */
export async function transcribe(
  g: GenerationContext,
  body: TranscribeBody,
  signal: AbortSignal,
): Promise<TranscribeAnswer> {
  const { element, path: source } = await g.boards.elementFile(body.board_id, body.element_id);
  if (element.type !== 'audio' && element.type !== 'video')
    throw badRequest(`Element ${element.id} is ${element.type}, not audio or video`, [
      { field: 'body.element_id', message: 'must be an audio or video element' },
    ]);
  const { entry, settings } = speechModel(g);
  const info = await probe(g.tools, source);
  if (!info.audio)
    throw badRequest(`Element ${element.id} has no audio track`, [
      { field: 'body.element_id', message: 'has no audio' },
    ]);

  const tmpRoot = path.join(g.config.dataDir, 'tmp');
  await fsp.mkdir(tmpRoot, { recursive: true });
  const work = await fsp.mkdtemp(path.join(tmpRoot, 'transcribe-'));
  try {
    const audio = path.join(work, 'audio.mp3');
    await runFfmpeg(g.tools, ['-i', source, ...COMPACT_AUDIO, audio], { signal, durationSeconds: info.duration });
    const size = (await fsp.stat(audio)).size;
    const duration = (await probe(g.tools, audio)).duration ?? info.duration ?? 0;
    const limit = g.config.ai.transcribeMaxBytes;
    let files = [audio];
    let starts = [0];
    if (size > limit && duration > 0) {
      const metadata = path.join(work, 'silences.txt');
      // ametadata writes silencedetect's findings to a file: ffmpeg's stderr is not ours to parse.
      await runFfmpeg(
        g.tools,
        ['-i', audio, '-af', `${SILENCE_FILTER},ametadata=mode=print:file=${filterValue(metadata)}`, '-f', 'null', '-'],
        { signal, durationSeconds: duration },
      );
      const silences = parseSilences(await fsp.readFile(metadata, 'utf8').catch(() => ''), duration);
      const plan = planPieces(duration, (limit / (size / duration)) * PIECE_MARGIN, silences);
      files = [];
      starts = [];
      for (const [i, [from, to]] of plan.entries()) {
        const piece = path.join(work, `piece-${i}.mp3`);
        await runFfmpeg(g.tools, ['-ss', String(from), '-t', String(to - from), '-i', audio, '-c', 'copy', piece], {
          signal,
        });
        files.push(piece);
        starts.push(from);
      }
    }
    const { experimental_transcribe: transcribeAudio } = await aiSdk();
    const texts: string[] = [];
    const segments: Segment[] = [];
    let detected: string | undefined;
    for (const [i, file] of files.entries()) {
      const timeout = AbortSignal.timeout(g.config.ai.requestTimeoutMs);
      let result;
      try {
        result = await transcribeAudio({
          model: await transcriptionModel(settings, entry),
          audio: new Uint8Array(await fsp.readFile(file)),
          providerOptions: {
            openai: { timestampGranularities: ['segment'], ...(body.language ? { language: body.language } : {}) },
          },
          maxRetries: g.config.ai.maxRetries,
          abortSignal: AbortSignal.any([signal, timeout]),
        });
      } catch (err) {
        throw mapProviderError(err, entry.provider, timeout);
      }
      if (result.warnings.length)
        g.log.warn({ model: entry.id, warnings: result.warnings }, 'the AI SDK warned about this transcription');
      texts.push(result.text.trim());
      detected ??= result.language;
      for (const s of result.segments)
        segments.push({ start: starts[i] + s.startSecond, end: starts[i] + s.endSecond, text: s.text });
    }
    const answer: TranscribeAnswer = {
      text: texts.filter(Boolean).join(' '),
      language: body.language ?? detected ?? null,
      ...(segments.length ? { segments } : {}),
      pieces: files.length,
    };
    g.boards.mutateElementData(element.id, (data) => ({
      ...data,
      transcript: {
        text: answer.text,
        language: answer.language,
        model: entry.id,
        ...(answer.segments ? { segments: answer.segments } : {}),
        created_at: new Date().toISOString(),
      },
    }));
    return answer;
  } finally {
    await fsp.rm(work, { recursive: true, force: true });
  }
}
