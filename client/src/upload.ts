import { BoardMediaError } from './errors.js';
import type { Connection } from './connection.js';
import type { Element, UploadResult } from './types.js';

export interface UploadProgress {
  /** Bytes of the request body sent so far (the file and the few form fields around it). */
  loaded: number;
  /** The whole body's bytes. */
  total: number;
}

export interface UploadOptions {
  boardId: string;
  /** A browser `File`, or any `Blob` (in Node: `await fs.openAsBlob(path)`, which reads the file as it is sent). */
  file: Blob;
  /** The file name on the board; a `File`'s own name by default. */
  filename?: string | undefined;
  /** Also add the file to the board as an element (answered as `element`). */
  addToBoard?: boolean | undefined;
  /** Stored in the new element's `data` (with `addToBoard`). */
  data?: Record<string, unknown> | undefined;
  onProgress?: ((progress: UploadProgress) => void) | undefined;
  signal?: AbortSignal | undefined;
  /**
   * `xhr` where XMLHttpRequest exists (browsers, Electron, Tauri): the only browser API that reports upload progress
   * over HTTP/1.1. Elsewhere `fetch` with a streamed body (Node), counting the bytes as fetch takes them.
   */
  transport?: 'xhr' | 'fetch' | undefined;
}

/** `upload`, whose answer has its `element` when `addToBoard` is `true`. */
export interface UploadedToBoard {
  (opts: UploadOptions & { addToBoard: true }): Promise<UploadResult & { element: Element }>;
  (opts: UploadOptions): Promise<UploadResult>;
}

/** POST /api/upload with progress; the answer, or a BoardMediaError with the service's error. */
export async function upload(conn: Connection, opts: UploadOptions): Promise<UploadResult> {
  const filename = opts.filename ?? (opts.file as Partial<File>).name;
  if (!filename) throw new TypeError('upload: a Blob needs a filename');
  const fields: [string, string][] = [['board_id', opts.boardId]];
  if (opts.addToBoard) fields.push(['add_to_board', 'true']);
  if (opts.data !== undefined) fields.push(['data', JSON.stringify(opts.data)]);
  const transport = opts.transport ?? (typeof XMLHttpRequest === 'function' ? 'xhr' : 'fetch');
  return transport === 'xhr' ? uploadXhr(conn, opts, filename, fields) : uploadFetch(conn, opts, filename, fields);
}

function uploadXhr(
  conn: Connection,
  opts: UploadOptions,
  filename: string,
  fields: [string, string][],
): Promise<UploadResult> {
  return new Promise((resolve, reject) => {
    const form = new FormData();
    for (const [name, value] of fields) form.append(name, value);
    form.append('file', opts.file, filename);
    const xhr = new XMLHttpRequest();
    xhr.open('POST', conn.url('/api/upload'));
    for (const [name, value] of Object.entries(conn.headers())) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (e) => opts.onProgress?.({ loaded: e.loaded, total: e.total });
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve(JSON.parse(xhr.responseText) as UploadResult);
      else reject(BoardMediaError.fromBody(xhr.status, xhr.responseText, xhr.statusText));
    };
    xhr.onerror = () => reject(new BoardMediaError(0, 'network_error', 'The upload could not reach the service'));
    const abort = () => xhr.abort();
    xhr.onabort = () => reject(opts.signal?.reason ?? new DOMException('The upload was aborted', 'AbortError'));
    xhr.onloadend = () => opts.signal?.removeEventListener('abort', abort);
    if (opts.signal?.aborted) return reject(opts.signal.reason);
    opts.signal?.addEventListener('abort', abort, { once: true });
    xhr.send(form);
  });
}

/** A quoted multipart parameter as browsers write it (HTML's form encoding): `"`, CR and LF percent-encoded. */
const quoted = (value: string) =>
  `"${value.replace(/["\r\n]/g, (c) => ({ '"': '%22', '\r': '%0D', '\n': '%0A' })[c] as string)}"`;

async function uploadFetch(
  conn: Connection,
  opts: UploadOptions,
  filename: string,
  fields: [string, string][],
): Promise<UploadResult> {
  const encoder = new TextEncoder();
  const boundary = `----board-media-${crypto.randomUUID()}`;
  const head = encoder.encode(
    fields
      .map(
        ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(name)}\r\n\r\n${value}\r\n`,
      )
      .join('') +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename=${quoted(filename)}\r\n` +
      `Content-Type: ${opts.file.type || 'application/octet-stream'}\r\n\r\n`,
  );
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
  const total = head.length + opts.file.size + tail.length;
  let loaded = 0;
  let file: ReadableStreamDefaultReader<Uint8Array> | undefined;
  // Pulled by fetch as the connection takes bytes, so `loaded` runs at most a socket buffer ahead of the wire.
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(head);
      loaded += head.length;
    },
    async pull(controller) {
      file ??= opts.file.stream().getReader();
      const { value, done } = await file.read();
      if (done) {
        controller.enqueue(tail);
        loaded += tail.length;
        controller.close();
      } else {
        controller.enqueue(value);
        loaded += value.length;
      }
      opts.onProgress?.({ loaded, total });
    },
    cancel: (reason) => file?.cancel(reason),
  });
  const res = await conn.fetch(conn.url('/api/upload'), {
    method: 'POST',
    headers: {
      ...conn.headers(),
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(total),
    },
    body,
    // Node's fetch streams a ReadableStream body only in half-duplex mode (the answer is read after the body is sent).
    duplex: 'half',
    signal: opts.signal ?? null,
  } as RequestInit);
  if (!res.ok) throw await BoardMediaError.fromResponse(res);
  return (await res.json()) as UploadResult;
}
