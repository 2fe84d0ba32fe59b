/**
 * GET /media/<board>/<file> beside nginx, on the same file in one run, driven by wrk over loopback.
 *
 * Starts Debian's nginx (`sendfile on`, `tcp_nopush off`, config written to a temp folder, a free loopback port) and
 * the service, uploads a file of SIZE_MIB (1 GiB by default) to a board with curl and PUTs the same file to nginx
 * (WebDAV, which buffers the body to its client_body temp file first), then serves that one file from both:
 *   - whole-file GET with 1 and 4 connections (MB/s);
 *   - random 64 KiB ranges on keep-alive connections, 16 at once (req/s, p50, p99), then on one connection, where a
 *     median near 40 ms would be the delayed-ACK stall of responses split in two writes with Nagle on;
 *   - the service's RSS before, during and after (memory flat);
 *   - for the ranges, Node's own ceiling beside them: a bare node:http server (a child process, no framework) that
 *     answers each range with a sync read of the same file, and one that answers a 64 KiB buffer it holds, no file
 *     at all. No Node server can answer faster than the latter on this machine: the ratio ours/nginx is bounded by it.
 * Each phase warms both up with one unmeasured run, then alternates nginx and ours three times. Prints the figures and ours/nginx ratios. Needs `nginx`, `wrk` and `curl` on PATH.
 *
 *   npx tsx bench/serving-nginx.bench.ts [--quick]   (--quick: 256 MiB, 2 s per run)
 *   SERVING_BENCH_LOG=info   log every request as a default install does (default: no logging, like the tests)
 */
import { execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { startService } from '../test/helpers/service.js';

const run = promisify(execFile);
const quick = process.argv.includes('--quick');
const SIZE_MIB = quick ? 256 : 1024;
const SECONDS = quick ? 2 : 4;
const ROUNDS = 3;
const RANGE = 64 * 1024;
const MiB = 1024 * 1024;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, deadlineMs = 10_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nothing listens on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function nginxConfig(dir: string, port: number, root: string): string {
  return `daemon off;
master_process on;
worker_processes auto;
user root;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush off;
  tcp_nodelay on;
  keepalive_requests 1000000;
  default_type application/octet-stream;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
    location /files/ { alias ${root}/; }
    location /put/ { alias ${dir}/put/; dav_methods PUT; client_max_body_size 0; }
  }
}
`;
}

/** wrk's Lua: random 64 KiB ranges of a file of `size` bytes; prints one JSON line with the summary. */
function rangeScript(size: number): string {
  return `
local size, len = ${size}, ${RANGE}
local counter = 0
function setup(thread) counter = counter + 1; thread:set("seed", counter) end
function init(args) math.randomseed(os.time() * 1000 + seed) end
function request()
  local start = math.random(0, math.floor((size - len) / len)) * len + math.random(0, len - 1)
  if start > size - len then start = size - len end
  return wrk.format("GET", nil, { Range = "bytes=" .. start .. "-" .. (start + len - 1) })
end
${SUMMARY_LUA}`;
}

const SUMMARY_LUA = `
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"bytes":%d,"us":%d,"p50":%d,"p99":%d,"p999":%d,"max":%d,"errors":%d,"status":%d}\\n',
    summary.requests, summary.bytes, summary.duration, latency:percentile(50), latency:percentile(99), latency:percentile(99.9),
    latency.max, e.connect + e.read + e.write + e.timeout, e.status))
end`;

interface WrkResult {
  requests: number;
  bytes: number;
  us: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  errors: number;
  status: number;
}

async function wrk(url: string, connections: number, script: string): Promise<WrkResult> {
  const threads = Math.min(connections, 2);
  const { stdout } = await run(
    'wrk',
    ['-t', String(threads), '-c', String(connections), '-d', `${SECONDS}s`, '--timeout', '60s', '-s', script, url],
    {
      timeout: (SECONDS + 90) * 1000,
      maxBuffer: 1024 * 1024,
    },
  );
  const line = stdout.split('\n').find((l) => l.startsWith('{"requests"'));
  if (!line) throw new Error(`wrk printed no summary: ${stdout}`);
  return JSON.parse(line) as WrkResult;
}

async function curlSpeed(args: string[]): Promise<{ status: number; mbps: number }> {
  const { stdout } = await run('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code} %{speed_upload}', ...args], {
    timeout: 600_000,
  });
  const [status, speed] = stdout.trim().split(' ').map(Number);
  return { status, mbps: speed / 1e6 };
}

const rssMiB = () => process.memoryUsage().rss / MiB;

/**
 * Node's own ceiling for 64 KiB ranges: node:http and nothing else. `/file` answers the range with a sync read of the
 * file (what a minimal correct server does), `/buffer` answers 64 KiB it holds in memory (no file work at all).
 */
const BARE_NODE = `
const http = require('node:http'), fs = require('node:fs');
const [file, port] = process.argv.slice(1);
const size = fs.statSync(file).size, held = Buffer.alloc(${RANGE}, 1);
http.createServer((req, res) => {
  const m = /^bytes=(\\d+)-(\\d+)$/.exec(req.headers.range || '');
  const start = Number(m[1]), len = Number(m[2]) - start + 1;
  let body = held;
  if (req.url === '/file') {
    const fd = fs.openSync(file, 'r');
    body = Buffer.allocUnsafe(len);
    fs.readSync(fd, body, 0, len, start);
    fs.closeSync(fd);
  }
  res.writeHead(206, { 'content-type': 'application/octet-stream', 'content-length': len,
    'content-range': 'bytes ' + start + '-' + (start + len - 1) + '/' + size, 'accept-ranges': 'bytes' });
  res.end(body);
}).listen(Number(port), '127.0.0.1');
`;

/** CPU time (µs) a process and its children used so far, from /proc (USER_HZ is 100 on Linux). */
function treeCpuUs(master: number): number {
  let ticks = 0;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (pid === String(master) || fields[1] === String(master)) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * 10_000;
}
const f = (n: number, d = 0) => n.toFixed(d);

async function main(): Promise<void> {
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-bench-nginx-'));
  const logLevel = process.env.SERVING_BENCH_LOG;
  const nullLog = new Writable({ write: (_c, _e, cb) => cb() });
  const svc = await startService(
    { MAX_UPLOAD_BYTES: String((SIZE_MIB + 1) * MiB), ...(logLevel ? { LOG_LEVEL: logLevel } : {}) },
    logLevel ? { logStream: nullLog } : {},
  );
  let nginx: ReturnType<typeof spawn> | undefined;
  let bare: ReturnType<typeof spawn> | undefined;
  try {
    const source = path.join(work, 'big.bin');
    const block = crypto.randomBytes(MiB);
    const fd = fs.openSync(source, 'w');
    for (let i = 0; i < SIZE_MIB; i++) fs.writeSync(fd, block);
    fs.closeSync(fd);

    await fsp.mkdir(path.join(work, 'put'));
    const port = await freePort();
    const board = await svc.createBoard('bench');
    const boardDir = await svc.service.ctx.media.boardDir(board);
    await fsp.writeFile(path.join(work, 'nginx.conf'), nginxConfig(work, port, boardDir));
    nginx = spawn('nginx', ['-c', path.join(work, 'nginx.conf'), '-p', work, '-e', path.join(work, 'error.log')], {
      stdio: 'ignore',
    });
    await waitForPort(port);

    console.log(
      `file ${SIZE_MIB} MiB, ${SECONDS} s per phase, ${os.cpus().length} cores, logging ${logLevel ?? 'off'}, ${process.version}, load average ${os.loadavg()[0].toFixed(1)}`,
    );

    // Uploads: the service parses multipart and streams the part to disk; nginx writes the PUT body to its temp file.
    const up = await curlSpeed([
      '-F',
      `board_id=${board}`,
      '-F',
      `file=@${source};filename=big.bin`,
      `${svc.baseUrl}/api/upload`,
    ]);
    const upNginx = await curlSpeed(['-T', source, `http://127.0.0.1:${port}/put/big.bin`]);
    if (up.status !== 200 || upNginx.status >= 300)
      throw new Error(`uploads answered ${up.status} / ${upNginx.status}`);
    const fileName = (await fsp.readdir(boardDir)).find((n) => n.startsWith('big'));
    if (!fileName) throw new Error('the upload is not in the board folder');
    const ours = `${svc.baseUrl}/media/${board}/${encodeURIComponent(fileName)}`;
    const barePort = await freePort();
    bare = spawn(process.execPath, ['-e', BARE_NODE, path.join(boardDir, fileName), String(barePort)], {
      stdio: 'ignore',
    });
    await waitForPort(barePort);
    const bareUrl = `http://127.0.0.1:${barePort}`;
    const theirs = `http://127.0.0.1:${port}/files/${encodeURIComponent(fileName)}`;
    console.log(
      `upload       ours ${f(up.mbps)} MB/s   nginx ${f(upNginx.mbps)} MB/s   ratio ${f(up.mbps / upNginx.mbps, 2)}`,
    );

    const whole = path.join(work, 'whole.lua');
    await fsp.writeFile(whole, SUMMARY_LUA);
    const ranges = path.join(work, 'ranges.lua');
    await fsp.writeFile(ranges, rangeScript(SIZE_MIB * MiB));
    // Warm the page cache with one read of the file.
    await run('curl', ['-s', '-o', '/dev/null', theirs], { timeout: 120_000 });

    // Each phase alternates short runs of nginx and ours (ROUNDS each): on a shared machine the load moves within
    // seconds, and interleaving gives both the same share of it.
    const rss0 = rssMiB();
    let rssMax = rss0;
    // CPU time per request (ours: this process, which runs the service; nginx: its processes) shows the cost of an
    // answer apart from the share of a busy machine each side happened to get.
    const phase = async (label: string, c: number, script: string, withBare = false) => {
      const o: WrkResult[] = [];
      const n: WrkResult[] = [];
      const bf: WrkResult[] = [];
      const bb: WrkResult[] = [];
      let cpuOurs = 0;
      let cpuNginx = 0;
      let cpuBare = 0;
      // One unmeasured run each first: the service's code for this kind of request is compiled by V8 while it runs,
      // which on a loaded machine takes seconds (the first range phase cost twice the CPU per request of a later one).
      await wrk(theirs, c, script);
      await wrk(ours, c, script);
      for (let i = 0; i < ROUNDS; i++) {
        const n0 = treeCpuUs(nginx!.pid!);
        n.push(await wrk(theirs, c, script));
        cpuNginx += treeCpuUs(nginx!.pid!) - n0;
        const o0 = process.cpuUsage();
        o.push(await wrk(ours, c, script));
        const used = process.cpuUsage(o0);
        cpuOurs += used.user + used.system;
        rssMax = Math.max(rssMax, rssMiB());
        if (withBare) {
          const b0 = treeCpuUs(bare!.pid!);
          bf.push(await wrk(`${bareUrl}/file`, c, script));
          cpuBare += treeCpuUs(bare!.pid!) - b0;
          bb.push(await wrk(`${bareUrl}/buffer`, c, script));
        }
      }
      for (const r of [...o, ...n, ...bf, ...bb])
        if (r.errors || r.status) throw new Error(`${label}: errors ${JSON.stringify(r)}`);
      const sum = (rs: WrkResult[], k: 'requests' | 'bytes' | 'us') => rs.reduce((a, r) => a + r[k], 0);
      const worst = (rs: WrkResult[], k: 'p50' | 'p99' | 'max') => Math.max(...rs.map((r) => r[k])) / 1000;
      const median = (rs: WrkResult[], k: 'p50' | 'p99') =>
        rs.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(rs.length / 2)] / 1000;
      const load = os.loadavg()[0].toFixed(1);
      const per = (cpu: number, rs: WrkResult[], unit: 'req' | 'MiB') =>
        unit === 'req'
          ? `${f(cpu / sum(rs, 'requests'))} µs/request`
          : `${f(cpu / 1000 / (sum(rs, 'bytes') / MiB), 2)} ms/MiB`;
      const cpu = (unit: 'req' | 'MiB') =>
        `  cpu   ours ${per(cpuOurs, o, unit)}, nginx ${per(cpuNginx, n, unit)} (load average ${load})`;
      return { o, n, bf, bb, cpuBare, sum, worst, median, cpu };
    };
    for (const c of [1, 4]) {
      const { o, n, sum, cpu } = await phase(`whole file, ${c} conn`, c, whole);
      const mb = (rs: WrkResult[]) => sum(rs, 'bytes') / sum(rs, 'us'); // bytes per µs = MB/s
      console.log(
        `whole file, ${c} conn   ours ${f(mb(o))} MB/s   nginx ${f(mb(n))} MB/s   ratio ${f(mb(o) / mb(n), 2)}`,
      );
      console.log(cpu('MiB'));
    }
    for (const c of [16, 1]) {
      const { o, n, bf, bb, cpuBare, sum, worst, median, cpu } = await phase(`ranges, ${c} conn`, c, ranges, true);
      const rps = (rs: WrkResult[]) => sum(rs, 'requests') / (sum(rs, 'us') / 1e6);
      const lat = (rs: WrkResult[]) =>
        `p50 ${f(median(rs, 'p50'), 2)} p99 ${f(median(rs, 'p99'), 2)} ms (median of runs), worst p99 ${f(worst(rs, 'p99'), 2)} max ${f(worst(rs, 'max'), 1)} ms`;
      console.log(`64 KiB ranges, ${c} conn`);
      console.log(`  ours  ${f(rps(o))} req/s  ${lat(o)}`);
      console.log(`  nginx ${f(rps(n))} req/s  ${lat(n)}`);
      console.log(`  ratio ${f(rps(o) / rps(n), 2)}`);
      console.log(cpu('req'));
      console.log(
        `  bare node:http, sync read   ${f(rps(bf))} req/s  ${lat(bf)}; ${f(cpuBare / sum(bf, 'requests'))} µs/request`,
      );
      console.log(`  bare node:http, held buffer ${f(rps(bb))} req/s  ${lat(bb)}`);
      console.log(
        `  Node's ceiling/nginx ${f(rps(bb) / rps(n), 2)}; ours/bare sync read ${f(rps(o) / rps(bf), 2)}, ours/held buffer ${f(rps(o) / rps(bb), 2)}`,
      );
      // A response written in two segments with Nagle on waits for the client's delayed ACK (40 ms on Linux), on
      // every request of a keep-alive connection: it shows in the median. Slow tails alone, which nginx has as well
      // on a loaded machine, are scheduling.
      if (c === 1) {
        const stalled = median(o, 'p50') >= 35;
        console.log(
          `  delayed-ACK check (1 keep-alive connection): ours median p50 ${f(median(o, 'p50'), 2)} ms, ${stalled ? 'STALLS: look at Nagle/corking' : 'no 40 ms stalls'}`,
        );
      }
    }
    console.log(
      `service rss: ${f(rss0)} MiB before the GET phases, at most ${f(rssMax)} MiB during them, ${f(rssMiB())} MiB after`,
    );
  } finally {
    if (nginx && nginx.exitCode === null) {
      nginx.kill('SIGQUIT');
      await new Promise((r) => nginx!.once('exit', r));
    }
    bare?.kill();
    await svc.close();
    await fsp.rm(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
