import fsp from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { sampleFrames, type SampleInput } from './sample.js';

/** Samples a preview's frames off the event loop: posts {progress} messages, then {sampled} or {error}. */
const { file, input, work } = workerData as { file: string; input: SampleInput; work: string };
try {
  const bytes = await fsp.readFile(file);
  const sampled = sampleFrames(bytes, input, work, (progress) => parentPort!.postMessage({ progress }));
  parentPort!.postMessage({ sampled });
} catch (err) {
  parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) });
}
