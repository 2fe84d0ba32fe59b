/**
 * Terminal bridge benchmark: run with `npx tsx bench/bridge.bench.ts`.
 * 1. Latency from sending POST to-messenger to the waiting GET to-messenger's answer (median, p99), over loopback.
 * 2. 1,000 concurrent long polls (one per bot): memory before, while all wait, and after they are answered, for a
 *    few rounds, plus how long it takes to wake all of them.
 * 3. Polls (wait=0) and status reads for many distinct bot ids that hold no state: heap before and after, and how
 *    many bots the bridge holds in memory (it should hold none of them).
 * The service runs in this process (clients too), so memory figures cover both ends. BENCH_ITERATIONS,
 * BENCH_POLLS and BENCH_IDS change the sizes.
 */
import http from 'node:http';
import v8 from 'node:v8';
import vm from 'node:vm';
import { startService } from '../test/helpers/service.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 1000);
const POLLS = Number(process.env.BENCH_POLLS ?? 1000);
const IDS = Number(process.env.BENCH_IDS ?? 30_000);
const ROUNDS = 3;
const B = '/api/terminal-bridge';

const svc = await startService();
const agent = new http.Agent({ keepAlive: true, maxSockets: POLLS + 10 });

function request(method: string, path: string, body?: unknown): Promise<{ status: number; text: string; end: number }> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: svc.port,
        path,
        method,
        agent,
        headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {},
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, end: performance.now() }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const board = await svc.createBoard('Bench');
async function activate(bot: string): Promise<void> {
  await request('POST', `${B}/session`, { session_id: `pty-${bot}`, board_id: board, enabled: true, bot_id: bot });
  await request('POST', `${B}/chat`, { chat_id: 1, enabled: true, bot_id: bot });
}

/** Resolves once the service has received `count` more requests (so a GET is known to be waiting). */
function arrivals(count: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const on = () => {
      if (++seen === count) {
        svc.service.app.server.off('request', on);
        // Let the handlers run up to their wait.
        setTimeout(resolve, 5);
      }
    };
    svc.service.app.server.on('request', on);
  });
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
function memory(): { heap: number; rss: number } {
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
}

// 1. Latency
await activate('latency');
for (let i = 0; i < 50; i++) await request('POST', `${B}/to-messenger`, { text: 'warm', bot_id: 'latency' });
await request('GET', `${B}/to-messenger?wait=0&bot_id=latency`);
const latencies: number[] = [];
for (let i = 0; i < ITERATIONS; i++) {
  const arrived = arrivals(1);
  const waiting = request('GET', `${B}/to-messenger?wait=10&bot_id=latency`);
  await arrived;
  const t0 = performance.now();
  await request('POST', `${B}/to-messenger`, { text: `item ${i}`, bot_id: 'latency' });
  const got = await waiting;
  if (!got.text.includes(`item ${i}`)) throw new Error(`poll ${i} answered ${got.text}`);
  latencies.push(got.end - t0);
}
latencies.sort((a, b) => a - b);
console.log(`POST to-messenger -> waiting GET answered (${ITERATIONS} runs, loopback, keep-alive):`);
console.log(
  `  median ${pct(latencies, 50).toFixed(2)} ms   p99 ${pct(latencies, 99).toFixed(2)} ms   max ${latencies.at(-1)!.toFixed(2)} ms`,
);

// 2. Concurrent long polls
const bots = Array.from({ length: POLLS }, (_, i) => `poll-${i}`);
for (const bot of bots) await activate(bot);
console.log(`\n${POLLS} concurrent long polls (one per bot), ${ROUNDS} rounds:`);
const baseline = memory();
console.log(`  before:            heap ${mb(baseline.heap)}  rss ${mb(baseline.rss)}`);
for (let round = 1; round <= ROUNDS; round++) {
  const arrived = arrivals(POLLS);
  const polls = bots.map((bot) => request('GET', `${B}/to-messenger?wait=30&bot_id=${bot}`));
  await arrived;
  const waiting = memory();
  const t0 = performance.now();
  await Promise.all(bots.map((bot) => request('POST', `${B}/to-messenger`, { text: `round ${round}`, bot_id: bot })));
  const answers = await Promise.all(polls);
  const wokeAll = Math.max(...answers.map((a) => a.end)) - t0;
  if (answers.some((a) => !a.text.includes(`round ${round}`))) throw new Error('a poll missed its item');
  const afterRound = memory();
  console.log(
    `  round ${round}: waiting heap ${mb(waiting.heap)} rss ${mb(waiting.rss)}; answered heap ${mb(afterRound.heap)} rss ${mb(afterRound.rss)}; ` +
      `all ${POLLS} woken in ${wokeAll.toFixed(0)} ms`,
  );
}
const end = memory();
console.log(
  `  after:             heap ${mb(end.heap)}  rss ${mb(end.rss)}  (heap growth ${mb(end.heap - baseline.heap)})`,
);

// 3. Reads naming bot ids that hold no state
const bridge = svc.service.features.bridge;
const botsBefore = bridge.botCount;
const idsBaseline = memory();
const CONCURRENCY = 20;
let next = 0;
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < IDS) {
      const id = `stranger-${next++}`;
      await request('GET', `${B}/to-terminal?wait=0&bot_id=${id}`);
      await request('GET', `${B}/status?bot_id=${id}`);
    }
  }),
);
const idsEnd = memory();
console.log(`
${IDS} distinct bot ids, each polled (wait=0) and read (status):`);
console.log(
  `  heap ${mb(idsBaseline.heap)} -> ${mb(idsEnd.heap)} (growth ${mb(idsEnd.heap - idsBaseline.heap)}); ` +
    `bots in memory ${botsBefore} -> ${bridge.botCount}`,
);

agent.destroy();
await svc.close();
