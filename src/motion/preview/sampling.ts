import fsp from 'node:fs/promises';
import { Unprocessable } from '../../errors.js';
import { startModuleWorker } from '../inspect.js';
import { sampleFrames, type SampleInput, type Sampled } from './sample.js';

/** Projects up to this size with up to this many frames are sampled on the event loop (tens of ms at most). */
const INLINE_BYTES = 256 * 1024;
const INLINE_FRAMES = 30;

const WORKER_URL = new URL(`./sample-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

/**
 * Samples a preview's frames into list files in `work` (sample.ts): small work here, big work (decoding a large
 * project, many frames) in a worker thread that decodes, samples and writes at once (neither the scene model nor the
 * lists cross threads), which a cancel terminates.
 */
export async function sample(
  file: string,
  input: SampleInput,
  work: string,
  signal: AbortSignal,
  progress: (fraction: number) => void,
): Promise<Sampled> {
  const { size } = await fsp.stat(file);
  const frames = input.format === 'png' ? 1 : Math.round((input.duration ?? 60) * input.fps);
  try {
    if (size <= INLINE_BYTES && frames <= INLINE_FRAMES)
      return sampleFrames(await fsp.readFile(file, { signal }), input, work);
    return await inWorker(file, input, work, signal, progress);
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    // The project was read by the checks before; a sampler that fails on it is ours to fix, and the answer says so
    // without a 500.
    throw new Unprocessable(
      'preview_failed',
      `The composition could not be sampled: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

async function inWorker(
  file: string,
  input: SampleInput,
  work: string,
  signal: AbortSignal,
  progress: (fraction: number) => void,
): Promise<Sampled> {
  signal.throwIfAborted();
  const worker = startModuleWorker(WORKER_URL, { file, input, work });
  try {
    return await new Promise<Sampled>((resolve, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      worker.on('message', (m: { progress?: number; sampled?: Sampled; error?: string }) => {
        if (m.progress !== undefined) progress(m.progress);
        else if (m.sampled) resolve(m.sampled);
        else reject(new Error(m.error));
      });
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the sampling thread exited with code ${code}`)));
    });
  } finally {
    await worker.terminate();
  }
}
