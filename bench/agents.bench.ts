/**
 * Agents benchmark: run with `npm run bench -- agents`.
 * Time from the model's first token to the first SSE byte of the chat at the client. Three processes, as in use: the
 * provider stand-in (this process, which also leads the run), the service (a process of its own, alone in it), and
 * the client (node:http, no parsing library). The stand-in notes the time just before it writes the first text delta;
 * the client notes when the first `event: message` bytes arrive; both read the system's monotonic clock, as does the
 * service's process for its part (below). Loopback throughout, so the figure covers the provider's socket, the AI
 * SDK's own stream parsing, the service's handling and its socket. Until 2026-11-22 the service shared this process
 * with the stand-ins, whose work for each answer (and garbage) then counted as the service's. Two cases:
 * - "token after the stream opened": the stand-in opens its stream, then writes the first token 20 ms later (as a
 *   model does after thinking); the `openai-compatible` provider, Chat Completions. The rest of the answer is
 *   written once the client has the first piece, so the figure is that token's way alone.
 * - "token in the first packet": 20 ms after the request (network and model time) the headers and the whole short
 *   answer leave in one packet, so the figure also holds the SDK setting up its stream when the response arrives;
 *   the `openai` provider. (Answered at once, on loopback the packet came while the service's own write of the
 *   request was still in its system call, which no real provider does.)
 * Besides the figure: its two parts, the service's (until it wrote the event to its socket, seen by the bench's
 * probe in the service's process) and the delivery to the client process, how late the service's timers ran
 * meanwhile, the load average (on 2 cores the tail is mostly the wait for a core), and the floor: the same calls made
 * by the provider library alone in a process of its own. Target: p99 under 5 ms. BENCH_ITERATIONS changes the number
 * of chats per case (default 300), BENCH_WARMUP the chats before them (default 30; V8 goes on compiling the
 * service's code for thousands of chats).
 */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { TestService } from '../test/helpers/service.js';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 300);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 30);
const KEY = 'sk-bench-agents-000000';
const THINKING_MS = 20;
const now = () => process.hrtime.bigint();
const ms = (v: number) => `${v.toFixed(2)} ms`;
/** Median, p90 and p99 of a list of milliseconds. */
function spread(xs: number[]): string {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return `median ${ms(at(0.5))}  p90 ${ms(at(0.9))}  p99 ${ms(at(0.99))}`;
}

/** One chat the client process is asked for, and what it tells back. */
interface ChatOrder {
  port: number;
  sessionId: string;
}
type ClientNote =
  | { kind: 'first' }
  | { kind: 'done'; firstMessage: string; text: string }
  | { kind: 'failed'; error: string };

/** What the service's process is asked, and what it answers (`served`: as a string, a bigint). */
type ServiceOrder =
  | { kind: 'start'; env: Record<string, string> }
  | { kind: 'served' }
  | { kind: 'lateness'; enable: boolean }
  | { kind: 'stop' };
type ServiceNote =
  | { kind: 'started'; port: number }
  | { kind: 'served'; at: string }
  | { kind: 'lateness'; median: number; p99: number }
  | { kind: 'stopped' };

// Each role imports only what it uses: the client and the floor do not load the service.
if (process.argv.includes('--client')) runClient();
else if (process.argv.includes('--floor')) runFloor();
else if (process.argv.includes('--service')) runService();
else await main();

/** Forks this file in one of its roles. */
function role(name: string): ChildProcess {
  return fork(fileURLToPath(import.meta.url), [name], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/**
 * The service's process: the service alone, and the bench's probe. The probe notes when the service writes the first
 * `event: message` of each chat to its socket (the bench's own instrument, not the service's), kept here until asked
 * for between chats, so that nothing but the service works in this process while a chat is measured.
 */
function runService(): void {
  let svc: TestService | undefined;
  let served = 0n;
  const write = http.ServerResponse.prototype.write;
  http.ServerResponse.prototype.write = function (this: http.ServerResponse, ...args: unknown[]) {
    if (!served && typeof args[0] === 'string' && args[0].startsWith('event: message\n')) served = now();
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as typeof write;
  // How late this process's timers run: while it works through a chat, and when it waits for a core.
  let lateness: IntervalHistogram | undefined;
  const tell = (note: ServiceNote) => process.send!(note);
  process.on('message', async (order: ServiceOrder) => {
    if (order.kind === 'start') {
      const { startService } = await import('../test/helpers/service.js');
      svc = await startService(order.env);
      tell({ kind: 'started', port: svc.port });
    } else if (order.kind === 'served') {
      tell({ kind: 'served', at: String(served) });
      served = 0n;
    } else if (order.kind === 'lateness') {
      if (order.enable) (lateness = monitorEventLoopDelay({ resolution: 1 })).enable();
      else if (lateness) {
        lateness.disable();
        tell({ kind: 'lateness', median: lateness.percentile(50) / 1e6 - 1, p99: lateness.percentile(99) / 1e6 - 1 });
      }
    } else {
      await svc?.close();
      tell({ kind: 'stopped' });
      process.disconnect();
    }
  });
}

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

/** What the floor process is asked for (one call to the provider), and what it tells back. */
interface FloorOrder {
  provider: 'openai' | 'openai-compatible';
  baseURL: string;
}
type FloorNote = { kind: 'first' } | { kind: 'done'; firstText: string } | { kind: 'failed'; error: string };

/**
 * The floor: the provider library alone, in a process with nothing else in it. One call per order, the one the
 * service's chat makes in that case (the AI SDK's provider, Chat Completions, streamed); notes when the first text
 * piece comes out of the provider's stream. What the service adds to a chat's first token is its part minus this.
 */
function runFloor(): void {
  const tell = (note: FloorNote) => process.send!(note);
  process.on('message', async ({ provider, baseURL }: FloorOrder) => {
    try {
      const model =
        provider === 'openai'
          ? (await import('@ai-sdk/openai')).createOpenAI({ apiKey: KEY, baseURL }).chat('gpt-4.1')
          : (await import('@ai-sdk/openai-compatible'))
              .createOpenAICompatible({ name: provider, baseURL })
              .chatModel('bench');
      const { stream } = await model.doStream({
        prompt: [{ role: 'user', content: [{ type: 'text', text: 'Say something short.' }] }],
      });
      let firstText = 0n;
      for await (const part of stream) {
        if (firstText || part.type !== 'text-delta') continue;
        firstText = now();
        tell({ kind: 'first' });
      }
      tell({ kind: 'done', firstText: String(firstText) });
    } catch (err) {
      tell({ kind: 'failed', error: (err as Error).message });
    }
  });
}

async function main(): Promise<void> {
  const { HttpDouble, sendJson, sse } = await import('../test/helpers/ai-doubles/http-double.js');
  /** When the stand-in wrote the first token of the answer being measured. */
  let firstToken = 0n;
  let firstSeen = Promise.resolve();
  let markSeen = () => undefined as void;
  const tokenWritten = () => {
    firstSeen = new Promise<void>((resolve) => (markSeen = resolve));
    firstToken = now();
  };

  /**
   * How the stand-in answers the next call: `streamed`, the stream opens at once and the first token follows
   * THINKING_MS later; `whole`, after THINKING_MS the headers and the whole short answer leave in one packet.
   */
  let answer: 'streamed' | 'whole' = 'streamed';
  const local = new HttpDouble();
  local.route('GET', /^\/v1\/models$/, 'GET /v1/models', (_rec, res) =>
    sendJson(res, 200, { object: 'list', data: [{ id: 'bench', object: 'model' }] }),
  );
  local.route('POST', /^\/v1\/chat\/completions$/, 'POST /v1/chat/completions', async (_rec, res) => {
    const thinking = () => new Promise((resolve) => setTimeout(resolve, THINKING_MS));
    if (answer === 'whole') await thinking();
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
    if (answer === 'streamed') await thinking();
    tokenWritten();
    chunk({ content: 'Hello' });
    // The rest follows once the client holds the first piece, so the figure is that token's way alone. Written in
    // the same tick, the whole answer leaves in one packet (node corks a response's writes until the next tick).
    if (answer === 'streamed') await Promise.race([firstSeen, new Promise((resolve) => setTimeout(resolve, 1000))]);
    for (const piece of [' from', ' the', ' bench', '.']) chunk({ content: piece });
    chunk({}, 'stop');
    stream.raw('data: [DONE]\n\n');
    stream.end();
  });
  await local.listen();

  const service = role('--service');
  const client = role('--client');
  const floor = role('--floor');
  /** Asks the service's process and waits for its answer of the same kind. */
  const ask = <K extends ServiceNote['kind']>(order: ServiceOrder, kind: K) =>
    new Promise<Extract<ServiceNote, { kind: K }>>((resolve) => {
      const on = (note: ServiceNote) => {
        if (note.kind !== kind) return;
        service.off('message', on);
        resolve(note as Extract<ServiceNote, { kind: K }>);
      };
      service.on('message', on);
      service.send(order);
    });
  const { port } = await ask(
    {
      kind: 'start',
      env: {
        OPENAI_API_KEY: KEY,
        OPENAI_BASE_URL: `${local.url}/v1`,
        OPENAI_COMPATIBLE_BASE_URL: `${local.url}/v1`,
      },
    },
    'started',
  );
  const api = async (path: string, body: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const parsed = (await res.json()) as Record<string, string>;
    if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(parsed)}`);
    return parsed;
  };
  const board = (await api('/api/moodboards', { name: 'Bench' })).id;

  let answered: (note: ClientNote) => void = () => undefined;
  client.on('message', (note: ClientNote) => (note.kind === 'first' ? markSeen() : answered(note)));

  /** Has the client process run a chat: when the first message event arrived there, and the whole text. */
  const chat = (sessionId: string) =>
    new Promise<{ firstMessage: bigint; text: string }>((resolve, reject) => {
      answered = (note) =>
        note.kind === 'done'
          ? resolve({ firstMessage: BigInt(note.firstMessage), text: note.text })
          : reject(new Error(note.kind === 'failed' ? note.error : 'unexpected note'));
      client.send({ port, sessionId } satisfies ChatOrder);
    });

  const newSession = async (model: string): Promise<string> =>
    (await api('/api/agents/session', { board_id: board, agent_type: 'board-helper', model })).session_id;

  const measure = async (label: string, model: string, script: () => void): Promise<void> => {
    const latencies: number[] = [];
    const serviceParts: number[] = [];
    const deliveries: number[] = [];
    let sessionId = '';
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      // A fresh session every 20 chats keeps the prompt (the remembered conversation) small and alike.
      if (i % 20 === 0) {
        if (sessionId) await api('/api/agents/end-session', { session_id: sessionId });
        sessionId = await newSession(model);
      }
      script();
      const r = await chat(sessionId);
      const served = BigInt((await ask({ kind: 'served' }, 'served')).at);
      if (!r.firstMessage || !served || !r.text.includes('event: done'))
        throw new Error(`unexpected answer: ${r.text.slice(0, 300)}`);
      if (i === WARMUP) service.send({ kind: 'lateness', enable: true } satisfies ServiceOrder);
      if (i >= WARMUP) {
        latencies.push(Number(r.firstMessage - firstToken) / 1e6);
        serviceParts.push(Number(served - firstToken) / 1e6);
        deliveries.push(Number(r.firstMessage - served) / 1e6);
      }
      local.requests.splice(0);
    }
    const lateness = await ask({ kind: 'lateness', enable: false }, 'lateness');
    console.log(`${label}: model's first token -> first SSE message byte at the client, ${latencies.length} chats`);
    console.log(`  ${spread(latencies)}  max ${ms(Math.max(...latencies))}  (target p99 < 5 ms)`);
    console.log(`  of which the service (token -> its write to the socket): ${spread(serviceParts)}`);
    console.log(`  and the delivery (its write -> the client process reading it): ${spread(deliveries)}`);
    console.log(
      `  event-loop lateness of the service's process meanwhile: median ${ms(lateness.median)}  p99 ${ms(lateness.p99)}; load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores`,
    );
  };

  let floorAnswered: (note: FloorNote) => void = () => undefined;
  floor.on('message', (note: FloorNote) => (note.kind === 'first' ? markSeen() : floorAnswered(note)));
  /** The same answers taken by the provider library alone (the floor process). */
  const measureFloor = async (provider: FloorOrder['provider'], script: () => void): Promise<void> => {
    const parts: number[] = [];
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      script();
      const note = await new Promise<FloorNote>((resolve) => {
        floorAnswered = resolve;
        floor.send({ provider, baseURL: `${local.url}/v1` } satisfies FloorOrder);
      });
      if (note.kind !== 'done' || note.firstText === '0') throw new Error(`floor: ${JSON.stringify(note)}`);
      if (i >= WARMUP) parts.push(Number(BigInt(note.firstText) - firstToken) / 1e6);
      local.requests.splice(0);
    }
    console.log(
      `  the provider library alone, in a process of its own (token -> its first text piece): ${spread(parts)}`,
    );
  };

  const streamed = () => (answer = 'streamed');
  const whole = () => (answer = 'whole');
  try {
    await measure(`token ${THINKING_MS} ms after the stream opened`, 'openai-compatible/bench', streamed);
    await measureFloor('openai-compatible', streamed);
    await measure('token in the first packet', 'gpt-4.1', whole);
    await measureFloor('openai', whole);
  } finally {
    client.disconnect();
    floor.disconnect();
    await ask({ kind: 'stop' }, 'stopped');
    await local.close();
  }
}
