// How long hostile sizes hold the service's event loop: a 100 KB upload filename, a 32 MB JSON body, a 100,000-item
// video project and 8 MiB of `[0]` (all refused), then the largest projects the limits accept (saved, read back,
// compiled for a render), with the heap after each (after a full collection).
// The service runs in this process, so monitorEventLoopDelay sees its loop (the client's own writes count too).
// Usage: npx tsx bench/hostile.bench.ts
import http from 'node:http';
import v8 from 'node:v8';
import vm from 'node:vm';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startService } from '../test/helpers/service.js';
import { compilePlan } from '../src/timeline/compile.js';
import { buildRenderPlan } from '../src/timeline/timeline.js';
import { PROJECT_LIMITS } from '../src/timeline/project.js';

const MiB = 1024 * 1024;
// A full collection before each figure of memory, without a command-line flag (bench/run.ts starts plain tsx).
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const heap = () => {
  gc();
  return process.memoryUsage().heapUsed;
};
const svc = await startService();
const board = await svc.createBoard();
const project = (await svc.api('POST', `/api/moodboards/${board}/video-projects`, { name: 'bench' })).body;
const projectPath = `/api/moodboards/${board}/video-projects/${project.id}`;

function send(
  method: string,
  path: string,
  body: Buffer,
  contentType: string,
): Promise<{ status: number; ms: number }> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: svc.port,
        method,
        path,
        headers: { 'content-type': contentType, 'content-length': body.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - start }));
      },
    );
    // The service may answer (413) and close before the whole body is written.
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.end(body);
  });
}

const multipart = (filename: string) => {
  const boundary = 'benchboundary0123456789';
  const body = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="board_id"\r\n\r\n${board}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n` +
      `Content-Type: image/png\r\n\r\npixels\r\n--${boundary}--\r\n`,
  );
  return { body, type: `multipart/form-data; boundary=${boundary}` };
};
const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const items = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `i${i}`, clipId: 'c', trimEnd: 1 }));
const clips = [{ id: 'c', url: '/media/x.png', mediaType: 'image', duration: 1 }];

// Payloads are built before any measurement: building them is the client's work, not the service's.
const upload = multipart(`${'A'.repeat(102_400)}.png`);
const bigBody = Buffer.from(`{"name":"${'x'.repeat(32 * 1000 * 1000)}"}`);
const hugeProject = json({ data: { clips, channels: [{ id: 'ch', items: items(100_000) }] } });
const largest = json({ data: { clips, channels: [{ id: 'ch', items: items(PROJECT_LIMITS.items) }] } });
// Bodies of the smallest JSON values (unknown fields are kept): the route's byte limit of them (refused before it
// is parsed), and just under its value limit (the costliest body it accepts).
const arrays = (n: number) => Buffer.from(`{"data":{"notes":[${Array(n).fill('[0]').join(',')}]}}`);
const byteLimited = arrays(Math.floor(PROJECT_LIMITS.jsonBytes / 4) - 10);
const valueLimited = arrays(Math.floor(PROJECT_LIMITS.jsonValues / 2) - 10);

const loop = monitorEventLoopDelay({ resolution: 1 });
loop.enable();
const ms = (ns: number) => (ns / 1e6).toFixed(1);

async function measure(label: string, work: () => Promise<{ status: number; ms: number }>): Promise<void> {
  const health: number[] = [];
  let polling = true;
  const heap0 = heap();
  loop.reset();
  const poll = (async () => {
    while (polling) {
      const t = performance.now();
      await fetch(`${svc.baseUrl}/api/health`).then((r) => r.arrayBuffer());
      health.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const answer = await work();
  polling = false;
  await poll;
  health.sort((a, b) => a - b);
  console.log(
    `${label.padEnd(44)} ${answer.status}  answer ${answer.ms.toFixed(0).padStart(5)} ms  ` +
      `loop delay max ${ms(loop.max).padStart(6)} ms p99 ${ms(loop.percentile(99)).padStart(6)} ms  ` +
      `health ${health.length} answers, slowest ${(health.at(-1) ?? 0).toFixed(1)} ms  ` +
      `heap ${((heap() - heap0) / MiB).toFixed(1)} MiB after`,
  );
}

// The first upload sets up the multipart parser: not part of the figure.
await svc.upload(board, { name: 'warm-up.png', data: 'pixels' });
const start = { heap: heap(), rss: process.memoryUsage().rss };
await measure('nothing (200 ms of health checks alone)', async () => {
  await new Promise((r) => setTimeout(r, 200));
  return { status: 0, ms: 200 };
});
await measure('upload, 100 KB filename', () => send('POST', '/api/upload', upload.body, upload.type));
await measure('PATCH board, 32 MB JSON body', () =>
  send('PATCH', `/api/moodboards/${board}`, bigBody, 'application/json'),
);
await measure('PUT video project, 100,000 items', () => send('PUT', projectPath, hugeProject, 'application/json'));
await measure(`PUT video project, ${PROJECT_LIMITS.items} items (accepted)`, () =>
  send('PUT', projectPath, largest, 'application/json'),
);
await measure(`PUT video project, ${(byteLimited.length / MiB).toFixed(0)} MiB of [0]`, () =>
  send('PUT', projectPath, byteLimited, 'application/json'),
);
await measure(`PUT video project, ${PROJECT_LIMITS.jsonValues / 1000}k values (accepted)`, () =>
  send('PUT', projectPath, valueLimited, 'application/json'),
);
await measure(`GET video project, ${PROJECT_LIMITS.jsonValues / 1000}k values`, async () => {
  const t = performance.now();
  const res = await fetch(svc.baseUrl + projectPath);
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - t };
});
await send('PUT', projectPath, largest, 'application/json');
await measure(`GET video project, ${PROJECT_LIMITS.items} items`, async () => {
  const t = performance.now();
  const res = await fetch(svc.baseUrl + projectPath);
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - t };
});

// A render's job row holds its project: what reading the row costs (after every progress write, on every poll), and
// what its params cost once read. The project here is the costliest one accepted (500,000 values in one channel).
const renderable = arrays(Math.floor(PROJECT_LIMITS.jsonValues / 2) - 1000).toString();
await send(
  'PUT',
  projectPath,
  Buffer.from(
    `{"data":{"clips":${JSON.stringify(clips)},"channels":[{"items":[{"clipId":"c"}]}],${renderable.slice(9)}`,
  ),
  'application/json',
);
const render = await svc.api('POST', `${projectPath}/render`, {});
const jobs = svc.service.ctx.jobs;
for (const [label, read] of [
  ['read the job row', () => jobs.get(render.body.job_id)],
  ['read the job row and its params', () => jobs.get(render.body.job_id)?.params],
] as const) {
  const t = performance.now();
  for (let i = 0; i < 10; i++) read();
  console.log(
    `${label} (render of ${PROJECT_LIMITS.jsonValues / 1000}k values): ${((performance.now() - t) / 10).toFixed(1)} ms`,
  );
}

// What a render job does on the loop before ffmpeg starts, for the most layers a render accepts and for the most
// items a project holds: the plan and the one ffmpeg command.
for (const n of [PROJECT_LIMITS.renderLayers, PROJECT_LIMITS.items]) compile(n);
function compile(n: number): void {
  const t = performance.now();
  const plan = buildRenderPlan({ clips, channels: [{ items: items(n) }] });
  const compiled = compilePlan(
    plan,
    { c: { path: '/tmp/x.png', width: 1920, height: 1080, hasAudio: false, still: true } },
    { path: '/tmp/out.mp4', width: 1920, height: 1080, fps: 30, format: 'mp4', codec: 'h264', crf: 23 },
  );
  console.log(
    `compile ${plan.layers.length} layers: ${(performance.now() - t).toFixed(0)} ms, graph ${(compiled.graph.length / 1024).toFixed(0)} KiB`,
  );
}
console.log(
  `memory: heap ${(start.heap / MiB).toFixed(0)} -> ${(heap() / MiB).toFixed(0)} MiB, ` +
    `RSS ${(start.rss / MiB).toFixed(0)} -> ${(process.memoryUsage().rss / MiB).toFixed(0)} MiB (the payloads are built before)`,
);
loop.disable();
await svc.close();
