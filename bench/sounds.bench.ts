// Notification sounds: synthesis cost (it runs on the event loop, once per sound), POST latency while the queue is
// busy, and the queue's own overhead between two sounds with a near-instant stand-in player.
// Usage: npx tsx bench/sounds.bench.ts [sounds=100]
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { eventually, startService } from '../test/helpers/service.js';
import { makeRecorder } from '../test/sounds/recorder.js';
import { SOUNDS } from '../src/sounds/catalog.js';
import { render, SAMPLE_RATE } from '../src/sounds/synth.js';
import { encodeWav } from '../src/sounds/wav.js';

const soundCount = Number(process.argv[2] ?? 100);

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const ms = (v: number) => `${v.toFixed(2)} ms`;

function synthesis(): void {
  console.log('synthesis (render + WAV encoding, median of 20):');
  let total = 0;
  for (const spec of SOUNDS) {
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      encodeWav(render(spec), SAMPLE_RATE);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    total += percentile(times, 50);
    console.log(`  ${spec.name.padEnd(9)} ${ms(percentile(times, 50))}`);
  }
  console.log(`  all sounds ${ms(total)}`);
}

async function postLatency(): Promise<void> {
  // A held player keeps one sound playing, so the requests measure queueing and refusal, never the player.
  const rec = await makeRecorder('gate');
  const svc = await startService({ SOUND_PLAYER: rec.command });
  try {
    const times: number[] = [];
    let queued = 0;
    for (let i = 0; i < 500; i++) {
      const t = performance.now();
      const res = await svc.api('POST', '/api/sounds/play', { sound: SOUNDS[i % SOUNDS.length].name });
      times.push(performance.now() - t);
      if (res.body.queued) queued++;
    }
    times.sort((a, b) => a - b);
    console.log(`POST /api/sounds/play, 500 requests (${queued} queued, the rest refused as queue_full):`);
    console.log(`  p50 ${ms(percentile(times, 50))}  p99 ${ms(percentile(times, 99))}  max ${ms(times.at(-1)!)}`);
    const t = performance.now();
    await fetch(`${svc.baseUrl}/api/sounds/complete.wav`);
    const cold = performance.now() - t;
    const t2 = performance.now();
    await fetch(`${svc.baseUrl}/api/sounds/complete.wav`);
    console.log(
      `GET /api/sounds/complete.wav: first ${ms(cold)} (synthesis included), then ${ms(performance.now() - t2)}`,
    );
  } finally {
    await svc.close();
    await rec.remove();
  }
}

async function queueOverhead(): Promise<void> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-bench-player-'));
  const log = path.join(dir, 'log');
  const player = path.join(dir, 'player.sh');
  await fsp.writeFile(player, `#!/bin/sh\necho "s $(date +%s%N)" >> '${log}'\necho "e $(date +%s%N)" >> '${log}'\n`, {
    mode: 0o755,
  });
  const svc = await startService({ SOUND_PLAYER: player });
  try {
    await svc.api('POST', '/api/sounds/play', { sound: 'notice' });
    await eventually(async () => ((await fsp.readFile(log, 'utf8').catch(() => '')).includes('e ') ? true : undefined));
    await fsp.rm(log);
    const t = performance.now();
    let accepted = 0;
    for (let i = 0; i < soundCount; i++)
      if ((await svc.api('POST', '/api/sounds/play', { sound: 'notice' })).body.queued) accepted++;
    const lines = await eventually(async () => {
      const l = (await fsp.readFile(log, 'utf8').catch(() => '')).trim().split('\n');
      return l.length >= accepted * 2 ? l : undefined;
    }, 120_000);
    const elapsed = performance.now() - t;
    const stamps = lines.map((l) => Number(l.split(' ')[1]) / 1e6);
    const gaps: number[] = [];
    for (let i = 2; i < stamps.length; i += 2) gaps.push(stamps[i] - stamps[i - 1]);
    gaps.sort((a, b) => a - b);
    console.log(
      `queue with an instant sh player: ${soundCount} requests back to back, ${accepted} accepted (the rest found 32 waiting):`,
    );
    console.log(
      `  gap from one player's end to the next one's start: p50 ${ms(percentile(gaps, 50))}  p99 ${ms(percentile(gaps, 99))}`,
    );
    console.log(`  ${(accepted / (elapsed / 1000)).toFixed(0)} sounds/s played end to end`);
  } finally {
    await svc.close();
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

synthesis();
await postLatency();
await queueOverhead();
