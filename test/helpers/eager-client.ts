// A client that writes its whole body before it reads the answer, as node's http.request (and fetch, and most upload
// libraries on top of them) do. Run as its own process (`node --import ./scripts/ts-hooks.mjs
// test/helpers/eager-client.ts <port>` with the requests as JSON on stdin): in the service's own process the answer
// is read in the same turn of the event loop that writes it, before the service closes the socket, and a lost answer
// never shows.
import http from 'node:http';

export interface EagerRequest {
  method: string;
  path: string;
  /** The body's bytes: JSON text (`json`), one file part after a board_id field (`upload`), or bytes (`raw`). */
  body: { kind: 'json' | 'upload' | 'raw'; bytes: number; boardId?: string };
  headers?: Record<string, string>;
  /** `keep-alive`: node's default agent; `close`: no agent, so the request says `Connection: close`. */
  connection: 'keep-alive' | 'close';
}

export interface EagerAnswer {
  status?: number;
  body?: string;
  /** The client's error (EPIPE, ECONNRESET, ...) when the answer was lost. */
  error?: string;
}

const BOUNDARY = 'eager-client-boundary';
const CONTENT_TYPES = {
  json: 'application/json',
  upload: `multipart/form-data; boundary=${BOUNDARY}`,
  raw: 'application/octet-stream',
};

const bodies = new Map<string, Buffer>();

/** JSON text of `bytes` bytes (one string field), or a multipart upload whose file part makes it `bytes` long. */
function bodyOf({ kind, bytes, boardId = 'bd_none' }: EagerRequest['body']): Buffer {
  const key = `${kind} ${bytes} ${boardId}`;
  const known = bodies.get(key);
  if (known) return known;
  let head: string;
  let tail: string;
  if (kind === 'raw') {
    head = '';
    tail = '';
  } else if (kind === 'json') {
    head = '{"name":"';
    tail = '"}';
  } else {
    head =
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="board_id"\r\n\r\n${boardId}\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n';
    tail = `\r\n--${BOUNDARY}--\r\n`;
  }
  const body = Buffer.alloc(bytes, 0x61);
  body.write(head, 0);
  body.write(tail, bytes - tail.length);
  bodies.clear();
  bodies.set(key, body);
  return body;
}

function send(port: number, r: EagerRequest): Promise<EagerAnswer> {
  const body = bodyOf(r.body);
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: r.method,
        path: r.path,
        headers: {
          'content-type': CONTENT_TYPES[r.body.kind],
          'content-length': body.length,
          ...r.headers,
        },
        ...(r.connection === 'close' ? { agent: false } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (err: NodeJS.ErrnoException) => resolve({ status: res.statusCode, error: err.code }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end(body);
  });
}

async function main() {
  const port = Number(process.argv[2]);
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const answers: EagerAnswer[] = [];
  for (const r of JSON.parse(input) as EagerRequest[]) answers.push(await send(port, r));
  process.stdout.write(JSON.stringify(answers));
}

void main();
