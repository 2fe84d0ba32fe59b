// Generation benchmark: the service's own overhead per generation against the OpenAI double (request -> element on
// the board, minus the same call made straight to the double), and the memory of N queued generations polling the
// Replicate double at once. Doubles and service share this process: memory figures are deltas of the whole process.
// Usage: npx tsx bench/generation.bench.ts [--runs 40] [--size 1024] [--queued 20] [--poll-ms 200] [--hold-seconds 5]
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import sharp from 'sharp';
import { eventually, startService } from '../test/helpers/service.js';
import { startOpenAIDouble } from '../test/helpers/ai-doubles/openai.js';
import { startReplicateDouble } from '../test/helpers/ai-doubles/replicate.js';

const { values: opt } = parseArgs({
  options: {
    runs: { type: 'string', default: '40' },
    size: { type: 'string', default: '1024' },
    queued: { type: 'string', default: '20' },
    'poll-ms': { type: 'string', default: '200' },
    'hold-seconds': { type: 'string', default: '5' },
  },
});
const RUNS = Number(opt.runs);
const SIZE = Number(opt.size);
const QUEUED = Number(opt.queued);
const POLL_MS = Number(opt['poll-ms']);
const HOLD_S = Number(opt['hold-seconds']);

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const MiB = 1024 * 1024;
const mem = () => {
  gc();
  const m = process.memoryUsage();
  return { rss: m.rss / MiB, heap: m.heapUsed / MiB };
};
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)];
const p95 = (xs: number[]) => sorted(xs)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))];
const f = (n: number) => n.toFixed(1);

const KEY = 'sk-bench-0000000000000000';
const openai = await startOpenAIDouble({ apiKey: KEY });
const replicate = await startReplicateDouble({ apiToken: KEY });
// A provider-sized image: random pixels do not compress, so this is the worst case for base64 and disk.
const png = await sharp(Buffer.from(Array.from({ length: SIZE * SIZE * 3 }, () => Math.floor(Math.random() * 256))), {
  raw: { width: SIZE, height: SIZE, channels: 3 },
})
  .png({ compressionLevel: 1 })
  .toBuffer();
openai.defaultImage = png;
const t = await startService({
  OPENAI_API_KEY: KEY,
  OPENAI_BASE_URL: `${openai.url}/v1`,
  REPLICATE_API_TOKEN: KEY,
  REPLICATE_BASE_URL: `${replicate.url}/v1`,
  AI_POLL_INTERVAL_MS: String(POLL_MS),
});
const board = await t.createBoard('bench');

// --- overhead per generation (immediate provider)
/** Wall time and this process's CPU time (service and double share it; CPU time suffers less from other load). */
interface Cost {
  ms: number;
  cpuMs: number;
}
const direct = async (): Promise<Cost> => {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const res = await fetch(`${openai.url}/v1/images/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-image-1', prompt: 'bench', n: 1, size: '1024x1024' }),
  });
  const body = (await res.json()) as { data: { b64_json: string }[] };
  Buffer.from(body.data[0].b64_json, 'base64');
  const c = process.cpuUsage(c0);
  return { ms: performance.now() - t0, cpuMs: (c.user + c.system) / 1000 };
};
/** The new element's background probe and thumbnail are left to finish, so they do not slow the next run. */
const settle = (elementId: string) =>
  eventually(
    async () =>
      (await t.api('GET', `/api/moodboards/${board}/elements/${elementId}`)).body.data.probe_status !== 'pending'
        ? true
        : undefined,
    60_000,
  );
const viaService = async (i: number): Promise<Cost> => {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const res = await t.api('POST', '/api/ai/generate', {
    board_id: board,
    model: 'gpt-image-1',
    prompt: `bench image ${i}`,
    aspect_ratio: '1:1',
  });
  const c = process.cpuUsage(c0);
  const cost = { ms: performance.now() - t0, cpuMs: (c.user + c.system) / 1000 };
  if (res.status !== 200) throw new Error(`generate failed: ${res.status} ${res.text}`);
  await settle(res.body.element.id);
  return cost;
};
for (let i = 0; i < 3; i++) {
  await direct();
  await viaService(-i - 1);
}
const d: Cost[] = [];
const s: Cost[] = [];
for (let i = 0; i < RUNS; i++) {
  d.push(await direct());
  s.push(await viaService(i));
}
const ms = (xs: Cost[]) => xs.map((x) => x.ms);
const cpu = (xs: Cost[]) => xs.map((x) => x.cpuMs);
const pairs = (k: (c: Cost) => number) => s.map((x, i) => k(x) - k(d[i]));
console.log(
  `image ${SIZE}x${SIZE} PNG, ${(png.length / MiB).toFixed(2)} MiB, ${RUNS} interleaved pairs; load average ${(await import('node:os')).loadavg()[0].toFixed(1)}`,
);
console.log(
  `  straight to the double: wall median ${f(median(ms(d)))} ms (p95 ${f(p95(ms(d)))}), CPU median ${f(median(cpu(d)))} ms`,
);
console.log(
  `  through the service:    wall median ${f(median(ms(s)))} ms (p95 ${f(p95(ms(s)))}), CPU median ${f(median(cpu(s)))} ms`,
);
console.log(
  `  service overhead per generation (median of pair differences): wall ${f(median(pairs((c) => c.ms)))} ms, CPU ${f(median(pairs((c) => c.cpuMs)))} ms`,
);

// --- memory with N queued generations polling at once
const before = mem();
const jobs: string[] = [];
for (let i = 0; i < QUEUED; i++) {
  replicate.plans.push({ steps: ['processing'] });
  const res = await t.api('POST', '/api/ai/generate', {
    board_id: board,
    model: 'flux-schnell',
    prompt: `queued ${i}`,
    aspect_ratio: '1:1',
  });
  jobs.push(res.body.job_id);
}
const preds = [...replicate.predictions.keys()].slice(-QUEUED);
const gets0 = replicate.received('GET', /predictions\//).length;
const held0 = performance.now();
await new Promise((r) => setTimeout(r, HOLD_S * 1000));
const polls = replicate.received('GET', /predictions\//).length - gets0;
const during = mem();
const running = (await Promise.all(jobs.map((id) => t.api('GET', `/api/ai/jobs/${id}`)))).filter(
  (r) => r.body.status === 'running',
).length;
for (const id of preds) replicate.force(id, 'succeeded');
const t0 = performance.now();
await eventually(
  async () => {
    const all = await Promise.all(jobs.map((id) => t.api('GET', `/api/ai/jobs/${id}`)));
    return all.every((r) => r.body.status === 'complete') ? true : undefined;
  },
  120_000,
  'queued generations to complete',
);
const done = performance.now() - t0;
const after = mem();
console.log(
  `${QUEUED} queued generations (Replicate double, first poll interval ${POLL_MS} ms, backing off x1.5 to x10)`,
);
console.log(`  running at once: ${running}/${QUEUED}; ${polls} polls in ${f((performance.now() - held0) / 1000)} s`);
console.log(`  process memory before: rss ${f(before.rss)} MiB, heap ${f(before.heap)} MiB`);
console.log(
  `  while polling:         rss ${f(during.rss)} MiB (+${f(during.rss - before.rss)}), heap ${f(during.heap)} MiB (+${f(during.heap - before.heap)})`,
);
console.log(
  `  after completion:      rss ${f(after.rss)} MiB, heap ${f(after.heap)} MiB; all ${QUEUED} delivered ${f(done)} ms after the provider finished`,
);

await t.close();
await openai.close();
await replicate.close();
