/**
 * Hostile-input probe: run with `npm run bench -- probe` (issue 24). Walks docs/openapi.json and sends every operation,
 * for every field of its body, query and path, values of the right type but hostile meaning (100 KB strings, names
 * with control characters, `..`, `%`, NUL or Windows device names, numbers from -1e308 to 1e308, arrays of 100,000
 * entries, objects of 100,000 fields or nested near the depth limit, URLs to link-local and metadata addresses in
 * many spellings, file://, data: and a loopback server that redirects there, pages that open dialogs or load from
 * those addresses, ids of another board), then whole-body attacks (32 MB JSON, projects of 100,000 items, channels or
 * clips, a still trimmed to 1e6 s). Work that can be a job is asked as one (URLs also in place), looked at, and
 * cancelled at once, except a job given a URL, which runs to its end so that its fetches meet the guard. Loopback
 * only, bounded in count (PROBE_MAX_REQUESTS, default 12,000) and time (PROBE_BUDGET_S for the walk, default 200 s).
 * The service runs in a child process of its own (so the probe's work is not counted), with a resolver stand-in (names
 * under .probe.invalid resolve to 169.254.169.254, `localhost` to loopback, others fail) and a guard on every socket
 * it opens: a connection to a link-local or metadata address is noted and never made (checked at start), one leaving
 * loopback is refused. The child reports its event-loop delay (monitorEventLoopDelay), the times its loop stood still
 * 200 ms or more (each matched to the requests in flight), and its RSS (start, peak, end after a full collection).
 * A defect, which makes the run exit 1: a 5xx (except those documented: a feature left unconfigured, an import that
 * meets the probe's redirecting server) or no answer, an answer slower than SLOW_MS, a loop stall longer than SLOW_MS,
 * a job accepted with an absurd value (a number of magnitude 1e6 or more, 100,000 entries or fields), stored state
 * with 100,000 entries or a duration over 12 h, a job given a file:, ftp: or data: URL that completed, a connection
 * to a forbidden address or off loopback, health checks slower than SLOW_MS, or RSS not back within RSS_SLACK of its
 * start.
 */
import { fork } from 'node:child_process';
import dns from 'node:dns';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import net, { type LookupFunction } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const SLOW_MS = 1000;
const MiB = 1024 * 1024;
const BUDGET_MS = Number(process.env.PROBE_BUDGET_S ?? 200) * 1000;
const MAX_REQUESTS = Number(process.env.PROBE_MAX_REQUESTS ?? 12_000);
const TIMEOUT_MS = 20_000;
/** How far RSS may stay above its start after the run and a full collection ("back near its start"). */
const RSS_SLACK = 96 * MiB;

/** `reset`: the figures start again from here (the run's, not the service's start-up and the fixtures'). */
type ServiceOrder = { kind: 'stats'; gc: boolean; reset?: boolean } | { kind: 'stop' };
interface Stats {
  kind: 'stats';
  loopP99: number;
  loopMax: number;
  rss: number;
  peakRss: number;
  heap: number;
  forbidden: string[];
  outside: string[];
  /** Times the service's loop did not turn for STALL_MS or more: when it turned again (epoch ms), and how long. */
  stalls: { at: number; ms: number }[];
}
const STALL_MS = 200;

if (process.argv.includes('--service')) await runService();
else await main();

/**
 * The service's process: the service, the resolver stand-in, the socket guard, the loop monitor and the memory figures.
 */
async function runService(): Promise<void> {
  const forbidden: string[] = [];
  const outside: string[] = [];
  const { isForbiddenAddress } = await import('../src/net/address-policy.js');
  const loopback = (a: string) => /^127\.|^::1$|^::ffff:127\./.test(a);
  /** Notes an address a socket is about to connect to; answers the error that stops it, if any. */
  const judge = (host: string, address: string): Error | undefined => {
    if (isForbiddenAddress(address)) {
      forbidden.push(`${host} -> ${address}`);
      return Object.assign(new Error(`probe: ${address} is forbidden`), { code: 'ECONNREFUSED' });
    }
    if (!loopback(address)) {
      outside.push(`${host} -> ${address}`);
      return Object.assign(new Error(`probe: ${address} is outside loopback`), { code: 'ECONNREFUSED' });
    }
    return undefined;
  };
  // The guard: every TCP connection of this process (the service's fetches, undici's, the CONNECT proxy's) passes
  // here. A literal is judged at once; a name is judged on what its look-up answers, just before the connection.
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    const first = args[0];
    const opts = (Array.isArray(first) ? first[0] : first) as net.TcpNetConnectOpts | number | string;
    if (typeof opts === 'object' && opts !== null && 'host' in opts && typeof opts.host === 'string') {
      const host = opts.host.replace(/^\[(.*)\]$/, '$1');
      if (net.isIP(host)) {
        const refused = judge(host, host);
        if (refused) {
          process.nextTick(() => this.destroy(refused));
          return this;
        }
      } else {
        const lookup: LookupFunction = opts.lookup ?? dns.lookup;
        opts.lookup = ((name: string, o: dns.LookupOptions, cb: (...a: unknown[]) => void) =>
          lookup(name, o, (err, address, family) => {
            if (err) return cb(err, address, family);
            const all = typeof address === 'string' ? [address] : address.map((a) => a.address);
            for (const a of all) {
              const refused = judge(name, a);
              if (refused) return cb(refused, address, family);
            }
            cb(null, address, family);
          })) as LookupFunction;
      }
    }
    return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof connect;
  // The resolver stand-in the service's outbound fetches use (its lookup seam).
  const standIn: LookupFunction = (hostname, options, callback) => {
    const name = hostname.toLowerCase();
    const answer = name.endsWith('.probe.invalid') ? '169.254.169.254' : name === 'localhost' ? '127.0.0.1' : '';
    if (!answer) {
      const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return process.nextTick(() => callback(err, '', 4));
    }
    process.nextTick(() =>
      options.all ? (callback as any)(null, [{ address: answer, family: 4 }]) : callback(null, answer, 4),
    );
  };

  // The guard checks itself: a connection to the metadata address, by literal and by a name, is refused and noted.
  for (const host of ['169.254.169.254', 'self-check.probe.invalid'])
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect({ host, port: 80, lookup: (_n, o, cb) => standIn(host, o, cb) });
      socket.on('connect', () => reject(new Error(`probe: the guard let a connection to ${host} through`)));
      socket.on('error', () => resolve());
    });
  if (forbidden.length !== 2) throw new Error(`probe: the guard noted ${forbidden.length} of 2 forbidden connections`);
  forbidden.length = 0;
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const { startService } = await import('../test/helpers/service.js');
  const svc = await startService({ JOB_CONCURRENCY: '1' }, { lookup: standIn });
  const stalls: { at: number; ms: number }[] = [];
  let last = Date.now();
  const ticker = setInterval(() => {
    const now = Date.now();
    if (now - last >= STALL_MS) stalls.push({ at: now, ms: now - last });
    last = now;
  }, 10);
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
  const gc = (globalThis as { gc?: () => void }).gc;
  process.on('message', async (order: ServiceOrder) => {
    if (order.kind === 'stats') {
      if (order.gc && gc) {
        // Twice, with a pause between: what is left for finalizers goes in the second.
        gc();
        await new Promise((r) => setTimeout(r, 200));
        gc();
      }
      const mem = process.memoryUsage();
      peakRss = Math.max(peakRss, mem.rss);
      const stats: Stats = {
        kind: 'stats',
        loopP99: loop.percentile(99) / 1e6,
        loopMax: loop.max / 1e6,
        rss: mem.rss,
        peakRss,
        heap: mem.heapUsed,
        forbidden,
        outside,
        stalls: [...stalls],
      };
      if (order.reset) {
        loop.reset();
        stalls.length = 0;
        peakRss = mem.rss;
      }
      process.send!(stats);
    } else {
      clearInterval(sampler);
      clearInterval(ticker);
      loop.disable();
      await svc.close();
      process.send!({ kind: 'stopped' });
      process.disconnect();
    }
  });
  process.send!({ kind: 'started', port: svc.port });
}

// ------------------------------------------------------------------------------------------------------------------
// The probe's side.

interface Answer {
  status: number;
  ms: number;
  body: any;
  text: string;
}
interface Finding {
  what: string;
  op: string;
  detail: string;
}
/** `fetches`: a URL; a job accepted with it runs to its end, so that what it fetches meets the guard. */
type Hostile = { label: string; value: unknown; absurd?: boolean; fetches?: boolean };

async function main(): Promise<void> {
  const began = performance.now();
  const findings: Finding[] = [];
  const stallsSeen: string[] = [];
  const expected: string[] = [];
  /** Hostile URLs answered 2xx in place: stored as given or fetched (the guard notes any forbidden connection). */
  const accepted: string[] = [];
  const note = (what: string, op: string, detail: string) => findings.push({ what, op, detail });
  let requests = 0;
  let slowest = { ms: 0, op: '' };

  // A loopback server that redirects to forbidden addresses, and counts whatever reaches it.
  let redirectHits = 0;
  const redirector = http.createServer((req, res) => {
    redirectHits++;
    const to =
      req.url === '/to-name'
        ? 'http://metadata.probe.invalid/latest/meta-data/'
        : req.url === '/to-mapped'
          ? 'http://[::ffff:169.254.169.254]/'
          : 'http://169.254.169.254/latest/meta-data/';
    res.writeHead(302, { location: to }).end();
  });
  await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
  const redirectPort = (redirector.address() as net.AddressInfo).port;

  const child = fork(fileURLToPath(import.meta.url), ['--service'], {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = <T>(kind: string) =>
    new Promise<T>((resolve) => {
      const on = (m: { kind: string }) => {
        if (m.kind === kind) {
          child.off('message', on);
          resolve(m as T);
        }
      };
      child.on('message', on);
    });
  // The service's process ends with this one, however this one ends.
  process.on('exit', () => child.kill());
  // The child may be killed or crash; the probe should not hang waiting for it.
  child.on('exit', (code) => code && console.error(`service process ended with ${code}`));
  const { port } = await next<{ port: number }>('started');
  const stats = (gc: boolean, reset = false) => {
    const answer = next<Stats>('stats');
    child.send({ kind: 'stats', gc, reset } satisfies ServiceOrder);
    return answer;
  };
  const base = `http://127.0.0.1:${port}`;

  /** One request; JSON bodies given as values or as a ready Buffer. Never throws: a failure is status 0. */
  async function send(method: string, url: string, body?: unknown): Promise<Answer> {
    requests++;
    const t = performance.now();
    const done = (status: number, text: string, json: boolean): Answer => {
      let parsed: unknown = text;
      if (json && text) parsed = JSON.parse(text);
      return { status, ms: performance.now() - t, body: parsed, text };
    };
    // Multipart and small bodies through fetch: a request head over Node's 16 KB limit gets its 431, where
    // node:http's client fails writing the rest of the head.
    const json =
      body === undefined || Buffer.isBuffer(body) || body instanceof FormData ? undefined : JSON.stringify(body);
    if (body instanceof FormData || (!Buffer.isBuffer(body) && (json ?? '').length < 1024 * 1024)) {
      for (let attempt = 1; ; attempt++) {
        try {
          const res = await fetch(base + url, {
            method,
            body: body instanceof FormData ? body : json,
            headers: json === undefined ? {} : { 'content-type': 'application/json' },
            signal: AbortSignal.timeout(TIMEOUT_MS),
          });
          // The live event stream never ends by itself: its status and head are the answer.
          if (url.startsWith('/api/events') && res.headers.get('content-type')?.startsWith('text/event-stream')) {
            await res.body?.cancel();
            return done(res.status, '', false);
          }
          return done(res.status, await res.text(), (res.headers.get('content-type') ?? '').includes('json'));
        } catch (err) {
          // Node's HTTP parser answers a request head over its 16 KB limit with 431 and closes the connection,
          // sometimes before the client has written the head, which then fails: the parser's refusal either way.
          if (Buffer.byteLength(url) > 16 * 1024) return done(431, `head over 16 KB, closed: ${String(err)}`, false);
          // A keep-alive connection the service closed after such a head fails the next request on it: again once.
          if (attempt === 1 && String(err).includes('fetch failed') && !String(err).includes('Timeout')) continue;
          return done(0, String(err), false);
        }
      }
    }
    // JSON through node:http, which takes the answer the service gives (a 413) before the body is all written.
    const payload = Buffer.isBuffer(body) ? body : json === undefined ? undefined : Buffer.from(json);
    return new Promise((resolve) => {
      let answered = false;
      const req = http.request(
        base + url,
        {
          method,
          timeout: TIMEOUT_MS,
          headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {},
        },
        (res) => {
          answered = true;
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            // Answered from its head: the body is not sent.
            if (!req.writableEnded) req.destroy();
            resolve(
              done(
                res.statusCode ?? 0,
                Buffer.concat(chunks).toString('utf8'),
                (res.headers['content-type'] ?? '').includes('json'),
              ),
            );
          });
          res.on('error', (err) => resolve(done(0, String(err), false)));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer in ${TIMEOUT_MS} ms`)));
      req.on('error', (err) => resolve(done(0, String(err), false)));
      // The head first: a body its length makes too large is answered (413) and the connection closed before the
      // body would be read, and writing it then races with that answer. A body the head did not settle follows.
      req.flushHeaders();
      setTimeout(() => {
        if (!answered) req.end(payload);
      }, 100);
    });
  }
  const must = async (method: string, url: string, body?: unknown, ok = [200, 201]) => {
    const a = await send(method, url, body);
    if (!ok.includes(a.status)) throw new Error(`fixture: ${method} ${url} answered ${a.status}: ${a.text}`);
    return a.body;
  };

  // ---- Fixtures: two boards (the second's ids are the "other board's"), media, an html card, projects, presets.
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-probe-'));
  const { makeImage, makeVideo, makeAudio } = await import('../test/helpers/fixtures.js');
  const { sampleProject } = await import('../test/motion/project-builder.js');
  const [png, mp4, wav] = await Promise.all([
    makeImage(path.join(dir, 'pic.png')),
    makeVideo(path.join(dir, 'clip.mp4'), { duration: 1, tone: 440 }),
    makeAudio(path.join(dir, 'tone.wav'), { duration: 1 }),
  ]);
  const upload = async (board: string, name: string, data: Buffer | string) => {
    const form = new FormData();
    form.set('board_id', board);
    form.set('add_to_board', 'true');
    form.set('file', new Blob([typeof data === 'string' ? data : new Uint8Array(data)]), name);
    const a = await send('POST', '/api/upload', form);
    if (a.status !== 200) throw new Error(`fixture upload ${name}: ${a.status} ${a.text}`);
    return a.body.element as { id: string; url: string };
  };
  const board = (await must('POST', '/api/moodboards', { name: 'Probe' })).id as string;
  const other = (await must('POST', '/api/moodboards', { name: 'Other' })).id as string;
  const image = await upload(board, 'pic.png', await fsp.readFile(png));
  const video = await upload(board, 'clip.mp4', await fsp.readFile(mp4));
  const audio = await upload(board, 'tone.wav', await fsp.readFile(wav));
  const card = await upload(board, 'card.html', '<p>card</p>');
  await must('PUT', `/api/moodboards/${board}/elements/${card.id}/html`, { html: '<p>card v2</p>' });
  const aep = await upload(board, 'motion.aep', sampleProject());
  const foreign = await upload(other, 'theirs.png', await fsp.readFile(png));
  const vp = (await must('POST', `/api/moodboards/${board}/video-projects`, { name: 'Cut' })).id as string;
  const projectData = {
    clips: [
      { id: 'cv', mediaType: 'video', url: video.url, duration: 1 },
      { id: 'ci', mediaType: 'image', url: image.url, duration: 1 },
    ],
    channels: [
      {
        id: 'ch',
        visible: true,
        items: [
          { id: 'i1', clipId: 'cv', start: 0, trimStart: 0, trimEnd: 1 },
          { id: 'i2', clipId: 'ci', start: 1, trimStart: 0, trimEnd: 1 },
        ],
      },
    ],
  };
  await must('PUT', `/api/moodboards/${board}/video-projects/${vp}`, { data: projectData });
  const mock = await must('POST', `/api/moodboards/${board}/mockup-projects`, { name: 'Phone', device: 'iphone' });
  const camera = await must('POST', '/api/camera-presets', {
    name: 'Pan',
    duration: 2,
    keyframes: [{ position: 0, properties: { x: '0' } }],
  });
  const motionPreset = await send('POST', '/api/motion/projects/presets', {
    board_id: board,
    element_id: aep.id,
    name: 'Preset',
    composition: 'Main',
    inputs: { textEdits: [{ layer: 'Title', text: 'Hi' }] },
  });
  const sounds = (await send('GET', '/api/sounds')).body;
  const soundName = String((Array.isArray(sounds) ? sounds : (sounds?.sounds ?? []))[0]?.name ?? 'chime');
  const job = await send('POST', '/api/html/render-frame', { html: '<p>x</p>', board_id: board, async: true });
  const jobId = String(job.body?.job_id ?? 'job_none');
  const start = await stats(true, true);
  console.log(
    `fixtures ready in ${((performance.now() - began) / 1000).toFixed(1)} s; service RSS after GC ${(start.rss / MiB).toFixed(0)} MiB`,
  );

  // ---- The hostile values.
  const nested = (depth: number): unknown => {
    let v: unknown = { leaf: 1 };
    for (let i = 0; i < depth; i++) v = { n: v };
    return v;
  };
  const strings: Hostile[] = [
    { label: '100 KB string', value: 'A'.repeat(100_000) },
    { label: '100 KB of é', value: 'é'.repeat(100_000) },
    { label: 'control chars', value: 'a\u0001\u001b[31m\r\n\tb' },
    { label: 'NUL', value: 'a\u0000b' },
    { label: '..', value: '..' },
    { label: '../ path', value: '../../../../etc/passwd' },
    { label: '% escapes', value: '%2e%2e%2f%00%' },
    { label: 'device name', value: 'CON' },
    { label: 'device name .png', value: 'NUL.png' },
    { label: 'device name lower', value: 'lpt1.txt' },
    { label: 'trailing dot and space', value: 'name. ' },
    { label: 'right-to-left override', value: 'gnp.\u202eexe' },
    { label: 'backslashes', value: '..\\..\\windows\\win.ini' },
    { label: 'slash', value: '/' },
    { label: 'lone surrogate', value: '\ud800' },
    { label: 'empty', value: '' },
    { label: 'other board id', value: other },
    { label: "other board's element", value: foreign.id },
  ];
  const urls: Hostile[] = [
    { label: 'metadata IPv4', value: 'http://169.254.169.254/latest/meta-data/', fetches: true },
    { label: 'metadata mapped IPv6', value: 'http://[::ffff:169.254.169.254]/', fetches: true },
    { label: 'link-local IPv6', value: 'http://[fe80::1]/', fetches: true },
    { label: 'metadata hex', value: 'http://0xa9fea9fe/', fetches: true },
    { label: 'metadata Alibaba', value: 'http://100.100.100.200/', fetches: true },
    { label: 'metadata AWS IPv6', value: 'http://[fd00:ec2::254]/', fetches: true },
    { label: 'metadata compatible IPv6', value: 'http://[::a9fe:a9fe]/', fetches: true },
    { label: 'metadata NAT64', value: 'http://[64:ff9b::a9fe:a9fe]/', fetches: true },
    { label: 'metadata decimal', value: 'http://2852039166/', fetches: true },
    { label: 'metadata octal', value: 'http://0251.0376.0251.0376/', fetches: true },
    { label: 'metadata trailing dot', value: 'https://169.254.169.254./', fetches: true },
    { label: 'metadata behind userinfo', value: 'http://127.0.0.1@169.254.169.254/', fetches: true },
    { label: 'metadata upper-case scheme', value: 'HTTP://169.254.169.254/', fetches: true },
    { label: 'data: URL', value: 'data:text/html,<script>alert(1)</script>', fetches: true },
    { label: 'ftp://', value: 'ftp://127.0.0.1/x', fetches: true },
    { label: 'name -> metadata', value: 'http://metadata.probe.invalid/x.png', fetches: true },
    { label: 'redirect -> metadata', value: `http://127.0.0.1:${redirectPort}/to-ip`, fetches: true },
    { label: 'redirect -> name', value: `http://127.0.0.1:${redirectPort}/to-name`, fetches: true },
    { label: 'redirect -> mapped', value: `http://127.0.0.1:${redirectPort}/to-mapped`, fetches: true },
    { label: 'file://', value: 'file:///etc/passwd', fetches: true },
    { label: 'other board media', value: foreign.url, fetches: true },
    { label: 'media ..', value: `/media/${board}/../${other}/${path.basename(foreign.url)}`, fetches: true },
  ];
  // Pages for the HTML routes: what they load goes through the render's sandbox (the browser is offline).
  const pages: Hostile[] = [
    { label: 'page with dialogs', value: '<script>alert(1); confirm("?"); prompt("?")</script>' },
    {
      label: 'page loading metadata',
      value:
        '<img src="http://169.254.169.254/latest/meta-data/"><iframe src="file:///etc/passwd"></iframe>' +
        '<script>fetch("http://[fe80::1]/").catch(() => 0)</script>',
    },
    { label: 'page navigating away', value: '<meta http-equiv="refresh" content="0;url=http://169.254.169.254/">' },
    { label: 'page leaving', value: '<script>onbeforeunload = () => "stay"; location.href = "about:blank"</script>' },
  ];
  const numbers: Hostile[] = [
    { label: '1e6', value: 1e6, absurd: true },
    { label: '1e308', value: 1e308, absurd: true },
    { label: '-1e308', value: -1e308, absurd: true },
    { label: '2^53', value: 2 ** 53, absurd: true },
    { label: '0', value: 0 },
    { label: '-1', value: -1 },
    { label: '0.5', value: 0.5 },
    { label: '1e-308', value: 1e-308 },
    { label: '2^31', value: 2 ** 31, absurd: true },
  ];
  const arrays = (sample: unknown): Hostile[] => [
    { label: '100,000 entries', value: Array(100_000).fill(sample ?? 'x'), absurd: true },
    { label: 'empty array', value: [] },
  ];
  const objects: Hostile[] = [
    { label: 'nested 60 deep', value: nested(60) },
    {
      label: '100,000 keys',
      value: Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i])),
      absurd: true,
    },
  ];
  const forType = (v: unknown, key: string): Hostile[] => {
    if (typeof v === 'string') {
      if (/html/i.test(key)) return [...strings, ...pages];
      return /url|from|path|src|base|zip/i.test(key) || /^\/|^https?:/.test(v) ? [...strings, ...urls] : strings;
    }
    if (typeof v === 'number') return numbers;
    if (Array.isArray(v)) return arrays(v[0]);
    if (v && typeof v === 'object') return objects;
    return [];
  };

  // ---- Base values: what a valid request of each operation holds, from the schema and the fixtures.
  const doc = JSON.parse(fs.readFileSync(new URL('../docs/openapi.json', import.meta.url), 'utf8'));
  const elementFor = (route: string): string => {
    if (/transcribe/.test(route)) return audio.id;
    if (/extract-audio|trim-media|convert-video/.test(route)) return video.id;
    if (/html/.test(route)) return card.id;
    if (/motion/.test(route)) return aep.id;
    return image.id;
  };
  const named = (key: string, route: string): unknown => {
    switch (key) {
      case 'board_id':
      case 'id':
        return board;
      case 'element_id':
      case 'eid':
        return elementFor(route);
      case 'element_ids':
        return [video.id, video.id];
      case 'pid':
        return route.includes('mockup') ? mock.id : vp;
      case 'project_id':
        return mock.id;
      case 'job_id':
        return jobId;
      case 'preset_id':
        return route.includes('camera') ? camera.id : (motionPreset.body?.id ?? 'preset');
      case 'provider':
        return 'openai';
      case 'sound':
        return soundName;
      case 'n':
        return 1;
      case 'url':
        return route.includes('download')
          ? `http://127.0.0.1:${redirectPort}/to-ip`
          : route.includes('motion')
            ? aep.url
            : image.url;
      case 'html':
        return '<p>probe</p>';
      case 'name':
      case 'title':
        return 'probe';
      case 'composition':
        return 'Main';
      case 'data':
        return route.includes('video-projects') ? projectData : { note: 'probe' };
      case 'duration':
      case 'duration_seconds':
        return 1;
    }
    return undefined;
  };
  function sample(schema: any, key: string, route: string, depth = 0): unknown {
    const given = named(key, route);
    if (given !== undefined) return given;
    if (!schema || depth > 6) return 'x';
    if (schema.anyOf ?? schema.oneOf) return sample((schema.anyOf ?? schema.oneOf)[0], key, route, depth + 1);
    if (schema.enum) return schema.enum[0];
    if ('const' in schema) return schema.const;
    switch (schema.type) {
      case 'string':
        return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
      case 'number':
      case 'integer':
        return schema.minimum !== undefined && schema.minimum > 1 ? schema.minimum : 1;
      case 'boolean':
        return false;
      case 'array':
        return Array.from({ length: schema.minItems ?? 0 }, () => sample(schema.items, key, route, depth + 1));
      case 'object': {
        const out: Record<string, unknown> = {};
        for (const k of schema.required ?? []) out[k] = sample(schema.properties?.[k], k, route, depth + 1);
        return out;
      }
    }
    return 'x';
  }
  /** Every place of a body to change: the leaves of the base value and the schema's properties, 80 at most. */
  function places(schema: any, value: unknown, route: string): { at: (string | number)[]; sample: unknown }[] {
    const out: { at: (string | number)[]; sample: unknown }[] = [];
    const visit = (s: any, v: unknown, at: (string | number)[]) => {
      if (out.length >= 80 || at.length > 5) return;
      if (at.length) out.push({ at, sample: v });
      if (Array.isArray(v)) {
        if (v.length) visit(s?.items, v[0], [...at, 0]);
      } else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) visit(s?.properties?.[k], x, [...at, k]);
        for (const [k, ps] of Object.entries<any>(s?.properties ?? {}))
          if (!(k in v)) {
            const x = sample(ps, k, route);
            if (x !== undefined && typeof x !== 'boolean') out.push({ at: [...at, k], sample: x });
          }
      }
    };
    visit(schema, value, []);
    return out;
  }
  const setAt = (value: unknown, at: (string | number)[], leaf: unknown): unknown => {
    if (!at.length) return leaf;
    const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) };
    copy[at[0]] = setAt(copy[at[0]], at.slice(1), leaf);
    return copy;
  };

  const jobs: { op: string; label: string; id: string; absurd: boolean; fetches: boolean; status: string }[] = [];
  /** The durations an answer states for what it accepted (its own, not those it echoes from the request's data). */
  const durations = (v: unknown): number[] =>
    v && typeof v === 'object'
      ? ['duration', 'duration_seconds']
          .map((k) => (v as Record<string, unknown>)[k])
          .filter((d) => typeof d === 'number')
      : [];
  const healthMs: number[] = [];
  /** Every request's time window (epoch ms), to name what a stall of the service's loop happened in. */
  const windows: { from: number; to: number; what: string }[] = [];
  const cost = new Map<string, number>();
  /** Judges one answer. */
  function judge(op: string, label: string, h: Hostile | undefined, a: Answer, sent: string): void {
    if (a.ms > slowest.ms) slowest = { ms: a.ms, op: `${op} [${label}]` };
    const code: unknown = a.body?.error?.code;
    // Documented 5xx that are no fault of the service: a feature left unconfigured (live shares without their
    // worker), and the probe's own redirecting server seen as an upstream by an import, which follows no redirect.
    const documented =
      (a.status === 503 && typeof code === 'string' && code.endsWith('_not_configured')) ||
      (a.status === 502 && code === 'upstream_error' && sent.includes(`127.0.0.1:${redirectPort}`));
    if (documented) expected.push(`${a.status} ${code}  ${op} [${label}]`);
    else if (a.status >= 500 || a.status === 0)
      note(`${a.status || 'no answer'}`, op, `${label}: ${a.text.slice(0, 300)} <- ${sent}`);
    if (a.ms > SLOW_MS) note('slow', op, `${label}: ${a.ms.toFixed(0)} ms (${a.status})`);
    if (a.status >= 200 && a.status < 300) {
      const id = a.body?.job_id ?? a.body?.jobId;
      if (typeof id === 'string') jobs.push({ op, label, id, absurd: !!h?.absurd, fetches: !!h?.fetches, status: '?' });
      else if (h?.absurd && /^(POST|PUT|PATCH)/.test(op) && Array.isArray(h.value))
        note('absurd stored', op, `${label} accepted (${a.status})`);
      if (h?.fetches && typeof id !== 'string') accepted.push(`${a.status} ${op} [${label}]`);
      const long = durations(a.body).filter((d) => d > 43_200);
      if (long.length) note('absurd stored', op, `${label}: answer holds a duration of ${long[0]} s`);
    }
  }
  let sinceHealth = 0;
  async function probe(op: string, label: string, h: Hostile | undefined, method: string, url: string, body?: unknown) {
    const from = Date.now();
    const a = await send(method, url, body);
    windows.push({ from, to: Date.now(), what: `${op} [${label}] ${a.status}` });
    const kind = label.replace(/^[^=]*=/, '');
    cost.set(kind, (cost.get(kind) ?? 0) + a.ms);
    const sent = body instanceof FormData ? '(multipart)' : JSON.stringify(body ?? null).slice(0, 200);
    const queued = jobs.length;
    judge(op, label, h, a, sent);
    // A job accepted is looked at and cancelled at once, so that the walk's jobs do not run under the rest of it;
    // one given a URL first runs to its end (15 s at most), so that its fetches meet the guard.
    if (jobs.length > queued) {
      const j = jobs[jobs.length - 1];
      const until = Date.now() + (h?.fetches ? 15_000 : 0);
      for (;;) {
        const state = (await send('GET', `/api/jobs/${j.id}`)).body;
        j.status = `${state?.status ?? '?'}${state?.error_code ? ` ${state.error_code}` : ''}`;
        if (!['queued', 'running'].includes(state?.status) || Date.now() > until) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      if (h?.fetches && j.status === 'complete' && /^(file|ftp|data):/.test(String(h.value)))
        note('fetched', op, `${label}: job ${j.id} completed`);
      await send('POST', `/api/jobs/${j.id}/cancel`);
    }
    if (++sinceHealth >= 25) {
      sinceHealth = 0;
      const health = await send('GET', '/api/health');
      healthMs.push(health.ms);
    }
    return a;
  }

  // ---- The walk. DELETE last, so the fixtures stay for every other operation; the boards' own DELETE last of all.
  const ops: { method: string; route: string; op: any }[] = [];
  for (const [route, methods] of Object.entries<any>(doc.paths))
    for (const [method, op] of Object.entries<any>(methods)) ops.push({ method: method.toUpperCase(), route, op });
  const rank = (o: { method: string; route: string }) =>
    o.method !== 'DELETE' ? 0 : o.route === '/api/moodboards/{id}' ? 2 : 1;
  ops.sort((a, b) => rank(a) - rank(b));
  const walkEnds = performance.now() + BUDGET_MS;
  let operations = 0;
  let stopped = '';
  for (const { method, route, op } of ops) {
    if (performance.now() > walkEnds || requests > MAX_REQUESTS) {
      stopped = `stopped at ${method} ${route}: ${performance.now() > walkEnds ? 'time budget' : 'request budget'} reached`;
      break;
    }
    operations++;
    const name = `${method} ${route}`;
    const params: any[] = op.parameters ?? [];
    const pathValues: Record<string, unknown> = {};
    const query: Record<string, unknown> = {};
    for (const p of params) {
      const v = p.name === '*' ? image.url.replace(/^\/media\//, '') : sample(p.schema, p.name, route);
      if (p.in === 'path') pathValues[p.name] = v;
      // `wait` is a documented long poll (up to 60 s): the base asks for none.
      else if (p.name === 'wait') query.wait = 0;
      else if (p.in === 'query' && (p.required || ['board_id', 'element_id'].includes(p.name))) query[p.name] = v;
    }
    // A lone surrogate has no UTF-8 form: it goes as the bytes its UTF-16 would give, which are not UTF-8 either.
    const encode = (v: string) => (v === '\ud800' ? '%ED%A0%80' : encodeURIComponent(v));
    const url = (pv: Record<string, unknown>, q: Record<string, unknown>, raw = false) => {
      let u = route.replace(/\{([^}]+)\}/g, (_, k: string) =>
        k === '*' || raw ? String(pv[k]) : encode(String(pv[k])),
      );
      const qs = new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)])).toString();
      if (qs) u += `?${qs}`;
      return u;
    };
    const schema = op.requestBody?.content?.['application/json']?.schema;
    // Work that can be a job is asked as one: what the probe judges is what is accepted, not how long a render takes.
    const body = schema ? sample(schema, '', route) : undefined;
    if (schema?.properties?.async && body && typeof body === 'object') (body as Record<string, unknown>).async = true;
    // Path and query parameters, the body kept valid.
    for (const p of params) {
      const kind = p.schema?.type === 'integer' || p.schema?.type === 'number' ? 1 : 'x';
      const values =
        p.name === '*'
          ? [...strings, ...urls]
          : p.name === 'wait'
            ? numbers.filter((h) => (h.value as number) < 1)
            : forType(kind, p.name);
      for (const h of values) {
        if (p.in === 'path') {
          const v = String(h.value);
          await probe(
            name,
            `${p.name}=${h.label}`,
            h,
            method,
            url({ ...pathValues, [p.name]: v }, query, p.name === '*'),
            body,
          );
        } else if (p.in === 'query')
          await probe(name, `?${p.name}=${h.label}`, h, method, url(pathValues, { ...query, [p.name]: h.value }), body);
      }
    }
    if (route === '/api/upload') {
      // Multipart: the file's name, the board and the element data.
      for (const h of [...strings, { label: '100 KB name .png', value: `${'A'.repeat(102_400)}.png` }]) {
        const form = new FormData();
        form.set('board_id', board);
        form.set('add_to_board', 'true');
        form.set('file', new Blob(['pixels']), String(h.value));
        await probe(name, `filename=${h.label}`, h, method, url(pathValues, query), form);
        const byBoard = new FormData();
        byBoard.set('board_id', String(h.value));
        byBoard.set('file', new Blob(['pixels']), 'x.png');
        await probe(name, `board_id=${h.label}`, h, method, url(pathValues, query), byBoard);
      }
      for (const h of objects) {
        const form = new FormData();
        form.set('board_id', board);
        form.set('add_to_board', 'true');
        form.set('data', JSON.stringify(h.value));
        form.set('file', new Blob(['pixels']), 'x.png');
        await probe(name, `data=${h.label}`, h, method, url(pathValues, query), form);
      }
      continue;
    }
    if (method === 'PUT' && route.endsWith('/output')) continue; // a raw body: the query parameters above cover it
    // The body, one place at a time.
    if (body !== undefined) {
      for (const place of places(schema, body, route)) {
        for (const h of forType(place.sample, String(place.at.at(-1)))) {
          await probe(
            name,
            `${place.at.join('.')}=${h.label}`,
            h,
            method,
            url(pathValues, query),
            setAt(body, place.at, h.value),
          );
          // A URL also goes to the route's answer in place (`async: false`), where the fetch is the request's own.
          if (h.fetches && (body as Record<string, unknown>).async === true)
            await probe(
              name,
              `${place.at.join('.')}=${h.label}, sync`,
              h,
              method,
              url(pathValues, query),
              setAt({ ...(body as object), async: false }, place.at, h.value),
            );
          if (performance.now() > walkEnds) break;
        }
      }
    }
  }

  // ---- Whole-body attacks.
  const projectUrl = `/api/moodboards/${board}/video-projects/${vp}`;
  const items = (n: number, extra: object = {}) =>
    Array.from({ length: n }, (_, i) => ({ id: `i${i}`, clipId: 'ci', start: i, trimEnd: 1, ...extra }));
  const whole: [string, string, string, unknown, Hostile][] = [
    [
      'PATCH',
      `/api/moodboards/${board}`,
      '32 MB name',
      Buffer.from(`{"name":"${'x'.repeat(32_000_000)}"}`),
      { label: '32 MB', value: 0 },
    ],
    [
      'PUT',
      projectUrl,
      '32 MB project',
      Buffer.from(`{"data":{"notes":"${'x'.repeat(32_000_000)}"}}`),
      { label: '32 MB', value: 0 },
    ],
    [
      'PUT',
      projectUrl,
      '100,000 items',
      { data: { ...projectData, channels: [{ id: 'ch', items: items(100_000) }] } },
      { label: '100,000 items', value: [], absurd: true },
    ],
    [
      'PUT',
      projectUrl,
      '100,000 channels',
      { data: { ...projectData, channels: Array.from({ length: 100_000 }, (_, i) => ({ id: `c${i}`, items: [] })) } },
      { label: '100,000 channels', value: [], absurd: true },
    ],
    [
      'PUT',
      projectUrl,
      '100,000 clips',
      {
        data: {
          ...projectData,
          clips: Array.from({ length: 100_000 }, (_, i) => ({ id: `c${i}`, url: image.url, duration: 1 })),
        },
      },
      { label: '100,000 clips', value: [], absurd: true },
    ],
    [
      'PUT',
      projectUrl,
      'still trimmed to 1e6 s',
      { data: { ...projectData, channels: [{ id: 'ch', items: items(1, { trimEnd: 1e6 }) }] } },
      { label: 'trimEnd 1e6', value: 1e6, absurd: true },
    ],
    [
      'PUT',
      projectUrl,
      'item starting at 1e308',
      { data: { ...projectData, channels: [{ id: 'ch', items: items(1, { start: 1e308 }) }] } },
      { label: 'start 1e308', value: 1e308, absurd: true },
    ],
    [
      'PUT',
      projectUrl,
      'item lasting a 1e6 s clip',
      {
        data: {
          clips: [{ id: 'long', mediaType: 'video', url: video.url, duration: 1e6 }],
          channels: [{ id: 'ch', items: [{ id: 'i', clipId: 'long' }] }],
        },
      },
      { label: 'clip duration 1e6', value: 1e6, absurd: true },
    ],
    [
      'POST',
      `/api/moodboards/${board}/elements`,
      '8 MiB of [0]',
      Buffer.from(`{"type":"image","url":"${image.url}","data":{"a":[${Array(2_000_000).fill('[0]').join(',')}]}}`),
      { label: '2M values', value: [], absurd: true },
    ],
    [
      'POST',
      '/api/moodboards',
      'nested 100,000 deep',
      Buffer.from(`{"name":"x","d":${'['.repeat(100_000)}${']'.repeat(100_000)}}`),
      { label: 'deep', value: 0 },
    ],
  ];
  for (const [method, url, label, body, h] of whole) {
    const a = await probe(`${method} ${url.replace(board, '{id}').replace(vp, '{pid}')}`, label, h, method, url, body);
    // (An absurd array accepted is noted by judge already.)
    if (a.status >= 200 && a.status < 300 && h.absurd && !Array.isArray(h.value))
      note('absurd stored', `${method} ${url}`, `${label} accepted (${a.status})`);
  }
  // A render of whatever the last accepted state is: it must not be an absurd one.
  await probe(`POST ${projectUrl}/render`, 'render after the attacks', undefined, 'POST', `${projectUrl}/render`, {});
  // A project keeps its clips' URLs as given: a render of one whose clip is a hostile URL, run to its end.
  for (const h of urls) {
    const data = {
      clips: [{ id: 'u', mediaType: 'video', url: h.value, duration: 1 }],
      channels: [{ id: 'ch', items: [{ id: 'i', clipId: 'u', trimEnd: 1 }] }],
    };
    if ((await send('PUT', projectUrl, { data })).status !== 200) continue;
    const op = 'POST /api/moodboards/{id}/video-projects/{pid}/render';
    await probe(op, `clip url=${h.label}`, h, 'POST', `${projectUrl}/render`, {});
  }

  for (const j of jobs.filter((x) => x.absurd)) note('absurd job', j.op, `${j.label} queued job ${j.id} (${j.status})`);

  // ---- Memory and the loop: after every job settled, and a full collection.
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const list = await send('GET', '/api/jobs?limit=200');
    const open =
      (list.body?.jobs ?? list.body ?? []).filter?.((x: any) => ['queued', 'running'].includes(x.status)) ?? [];
    if (!open.length) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const end = await stats(true);
  for (const f of end.forbidden) note('link-local fetch', '(service socket)', f);
  for (const f of end.outside) note('left loopback', '(service socket)', f);
  for (const stall of end.stalls) {
    const during = windows.filter((w) => w.from <= stall.at && w.to >= stall.at - stall.ms).map((w) => w.what);
    const line = `${stall.ms} ms, during ${during.join('; ') || 'no request of the probe'}`;
    if (stall.ms > SLOW_MS) note('loop stall', '(service loop)', line);
    else stallsSeen.push(line);
  }
  healthMs.sort((a, b) => a - b);
  const healthMax = healthMs.at(-1) ?? 0;
  if (healthMax > SLOW_MS) note('slow health', 'GET /api/health', `${healthMax.toFixed(0)} ms`);
  if (end.rss > start.rss + RSS_SLACK)
    note('memory', '(service)', `RSS ${(start.rss / MiB).toFixed(0)} -> ${(end.rss / MiB).toFixed(0)} MiB after GC`);

  child.send({ kind: 'stop' } satisfies ServiceOrder);
  await next('stopped');
  redirector.close();
  await fsp.rm(dir, { recursive: true, force: true });

  // ---- The report.
  console.log(`\n5xx answers documented as such (not defects): ${expected.length}`);
  for (const line of expected.slice(0, 10)) console.log(`  ${line}`);
  const urlJobs = jobs.filter((j) => j.fetches);
  console.log(`\nJobs accepted with a hostile URL, run to their end: ${urlJobs.length}`);
  for (const j of urlJobs.slice(0, 40)) console.log(`  ${j.status.padEnd(28)} ${j.op} [${j.label}]`);
  console.log(`\nHostile URLs answered 2xx in place: ${accepted.length}`);
  for (const line of accepted.slice(0, 40)) console.log(`  ${line}`);
  console.log(`\nStalls of the service's loop from ${STALL_MS} ms to ${SLOW_MS} ms: ${stallsSeen.length}`);
  for (const line of stallsSeen.slice(0, 15)) console.log(`  ${line}`);
  console.log('\nWhere the walk spent its time (hostile value: total answer time):');
  for (const [kind, ms] of [...cost].sort((a, b) => b[1] - a[1]).slice(0, 8))
    console.log(`  ${kind.padEnd(32)} ${(ms / 1000).toFixed(1)} s`);
  const byKind = new Map<string, Finding[]>();
  for (const f of findings) byKind.set(f.what, [...(byKind.get(f.what) ?? []), f]);
  console.log('\nFindings:');
  if (!findings.length) console.log('  none');
  for (const [kind, list] of byKind) {
    console.log(`  ${kind}: ${list.length}`);
    for (const f of list.slice(0, 25)) console.log(`    ${f.op}  ${f.detail}`);
    if (list.length > 25) console.log(`    ... and ${list.length - 25} more`);
  }
  const row = (k: string, v: string) => console.log(`  ${k.padEnd(32)} ${v}`);
  console.log('\nSummary:');
  row('operations walked', `${operations} of ${ops.length}${stopped ? ` (${stopped})` : ''}`);
  row('requests', String(requests));
  row('5xx / no answer', String(findings.filter((f) => /^\d|no answer/.test(f.what)).length));
  row('slowest answer', `${slowest.ms.toFixed(0)} ms (${slowest.op})`);
  row('answers over 1 s', String(byKind.get('slow')?.length ?? 0));
  row(
    'health checks',
    `${healthMs.length}, median ${(healthMs[healthMs.length >> 1] ?? 0).toFixed(1)} ms, max ${healthMax.toFixed(1)} ms`,
  );
  row('service loop delay', `p99 ${end.loopP99.toFixed(1)} ms, max ${end.loopMax.toFixed(1)} ms`);
  row('jobs accepted (all cancelled)', `${jobs.length}, absurd ${byKind.get('absurd job')?.length ?? 0}`);
  row('absurd state accepted', String(byKind.get('absurd stored')?.length ?? 0));
  row('link-local connections', String(end.forbidden.length));
  row('redirect server hits', String(redirectHits));
  row(
    'service RSS start/peak/end',
    `${(start.rss / MiB).toFixed(0)} / ${(end.peakRss / MiB).toFixed(0)} / ${(end.rss / MiB).toFixed(0)} MiB (end after GC)`,
  );
  row('service heap start/end', `${(start.heap / MiB).toFixed(0)} / ${(end.heap / MiB).toFixed(0)} MiB (after GC)`);
  row('run time', `${((performance.now() - began) / 1000).toFixed(0)} s`);
  process.exit(findings.length ? 1 : 0);
}
