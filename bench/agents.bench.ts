/**
 * Agents benchmark: run with `npm run bench -- agents`.
 * Time from the model's first token to the first SSE byte of the chat at the client: the OpenAI double (the real
 * Chat Completions streaming protocol, read by the AI SDK's own client) notes the time just before it writes the first
 * text delta; the client (node:http, no parsing library) notes when the first `event: message` bytes arrive. Both run
 * in this process, on loopback, so the figure covers the provider's socket, the SDK's stream parsing, the service's
 * handling and its socket. Target: p99 under 5 ms. BENCH_ITERATIONS changes the number of chats (default 300).
 */
import http from 'node:http';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startOpenAIDouble } from '../test/helpers/ai-doubles/openai.js';
import { startService } from '../test/helpers/service.js';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 300);
const WARMUP = 30;
const KEY = 'sk-bench-agents-000000';

const openai = await startOpenAIDouble({ apiKey: KEY });
const svc = await startService({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${openai.url}/v1` });
const board = await svc.createBoard('Bench');
const agent = new http.Agent({ keepAlive: true });

/** POSTs a chat and resolves with the time the first message event arrived and when the stream ended. */
function chat(sessionId: string): Promise<{ firstMessage: number; end: number; text: string }> {
  const payload = Buffer.from(JSON.stringify({ session_id: sessionId, messages: [{ role: 'user', content: 'Say something short.' }] }));
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
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (!firstMessage && chunk.includes('event: message')) firstMessage = performance.now();
          text += chunk;
        });
        res.on('end', () => resolve({ firstMessage, end: performance.now(), text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function newSession(): Promise<string> {
  const res = await svc.api('POST', '/api/agents/session', { board_id: board, agent_type: 'board-helper', model: 'gpt-4.1' });
  return res.body.session_id;
}

const latencies: number[] = [];
// How late this process's timers run: on a busy machine the process waits for a core, and every figure grows by it.
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
let sessionId = await newSession();
for (let i = 0; i < WARMUP + ITERATIONS; i++) {
  // A fresh session every 20 chats keeps the prompt (the remembered conversation) small and alike.
  if (i % 20 === 0) {
    await svc.api('POST', '/api/agents/end-session', { session_id: sessionId });
    sessionId = await newSession();
  }
  let firstToken = 0;
  openai.chat.push(() => {
    firstToken = performance.now();
    return { chunks: ['Hello', ' from', ' the', ' bench', '.'] };
  });
  const r = await chat(sessionId);
  if (!r.firstMessage || !r.text.includes('event: done')) throw new Error(`unexpected answer: ${r.text.slice(0, 300)}`);
  if (i === WARMUP) loopDelay.enable();
  if (i >= WARMUP) latencies.push(r.firstMessage - firstToken);
  openai.requests.splice(0);
}

latencies.sort((a, b) => a - b);
const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
const ms = (v: number) => `${v.toFixed(2)} ms`;
console.log(`model's first token -> first SSE message byte at the client, ${latencies.length} chats (after ${WARMUP} warm-up)`);
console.log(`  median ${ms(q(0.5))}  p90 ${ms(q(0.9))}  p99 ${ms(q(0.99))}  max ${ms(latencies.at(-1)!)}  (target p99 < 5 ms)`);
loopDelay.disable();
const lag = (p: number) => ms(loopDelay.percentile(p) / 1e6 - 1);
console.log(`  event-loop lateness of this process meanwhile: median ${lag(50)}  p99 ${lag(99)}`);
console.log(`  machine load average: ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores`);

agent.destroy();
await svc.close();
await openai.close();
