/**
 * Live events benchmark: `npm run bench -- events`.
 * The service runs as its own process (`board-media serve`), so its memory is its own; BENCH_CLIENTS (default 100)
 * clients in this process follow GET /api/events.
 * 1. Latency: BENCH_WRITES (default 300) PATCHes of one element, one after another; for each, the time from sending
 *    the PATCH to the event's arrival at every client (p50, p99, max over all clients and writes), beside the PATCH's
 *    own answer time.
 * 2. A burst: BENCH_BURST (default 2,000) PATCHes sent 16 at a time, until every client has every event.
 * 3. The service's resident memory (VmRSS) at rest, with the clients connected, after the writes (the history full),
 *    and once the clients left.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 100);
const WRITES = Number(process.env.BENCH_WRITES ?? 300);
const BURST = Number(process.env.BENCH_BURST ?? 2000);
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-bench-events-'));
const port = await freePort();
const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src', 'main.ts'), 'serve'], {
  cwd: root,
  env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent', API_TOKEN: '' },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;
const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

const rssMiB = () => {
  const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
};

function request(method: string, url: string, body?: unknown): Promise<any> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      base + url,
      {
        method,
        agent,
        headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {},
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve(text ? JSON.parse(text) : undefined));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

for (let i = 0; ; i++) {
  try {
    await request('GET', '/api/health');
    break;
  } catch {
    if (i > 300) throw new Error('the service did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
}
await new Promise((r) => setTimeout(r, 1000));
const rssAtRest = rssMiB();
const board = (await request('POST', '/api/moodboards', { name: 'Bench' })).id as string;
const element = (await request('POST', `/api/moodboards/${board}/elements`, { type: 'text', name: 'moving' }))
  .id as string;

/** One following client: every element.updated's `x`, with the time it arrived. */
interface Client {
  req: http.ClientRequest;
  arrivals: Map<number, number>;
  onEvent?: () => void;
}
const clients: Client[] = await Promise.all(
  Array.from(
    { length: CLIENTS },
    () =>
      new Promise<Client>((resolve) => {
        const client: Client = { req: undefined as never, arrivals: new Map() };
        client.req = http.get(`${base}/api/events?board_id=${board}&types=element.updated`, (res) => {
          let buffer = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            const at = performance.now();
            buffer += chunk;
            for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
              const block = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              const data = block.split('\n').find((l) => l.startsWith('data: '));
              if (!data) continue;
              client.arrivals.set(JSON.parse(data.slice(6)).data.element.x, at);
              client.onEvent?.();
            }
          });
          resolve(client);
        });
      }),
  ),
);
await new Promise((r) => setTimeout(r, 500));
const rssConnected = rssMiB();

/** Resolves once every client has the event of write `x`. */
const everyone = (x: number) =>
  Promise.all(
    clients.map(
      (c) =>
        new Promise<void>((resolve) => {
          const check = () => {
            if (!c.arrivals.has(x)) return;
            c.onEvent = undefined;
            resolve();
          };
          c.onEvent = check;
          check();
        }),
    ),
  );

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
const latencies: number[] = [];
const answers: number[] = [];
for (let x = 1; x <= WRITES; x++) {
  const arrived = everyone(x);
  const t0 = performance.now();
  await request('PATCH', `/api/moodboards/${board}/elements/${element}`, { x });
  answers.push(performance.now() - t0);
  await arrived;
  for (const c of clients) latencies.push(c.arrivals.get(x)! - t0);
}
latencies.sort((a, b) => a - b);
answers.sort((a, b) => a - b);
const f = (n: number) => n.toFixed(2);
console.log(`service: ${CLIENTS} clients following one board, ${WRITES} PATCHes one after another`);
console.log(
  `  write -> event at each client: p50 ${f(pct(latencies, 50))} ms, p99 ${f(pct(latencies, 99))} ms, max ${f(latencies.at(-1)!)} ms (${latencies.length} deliveries)`,
);
console.log(`  the PATCH's own answer: p50 ${f(pct(answers, 50))} ms, p99 ${f(pct(answers, 99))} ms`);

const first = WRITES + 1;
const last = WRITES + BURST;
const allArrived = everyone(last);
const t0 = performance.now();
let next = first;
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (next <= last) await request('PATCH', `/api/moodboards/${board}/elements/${element}`, { x: next++ });
  }),
);
const written = performance.now() - t0;
await allArrived;
const delivered = performance.now() - t0;
const complete = clients.every((c) =>
  Array.from({ length: BURST }, (_, i) => first + i).every((x) => c.arrivals.has(x)),
);
console.log(
  `  burst of ${BURST} PATCHes (16 at a time): written in ${f(written)} ms, every event at every client after ${f(delivered)} ms (${Math.round((BURST * CLIENTS) / (delivered / 1000))} deliveries/s), none missing: ${complete}`,
);
const rssAfter = rssMiB();
for (const c of clients) c.req.destroy();
await new Promise((r) => setTimeout(r, 1000));
const rssLeft = rssMiB();
console.log(
  `  service RSS: ${f(rssAtRest)} MiB at rest, ${f(rssConnected)} MiB with ${CLIENTS} clients (+${f(rssConnected - rssAtRest)}), ${f(rssAfter)} MiB after ${WRITES + BURST} events (history full), ${f(rssLeft)} MiB once the clients left`,
);

child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
agent.destroy();
await fsp.rm(dataDir, { recursive: true, force: true });
