import fsp from 'node:fs/promises';
import { parentPort } from 'node:worker_threads';
import { sampleFrames, type SampleInput } from './sample.js';

/**
 * A sampling thread (sampling.ts): samples one preview at a time off the event loop, posting {id, progress} messages,
 * then {id, sampled} or {id, error}; stops between frames once the request's `cancel` flag is set.
 */
parentPort!.on(
  'message',
  async (m: { id: number; file: string; input: SampleInput; work: string; cancel: SharedArrayBuffer }) => {
    const flag = new Int32Array(m.cancel);
    try {
      const bytes = await fsp.readFile(m.file);
      const sampled = sampleFrames(
        bytes,
        m.input,
        m.work,
        (progress) => parentPort!.postMessage({ id: m.id, progress }),
        () => Atomics.load(flag, 0) === 1,
      );
      parentPort!.postMessage({ id: m.id, sampled });
    } catch (err) {
      parentPort!.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) });
    }
  },
);
