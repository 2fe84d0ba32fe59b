import { ProjectFormatError } from '../chunks.js';
import { startModuleWorker } from '../inspect.js';
import type { SceneProject } from './model.js';

const WORKER_URL = new URL(`./decode-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

/**
 * The scene model of a project file, decoded in a worker thread so a large project never holds the event loop (a
 * corpus project of 1.7 MB takes about 150 ms). The model is plain data: it crosses to this thread by structured
 * clone. An unreadable file rejects with ProjectFormatError; `signal` ends the worker.
 */
export function decodeSceneFile(file: string, signal?: AbortSignal): Promise<SceneProject> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const worker = startModuleWorker(WORKER_URL, { file });
    const onAbort = () => {
      void worker.terminate();
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const done = () => signal?.removeEventListener('abort', onAbort);
    worker.once('message', (m: { scene?: SceneProject; formatError?: string; error?: string }) => {
      done();
      if (m.scene) resolve(m.scene);
      else if (m.formatError !== undefined) reject(new ProjectFormatError(m.formatError));
      else reject(new Error(`scene decoder failed: ${m.error}`));
      void worker.terminate();
    });
    worker.once('error', (err) => {
      done();
      reject(err);
    });
    worker.once('exit', (code) => {
      done();
      reject(new Error(`scene decoder exited with code ${code}`));
    });
  });
}
