import fsp from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { ProjectFormatError } from './chunks.js';
import { parseProject } from './read.js';

/** Parses one big project file off the event loop; answers {project} or {formatError} or {error}. */
const file = (workerData as { file: string }).file;
try {
  parentPort!.postMessage({ project: parseProject(await fsp.readFile(file)) });
} catch (err) {
  if (err instanceof ProjectFormatError) parentPort!.postMessage({ formatError: err.message });
  else parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) });
}
