import fsp from 'node:fs/promises';
import { startModuleWorker } from '../inspect.js';
import { sampleFrames, type SampleInput, type Sampled } from './sample.js';

/** Projects up to this size with up to this many frames are sampled on the event loop (tens of ms at most). */
const INLINE_BYTES = 256 * 1024;
const INLINE_FRAMES = 30;

const WORKER_URL = new URL(`./sample-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

/**
 * Samples a preview's frames: small work here, big work (decoding a large project, many frames) in a worker thread
 * that decodes and samples at once (the scene model never crosses threads; only the distinct display lists come
 * back), which a cancel terminates.
 */
export async function sample(
  file: string,
  input: SampleInput,
  signal: AbortSignal,
  progress: (fraction: number) => void,
): Promise<Sampled> {
  const { size } = await fsp.stat(file);
  const frames = input.format === 'png' ? 1 : Math.round((input.duration ?? 60) * input.fps);
  if (size <= INLINE_BYTES && frames <= INLINE_FRAMES) return sampleFrames(await fsp.readFile(file, { signal }), input);
  signal.throwIfAborted();
  const worker = startModuleWorker(WORKER_URL, { file, input });
  try {
    return await new Promise<Sampled>((resolve, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      worker.on('message', (m: { progress?: number; sampled?: Sampled; error?: string }) => {
        if (m.progress !== undefined) progress(m.progress);
        else if (m.sampled) resolve(m.sampled);
        else reject(new Error(`preview sampling failed: ${m.error}`));
      });
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`preview sampling exited with code ${code}`)));
    });
  } finally {
    await worker.terminate();
  }
}
