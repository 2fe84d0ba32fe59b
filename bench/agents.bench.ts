/**
 * Agents benchmark: run with `npm run bench -- agents`.
 * Time from the model's first token to the first SSE byte of the chat at the client. The provider stand-in notes the
 * time just before it writes the first text delta; the client (node:http, no parsing library) notes when the first
 * `event: message` bytes arrive. Everything runs in this process on loopback, so the figure covers the provider's
 * socket, the AI SDK's own stream parsing, the service's handling and its socket. Two cases:
 * - "token after the stream opened": the provider opens its stream, then writes the first token 20 ms later (as a
 *   model does after thinking); an OpenAI-compatible server (the `openai-compatible` provider, Chat Completions).
 *   The rest of the answer is written once the client has the first piece, so the figure is that token's way alone.
 * - "token in the first packet": the OpenAI double writes the headers and the whole short answer at once, so the
 *   figure also holds the SDK setting up its stream when the response arrives and the other pieces going through.
 * Besides the wall-clock figure, the CPU time this process used in between (everything runs in it), which the
 * machine's load does not inflate the way it inflates waiting for a core.
 * Target: p99 under 5 ms. BENCH_ITERATIONS changes the number of chats per case (default 300).
 */
import http from 'node:http';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { HttpDouble, sendJson, sse } from '../test/helpers/ai-doubles/http-double.js';
import { startOpenAIDouble } from '../test/helpers/ai-doubles/openai.js';
import { startService } from '../test/helpers/service.js';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 300);
const WARMUP = 30;
const KEY = 'sk-bench-agents-000000';
const THINKING_MS = 20;

/** When the stand-in wrote the first token of the answer being measured, and this process's CPU time then. */
let firstToken = 0;
let firstTokenCpu = process.cpuUsage();
let firstSeen = Promise.resolve();
let markSeen = () => undefined as void;
const tokenWritten = () => {
  firstSeen = new Promise<void>((resolve) => (markSeen = resolve));
  firstToken = performance.now();
  firstTokenCpu = process.cpuUsage();
};

const openai = await startOpenAIDouble({ apiKey: KEY });
const local = new HttpDouble();
local.route('GET', /^\/v1\/models$/, 'GET /v1/models', (_rec, res) =>
  sendJson(res, 200, { object: 'list', data: [{ id: 'bench', object: 'model' }] }),
);
local.route('POST', /^\/v1\/chat\/completions$/, 'POST /v1/chat/completions', async (_rec, res) => {
  const stream = sse(res);
  const chunk = (delta: unknown, finish_reason: string | null = null) =>
    stream.send({
      id: 'c',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'bench',
      choices: [{ index: 0, delta, finish_reason }],
    });
  chunk({ role: 'assistant', content: '' });
  await new Promise((resolve) => setTimeout(resolve, THINKING_MS));
  tokenWritten();
  chunk({ content: 'Hello' });
  // The rest follows once the client holds the first piece, so the figure is that token's way alone.
  await Promise.race([firstSeen, new Promise((resolve) => setTimeout(resolve, 1000))]);
  for (const piece of [' from', ' the', ' bench', '.']) chunk({ content: piece });
  chunk({}, 'stop');
  stream.raw('data: [DONE]\n\n');
  stream.end();
});
await local.listen();

const svc = await startService({
  OPENAI_API_KEY: KEY,
  OPENAI_BASE_URL: `${openai.url}/v1`,
  OPENAI_COMPATIBLE_BASE_URL: `${local.url}/v1`,
});
const board = await svc.createBoard('Bench');
const agent = new http.Agent({ keepAlive: true });

/** POSTs a chat and resolves with the time the first message event arrived and the whole text. */
function chat(sessionId: string): Promise<{ firstMessage: number; cpu: number; text: string }> {
  const payload = Buffer.from(
    JSON.stringify({ session_id: sessionId, messages: [{ role: 'user', content: 'Say something short.' }] }),
  );
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: svc.port,
        path: '/api/agents/chat',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': payload.length, accept: 'text/event-stream' },
      },
      (res) => {
        let firstMessage = 0;
        let cpu = 0;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (!firstMessage && chunk.includes('event: message')) {
            firstMessage = performance.now();
            const used = process.cpuUsage(firstTokenCpu);
            cpu = (used.user + used.system) / 1000;
            markSeen();
          }
          text += chunk;
        });
        res.on('end', () => resolve({ firstMessage, cpu, text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function newSession(model: string): Promise<string> {
  const res = await svc.api('POST', '/api/agents/session', { board_id: board, agent_type: 'board-helper', model });
  if (res.status !== 200) throw new Error(res.text);
  return res.body.session_id;
}

async function measure(label: string, model: string, script: () => void): Promise<void> {
  const latencies: number[] = [];
  const cpu: number[] = [];
  // How late this process's timers run: on a busy machine the process waits for a core, and every figure grows by it.
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  let sessionId = '';
  for (let i = 0; i < WARMUP + ITERATIONS; i++) {
    // A fresh session every 20 chats keeps the prompt (the remembered conversation) small and alike.
    if (i % 20 === 0) {
      if (sessionId) await svc.api('POST', '/api/agents/end-session', { session_id: sessionId });
      sessionId = await newSession(model);
    }
    script();
    const r = await chat(sessionId);
    if (!r.firstMessage || !r.text.includes('event: done'))
      throw new Error(`unexpected answer: ${r.text.slice(0, 300)}`);
    if (i === WARMUP) loopDelay.enable();
    if (i >= WARMUP) {
      latencies.push(r.firstMessage - firstToken);
      cpu.push(r.cpu);
    }
    openai.requests.splice(0);
    local.requests.splice(0);
  }
  loopDelay.disable();
  latencies.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  const q = (p: number, list = latencies) => list[Math.min(list.length - 1, Math.floor(p * list.length))];
  const ms = (v: number) => `${v.toFixed(2)} ms`;
  const lag = (p: number) => ms(loopDelay.percentile(p) / 1e6 - 1);
  console.log(`${label}: model's first token -> first SSE message byte at the client, ${latencies.length} chats`);
  console.log(
    `  median ${ms(q(0.5))}  p90 ${ms(q(0.9))}  p99 ${ms(q(0.99))}  max ${ms(latencies.at(-1)!)}  (target p99 < 5 ms)`,
  );
  console.log(
    `  CPU time this process spent in between (service, SDK, both stand-ins): median ${ms(q(0.5, cpu))}  p99 ${ms(q(0.99, cpu))}`,
  );
  console.log(
    `  event-loop lateness of this process meanwhile: median ${lag(50)}  p99 ${lag(99)}; load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores`,
  );
}

await measure(`token ${THINKING_MS} ms after the stream opened`, 'openai-compatible/bench', () => undefined);
await measure('token in the first packet', 'gpt-4.1', () =>
  openai.chat.push(() => {
    tokenWritten();
    return { chunks: ['Hello', ' from', ' the', ' bench', '.'] };
  }),
);

agent.destroy();
await svc.close();
await Promise.all([openai.close(), local.close()]);
