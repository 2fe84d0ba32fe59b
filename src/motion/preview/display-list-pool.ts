import fsp from 'node:fs/promises';
import type { Worker } from 'node:worker_threads';
import { Unprocessable } from '../../errors.js';
import { ProjectFormatError } from '../chunks.js';
import { startModuleWorker } from '../inspect.js';
import type { WorkerTask, WrittenTask } from '../lottie/task.js';
import type { InspectedProject } from '../schemas.js';
import { decodeScene } from '../scene/decode.js';
import { sampleFrames, withExpressions, type SampleInput, type Sampled } from './display-lists.js';

/**
 * Projects up to this size with up to this many frames and no expressions are sampled on the event loop (tens of ms
 * at most).
 */
const INLINE_BYTES = 256 * 1024;
const INLINE_FRAMES = 30;
/** Threads at most (the machines this runs on have a few cores; Chromium and ffmpeg need them too). */
const MAX_THREADS = 2;
/** A thread idle this long ends (its memory goes back); the next preview starts one again. */
const IDLE_MS = 60_000;

const WORKER_URL = new URL(`./display-list-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

/**
 * What a thread does: sample a preview's frames into list files, write a Lottie export (lottie/task.ts), or read a
 * big project for inspect (read.ts). The first two decode the project's scene, and the thread keeps the last decoded
 * ones for the next request.
 */
export type ThreadWork =
  | { kind: 'sample'; file: string; input: SampleInput; work: string }
  | { kind: 'export'; task: WorkerTask }
  | { kind: 'inspect'; file: string };
export type ThreadMessage = ThreadWork & { id: number; cancel: SharedArrayBuffer };
/** What a thread answers: progress, then the result or an error (`formatError`: the project is not readable). */
export type ThreadAnswer = { id: number } & (
  | { progress: number }
  | { result: Sampled | WrittenTask | InspectedProject }
  | { error: string; formatError?: boolean }
);
interface Results {
  sample: Sampled;
  export: WrittenTask;
  inspect: InspectedProject;
}

/** One request: its work, and a flag the thread reads (between frames, between layers) to stop when cancelled. */
interface Task {
  id: number;
  message: ThreadMessage;
  resolve(v: unknown): void;
  reject(err: unknown): void;
  progress(fraction: number): void;
}

interface Thread {
  worker: Worker;
  task?: Task;
  idle?: NodeJS.Timeout;
}

/**
 * The motion threads (preview sampling, Lottie exports), shared by every request of the process like libuv's own
 * thread pool: they hold no state of a service or a request (each task brings its files), and starting one costs a
 * module load (seconds under tsx), which a still preview or an export should not pay each time. A thread keeps the
 * process alive only while it has a task: an idle one is unref'd, so a process that is done exits at once rather than
 * at the idle timer (a test process waited those 60 s).
 */
const threads: Thread[] = [];
const queue: Task[] = [];
let nextId = 1;

function spawn(): Thread {
  const thread: Thread = { worker: startModuleWorker(WORKER_URL, undefined) };
  const fail = (err: unknown) => {
    threads.splice(threads.indexOf(thread), 1);
    thread.task?.reject(err);
    thread.task = undefined;
    clearTimeout(thread.idle);
    dispatch();
  };
  thread.worker.on('message', (m: ThreadAnswer) => {
    const task = thread.task;
    if (!task || task.id !== m.id) return;
    if ('progress' in m) return task.progress(m.progress);
    thread.task = undefined;
    if ('result' in m) task.resolve(m.result);
    else task.reject(m.formatError ? new ProjectFormatError(m.error) : new Error(m.error));
    dispatch();
  });
  thread.worker.once('error', fail);
  thread.worker.once('exit', (code) => fail(new Error(`the motion thread exited with code ${code}`)));
  threads.push(thread);
  return thread;
}

function dispatch(): void {
  while (queue.length) {
    const thread = threads.find((t) => !t.task) ?? (threads.length < MAX_THREADS ? spawn() : undefined);
    if (!thread) return;
    const task = queue.shift()!;
    clearTimeout(thread.idle);
    thread.task = task;
    thread.worker.ref();
    thread.worker.postMessage(task.message);
  }
  for (const t of threads)
    if (!t.task) {
      // After the listeners: adding a 'message' listener refs the worker again.
      t.worker.unref();
      clearTimeout(t.idle);
      t.idle = setTimeout(() => void t.worker.terminate(), IDLE_MS).unref();
    }
}

/** Runs `work` on a thread of the pool (queued while every thread is busy); `signal` stops it at its next check. */
export function inThread<K extends ThreadWork['kind']>(
  work: Extract<ThreadWork, { kind: K }>,
  signal: AbortSignal,
  progress: (fraction: number) => void = () => undefined,
): Promise<Results[K]> {
  signal.throwIfAborted();
  const cancel = new SharedArrayBuffer(4);
  const id = nextId++;
  return new Promise<Results[K]>((resolve, reject) => {
    const onAbort = () => {
      // The thread stops at its next check (the flag); this request is answered now.
      Atomics.store(new Int32Array(cancel), 0, 1);
      const queued = queue.findIndex((t) => t.id === id);
      if (queued >= 0) queue.splice(queued, 1);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const settle =
      <T>(fn: (v: T) => void) =>
      (v: T) => {
        signal.removeEventListener('abort', onAbort);
        fn(v);
      };
    queue.push({
      id,
      message: { ...work, id, cancel } as ThreadMessage,
      resolve: settle(resolve as (v: unknown) => void),
      reject: settle(reject),
      progress,
    });
    dispatch();
  });
}

/**
 * Samples a preview's frames into list files in `work` (sample.ts): small work here, big work (decoding a large
 * project, many frames) on a sampling thread that decodes, samples and writes at once (neither the scene model nor
 * the lists cross threads).
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
    // Expressions run in a sandbox whose time limit is per evaluation: never on the event loop.
    const inline = size <= INLINE_BYTES && frames <= INLINE_FRAMES && !input.expressions;
    const bytes = inline ? await fsp.readFile(file, { signal }) : undefined;
    if (bytes)
      return await withExpressions((expressions) =>
        sampleFrames(decodeScene(bytes), input, work, undefined, undefined, expressions),
      );
    return await inThread({ kind: 'sample', file, input, work }, signal, progress);
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
