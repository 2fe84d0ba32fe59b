// Media serving throughput, range-request latency and upload throughput against a large file on a real service.
// Usage: npx tsx bench/serving.bench.ts [sizeMiB=512] [ranges=2000]
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startService } from '../test/helpers/service.js';

const sizeMiB = Number(process.argv[2] ?? 512);
const rangeCount = Number(process.argv[3] ?? 2000);
const MiB = 1024 * 1024;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** GETs a path and counts the bytes without keeping them. */
function drain(port: number, p: string, headers: Record<string, string> = {}, agent?: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: p, headers, agent }, (res) => {
        let n = 0;
        res.on('data', (c: Buffer) => (n += c.length));
        res.on('end', () => resolve(n));
      })
      .on('error', reject);
  });
}

function uploadStreaming(port: number, board: string, file: string): Promise<{ url: string }> {
  const boundary = `bench${crypto.randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="board_id"\r\n\r\n${board}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/upload',
        headers: {
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': head.length + fs.statSync(file).size + tail.length,
        },
      },
      (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () =>
          res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(new Error(`${res.statusCode} ${body}`)),
        );
      },
    );
    req.on('error', reject);
    req.write(head);
    const stream = fs.createReadStream(file);
    stream.on('end', () => req.end(tail));
    stream.pipe(req, { end: false });
  });
}

async function main(): Promise<void> {
  const svc = await startService({ MAX_UPLOAD_BYTES: String((sizeMiB + 1) * MiB) });
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-bench-'));
  try {
    const board = await svc.createBoard('bench');
    const source = path.join(work, 'big.bin');
    const block = crypto.randomBytes(MiB);
    const fd = fs.openSync(source, 'w');
    for (let i = 0; i < sizeMiB; i++) fs.writeSync(fd, block);
    fs.closeSync(fd);

    // Upload: the multipart body is streamed from disk, so the memory figure is the service's own.
    const rssBeforeUpload = process.memoryUsage().rss;
    let t = performance.now();
    const { url } = await uploadStreaming(svc.port, board, source);
    const uploadMs = performance.now() - t;
    const rssAfterUpload = process.memoryUsage().rss;

    // Full download.
    const rssBefore = process.memoryUsage().rss;
    t = performance.now();
    const bytes = await drain(svc.port, url);
    const downloadMs = performance.now() - t;
    const rssAfter = process.memoryUsage().rss;
    if (bytes !== sizeMiB * MiB) throw new Error(`served ${bytes} bytes`);

    // Random 64 KiB ranges, sequential, keep-alive.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const lat: number[] = [];
    for (let i = 0; i < rangeCount; i++) {
      const start = Math.floor(Math.random() * (sizeMiB * MiB - 65536));
      const s = performance.now();
      const n = await drain(svc.port, url, { range: `bytes=${start}-${start + 65535}` }, agent);
      lat.push(performance.now() - s);
      if (n !== 65536) throw new Error(`range gave ${n} bytes`);
    }
    agent.destroy();
    lat.sort((a, b) => a - b);

    const mbps = (ms: number) => ((sizeMiB / ms) * 1000).toFixed(0);
    console.log(`file: ${sizeMiB} MiB (service and client in one process, loopback)`);
    console.log(
      `upload   : ${uploadMs.toFixed(0)} ms  ${mbps(uploadMs)} MiB/s  rss delta ${((rssAfterUpload - rssBeforeUpload) / MiB).toFixed(1)} MiB`,
    );
    console.log(
      `download : ${downloadMs.toFixed(0)} ms  ${mbps(downloadMs)} MiB/s  rss delta ${((rssAfter - rssBefore) / MiB).toFixed(1)} MiB`,
    );
    console.log(
      `ranges   : ${rangeCount} x 64 KiB  median ${percentile(lat, 50).toFixed(2)} ms  p99 ${percentile(lat, 99).toFixed(2)} ms  max ${lat.at(-1)!.toFixed(2)} ms`,
    );
  } finally {
    await svc.close();
    await fsp.rm(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
