import { parentPort, workerData } from 'node:worker_threads';
import { ProjectFormatError } from '../chunks.js';
import { runTask, type WorkerAnswer, type WorkerTask } from './task.js';

/** Decodes one project and writes one composition as Lottie JSON, off the event loop (job.ts starts it). */
const answer = (m: WorkerAnswer) => parentPort!.postMessage(m);
try {
  answer(await runTask(workerData as WorkerTask));
} catch (err) {
  if (err instanceof ProjectFormatError) answer({ formatError: err.message });
  else answer({ error: err instanceof Error ? err.message : String(err) });
}
