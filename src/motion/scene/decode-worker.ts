import fsp from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { ProjectFormatError } from '../chunks.js';
import { decodeScene } from './decode.js';

/** Decodes one project file into the scene model off the event loop; answers {scene} or {formatError} or {error}. */
const file = (workerData as { file: string }).file;
try {
  parentPort!.postMessage({ scene: decodeScene(await fsp.readFile(file)) });
} catch (err) {
  if (err instanceof ProjectFormatError) parentPort!.postMessage({ formatError: err.message });
  else parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) });
}
