/**
 * Agents benchmark: run with `npm run bench -- agents`.
 * Time from the model's first token to the first SSE byte of the chat at the client. The provider stand-in notes the
 * time just before it writes the first text delta; the client, a process of its own (node:http, no parsing library),
 * notes when the first `event: message` bytes arrive; both read the system's monotonic clock. The service and the
 * stand-ins share this process, on loopback, so the figure covers the provider's socket, the AI SDK's own stream
 * parsing, the service's handling and its socket. The client is a separate process as a real one is: in this process
 * it could read its socket only once everything the service had queued was done (until 2026-11-22 it did, and the
 * second case's figure held the SDK's processing of the whole answer). Two cases:
 * - "token after the stream opened": the provider opens its stream, then writes the first token 20 ms later (as a
 *   model does after thinking); an OpenAI-compatible server (the `openai-compatible` provider, Chat Completions).
 *   The rest of the answer is written once the client has the first piece, so the figure is that token's way alone.
 * - "token in the first packet": the OpenAI double writes the headers and the whole short answer at once, so the
 *   figure also holds the SDK setting up its stream when the response arrives.
 * Besides the figure: its two parts, the service's (until it wrote the event to its socket) and the delivery to the
 * client process, how late this process's timers ran meanwhile, and the load average (on the shared machine the tail
 * is mostly the wait for a core). Target: p99 under 5 ms. BENCH_ITERATIONS changes the number of chats per case
 * (default 300).
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { HttpDouble, sendJson, sse } from '../test/helpers/ai-doubles/http-double.js';
import { startOpenAIDouble } from '../test/helpers/ai-doubles/openai.js';
import { startService } from '../test/helpers/service.js';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 300);
const WARMUP = 30;
const KEY = 'sk-bench-agents-000000';
const THINKING_MS = 20;
const now = () => process.hrtime.bigint();

/** One chat the client process is asked for, and what it tells back. */
interface ChatOrder {
  port: number;
  sessionId: string;
}
type ClientNote =
  | { kind: 'first' }
  | { kind: 'done'; firstMessage: string; text: string }
  | { kind: 'failed'; error: string };

if (process.argv.includes('--client')) runClient();
else await main();

/** The client process: one chat per order on a keep-alive connection, the first `event: message` bytes timed. */
function runClient(): void {
  const agent = new http.Agent({ keepAlive: true });
  const tell = (note: ClientNote) => process.send!(note);
  process.on('message', ({ port, sessionId }: ChatOrder) => {
    const payload = Buffer.from(
      JSON.stringify({ session_id: sessionId, messages: [{ role: 'user', content: 'Say something short.' }] }),
    );
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/api/agents/chat',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': payload.length, accept: 'text/event-stream' },
      },
      (res) => {
        let firstMessage = 0n;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (!firstMessage && chunk.includes('event: message')) {
            firstMessage = now();
            tell({ kind: 'first' });
          }
          text += chunk;
        });
        res.on('end', () => tell({ kind: 'done', firstMessage: String(firstMessage), text }));
      },
    );
    req.on('error', (err) => tell({ kind: 'failed', error: err.message }));
    req.end(payload);
  });
  process.on('disconnect', () => agent.destroy());
}

async function main(): Promise<void> {
  /** When the stand-in wrote the first token of the answer being measured. */
  let firstToken = 0n;
  /**
   * When the service wrote that token's `event: message` to its socket. The service runs in this process, so its
   * writes can be watched here (the bench's own instrument, not the service's): the figure at the client is the
   * service's part plus the delivery to another process, which on 2 cores may wait for one.
   */
  let served = 0n;
  const write = http.ServerResponse.prototype.write;
  http.ServerResponse.prototype.write = function (this: http.ServerResponse, ...args: unknown[]) {
    if (!served && typeof args[0] === 'string' && args[0].startsWith('event: message\n')) served = now();
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof write;
  let firstSeen = Promise.resolve();
  let markSeen = () => undefined as void;
  const tokenWritten = () => {
    firstSeen = new Promise<void>((resolve) => (markSeen = resolve));
    firstToken = now();
    served = 0n;
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

  const client = fork(fileURLToPath(import.meta.url), ['--client'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let answered: (note: ClientNote) => void = () => undefined;
  client.on('message', (note: ClientNote) => (note.kind === 'first' ? markSeen() : answered(note)));

  /** Has the client process run a chat: when the first message event arrived there, and the whole text. */
  const chat = (sessionId: string) =>
    new Promise<{ firstMessage: bigint; text: string }>((resolve, reject) => {
      answered = (note) =>
        note.kind === 'done'
          ? resolve({ firstMessage: BigInt(note.firstMessage), text: note.text })
          : reject(new Error(note.kind === 'failed' ? note.error : 'unexpected note'));
      client.send({ port: svc.port, sessionId } satisfies ChatOrder);
    });

  const newSession = async (model: string): Promise<string> => {
    const res = await svc.api('POST', '/api/agents/session', { board_id: board, agent_type: 'board-helper', model });
    if (res.status !== 200) throw new Error(res.text);
    return res.body.session_id;
  };

  const measure = async (label: string, model: string, script: () => void): Promise<void> => {
    const latencies: number[] = [];
    const serviceParts: number[] = [];
    const deliveries: number[] = [];
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
        latencies.push(Number(r.firstMessage - firstToken) / 1e6);
        serviceParts.push(Number(served - firstToken) / 1e6);
        deliveries.push(Number(r.firstMessage - served) / 1e6);
      }
      openai.requests.splice(0);
      local.requests.splice(0);
    }
    loopDelay.disable();
    for (const xs of [latencies, serviceParts, deliveries]) xs.sort((a, b) => a - b);
    const at = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))];
    const q = (p: number) => at(latencies, p);
    const ms = (v: number) => `${v.toFixed(2)} ms`;
    const spread = (xs: number[]) => `median ${ms(at(xs, 0.5))}  p90 ${ms(at(xs, 0.9))}  p99 ${ms(at(xs, 0.99))}`;
    const lag = (p: number) => ms(loopDelay.percentile(p) / 1e6 - 1);
    console.log(`${label}: model's first token -> first SSE message byte at the client, ${latencies.length} chats`);
    console.log(
      `  median ${ms(q(0.5))}  p90 ${ms(q(0.9))}  p99 ${ms(q(0.99))}  max ${ms(latencies.at(-1)!)}  (target p99 < 5 ms)`,
    );
    console.log(`  of which the service (token -> its write to the socket): ${spread(serviceParts)}`);
    console.log(`  and the delivery (its write -> the client process reading it): ${spread(deliveries)}`);
    console.log(
      `  event-loop lateness of the service's process meanwhile: median ${lag(50)}  p99 ${lag(99)}; load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores`,
    );
  };

  try {
    await measure(`token ${THINKING_MS} ms after the stream opened`, 'openai-compatible/bench', () => undefined);
    await measure('token in the first packet', 'gpt-4.1', () =>
      openai.chat.push(() => {
        tokenWritten();
        return { chunks: ['Hello', ' from', ' the', ' bench', '.'] };
      }),
    );
  } finally {
    client.disconnect();
    await svc.close();
    await Promise.all([openai.close(), local.close()]);
  }
}
