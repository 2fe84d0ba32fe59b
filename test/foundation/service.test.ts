import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { RUN_TS, startService } from '../helpers/service.js';
import { ToolMissing } from '../../src/errors.js';
import { statusOf } from '../../src/http/errors.js';

test('health answers ok with the version and the programs found', async () => {
  const svc = await startService();
  try {
    const r = await svc.api('GET', '/api/health');
    assert.equal(r.status, 200);
    assert.equal(r.body.ok, true);
    assert.match(r.body.version, /^\d+\.\d+\.\d+/);
    const ffmpeg = r.body.tools.find((t: any) => t.name === 'ffmpeg');
    assert.equal(ffmpeg.found, true);
    assert.match(ffmpeg.version, /ffmpeg version/);
    assert.ok(['npm', 'system', 'env'].includes(ffmpeg.source));
    assert.equal(ffmpeg.hint, undefined, 'no install hint for a program that was found');
  } finally {
    await svc.close();
  }
});

test('a missing program is reported by health and by the work that needs it, not by a crash', async () => {
  const svc = await startService({ FFPROBE_PATH: '/nonexistent/ffprobe' });
  try {
    const tools = (await svc.api('GET', '/api/health')).body.tools;
    const ffprobe = tools.find((t: any) => t.name === 'ffprobe');
    assert.equal(ffprobe.found, false);
    assert.match(ffprobe.hint, /FFPROBE_PATH/);
    await assert.rejects(
      svc.service.ctx.tools.require('ffprobe'),
      (e: unknown) => e instanceof ToolMissing && statusOf(e) === 503 && e.code === 'tool_missing',
    );
  } finally {
    await svc.close();
  }
});

test('OpenAPI document lists the routes; the reference page is served', async () => {
  const svc = await startService();
  try {
    const doc = await svc.api('GET', '/api/openapi.json');
    assert.equal(doc.status, 200);
    assert.match(doc.body.openapi, /^3\./);
    for (const p of [
      '/api/moodboards',
      '/api/moodboards/{id}/elements/{eid}',
      '/api/upload',
      '/api/health',
      '/api/jobs/{job_id}',
      '/media/{*}',
    ]) {
      assert.ok(doc.body.paths[p], `${p} documented`);
    }
    assert.ok(doc.body.paths['/api/moodboards'].post.requestBody, 'request body schema is in the document');
    const page = await fetch(`${svc.baseUrl}/api/docs/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /swagger/i);
  } finally {
    await svc.close();
  }
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

test('the real process starts, serves, and exits 0 on SIGTERM after closing the database', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bms-proc-'));
  const port = await freePort();
  const child = spawn(process.execPath, [...RUN_TS, 'src/main.ts', 'serve'], {
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let up = false;
    for (let i = 0; i < 200 && !up; i++) {
      await new Promise((r) => setTimeout(r, 100));
      up = await fetch(`http://127.0.0.1:${port}/api/health`).then(
        (r) => r.ok,
        () => false,
      );
    }
    assert.ok(up, 'service answered health');
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exit, 0);
    // WAL is checkpointed and removed when the last connection closes cleanly.
    assert.equal(fs.existsSync(path.join(dataDir, 'board-media.sqlite-wal')), false);
  } finally {
    child.kill('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a bad configuration stops the process with a readable message', async () => {
  const child = spawn(process.execPath, [...RUN_TS, 'src/main.ts', 'serve'], {
    env: { ...process.env, HOST: '0.0.0.0', API_TOKEN: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 2);
  assert.match(stderr, /Configuration error: HOST=0\.0\.0\.0 is not a loopback address/);
});
