// Outbound fetch benchmark: a body streamed from a local server into a file, through Node's fetch (what downloads
// used before the address policy) and through OutboundHttp (node:http with the policy's look-up), then a whole
// POST /api/download of the same body.
// Usage: npx tsx bench/outbound.bench.ts [--mb 256] [--runs 5]
import fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { streamToFile } from '../src/media/download.js';
import { OutboundHttp } from '../src/net/outbound.js';
import { startService } from '../test/helpers/service.js';
import { tempDir } from '../test/helpers/fixtures.js';

const { values: opt } = parseArgs({
  options: { mb: { type: 'string', default: '256' }, runs: { type: 'string', default: '5' } },
});
const BYTES = Number(opt.mb) * 1024 * 1024;
const RUNS = Number(opt.runs);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// An mp4-looking head so the download pipeline types it, then zeros in 1 MiB writes.
const head = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom'), Buffer.alloc(12)]);
const chunk = Buffer.alloc(1024 * 1024);
const server = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': BYTES });
  res.write(head);
  let left = BYTES - head.length;
  const push = () => {
    while (left > 0) {
      const piece = chunk.subarray(0, Math.min(chunk.length, left));
      left -= piece.length;
      if (!res.write(piece)) return void res.once('drain', push);
    }
    res.end();
  };
  push();
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/clip.mp4`);
const work = await tempDir('bms-bench-outbound-');
const outbound = new OutboundHttp();

async function rate(label: string, fetchOnce: () => Promise<Response>): Promise<void> {
  const mbps: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const file = path.join(work, `${label}-${i}`);
    const t0 = performance.now();
    await streamToFile(await fetchOnce(), file, BYTES, AbortSignal.timeout(120_000));
    mbps.push(BYTES / 1024 / 1024 / ((performance.now() - t0) / 1000));
    await fsp.rm(file);
  }
  console.log(
    `${label.padEnd(34)} median ${median(mbps).toFixed(0)} MB/s  (${mbps.map((m) => m.toFixed(0)).join(', ')})`,
  );
}

console.log(`${opt.mb} MiB body over loopback, ${RUNS} runs each`);
await rate('fetch (before)', () => fetch(url));
await rate('OutboundHttp.get (the policy)', () => outbound.get(url));

const t = await startService({ DOWNLOAD_MAX_BYTES: String(BYTES * 2) });
try {
  const board = await t.createBoard();
  const secs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const res = await t.api('POST', '/api/download', { board_id: board, url: url.href });
    if (res.status !== 200) throw new Error(res.text);
    secs.push((performance.now() - t0) / 1000);
  }
  console.log(
    `${'POST /api/download (whole request)'.padEnd(34)} median ${(BYTES / 1024 / 1024 / median(secs)).toFixed(0)} MB/s`,
  );
} finally {
  await t.close();
  outbound.close();
  server.close();
  await fsp.rm(work, { recursive: true, force: true });
}
