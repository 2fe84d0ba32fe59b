import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { openDatabase } from '../../src/db/database.js';
import { DomainError, ToolFailed } from '../../src/errors.js';
import { failureOf, JobRunner } from '../../src/jobs/runner.js';
import { startService } from '../helpers/service.js';

declare module '../../src/jobs/kinds.js' {
  interface JobKinds {
    count: { n: number };
    work: { i: number };
    long: Record<string, never>;
    slow: Record<string, never>;
    now: { fail?: boolean; wait?: boolean };
  }
}

const noop = () => {};
const silent = {
  level: 'silent',
  error: noop,
  warn: noop,
  info: noop,
  debug: noop,
  trace: noop,
  fatal: noop,
  silent: noop,
  child: () => silent,
} as unknown as FastifyBaseLogger;
const tmpDb = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bms-jobs-')), 'db.sqlite');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a job goes queued -> running -> complete with progress, eta and output_url', async () => {
  const runner = new JobRunner(openDatabase(tmpDb()), 1, silent);
  const seen: string[] = [];
  runner.on('update', (j) => seen.push(`${j.status}:${j.progress.toFixed(1)}`));
  runner.define('count', async (job) => {
    for (let i = 1; i <= 4; i++) {
      await sleep(250);
      job.progress(i / 5);
    }
    return { output_url: `/media/out-${job.params.n}.mp4`, result: { n: job.params.n } };
  });
  const job = runner.enqueue('count', { n: 7 }, { idPrefix: 'testjob_' });
  assert.equal(job.status, 'queued');
  assert.match(job.id, /^testjob_/);
  await sleep(700);
  const mid = runner.get(job.id)!;
  assert.equal(mid.status, 'running');
  assert.ok(mid.progress > 0 && mid.progress < 1);
  assert.ok(mid.eta_seconds !== null && mid.eta_seconds > 0);
  const done = await runner.wait(job.id);
  assert.equal(done.status, 'complete');
  assert.equal(done.progress, 1);
  assert.equal(done.output_url, '/media/out-7.mp4');
  assert.deepEqual(done.result, { n: 7 });
  assert.deepEqual(seen.slice(0, 2), ['queued:0.0', 'running:0.0']);
  assert.equal(seen.at(-1), 'complete:1.0');
});

test('failures become status error with the message; concurrency is bounded; FIFO order', async () => {
  const runner = new JobRunner(openDatabase(tmpDb()), 2, silent);
  let running = 0;
  let peak = 0;
  const order: number[] = [];
  runner.define('work', async (job) => {
    running++;
    peak = Math.max(peak, running);
    order.push(job.params.i);
    await sleep(50);
    running--;
    if (job.params.i === 3) throw new Error('clip 3 is missing');
    return {};
  });
  const ids = [0, 1, 2, 3, 4, 5].map((i) => runner.enqueue('work', { i }).id);
  const results = await Promise.all(ids.map((id) => runner.wait(id)));
  assert.equal(peak, 2);
  assert.deepEqual(order, [0, 1, 2, 3, 4, 5]);
  assert.equal(results[3].status, 'error');
  assert.equal(results[3].error, 'clip 3 is missing');
  assert.equal(results[3].error_code, 'internal');
  assert.ok(results.filter((r) => r.status === 'complete').length === 5);
});

test('a failed job keeps the code, kind and details of the domain error it threw', async () => {
  const runner = new JobRunner(openDatabase(tmpDb()), 1, silent);
  runner.define('work', async () => {
    throw new ToolFailed('ffmpeg_failed', 'ffmpeg failed: Invalid data', { stream: 0 });
  });
  const failed = await runner.wait(runner.enqueue('work', { i: 1 }).id);
  assert.equal(failed.status, 'error');
  assert.equal(failed.error_code, 'ffmpeg_failed');
  const again = failureOf(failed);
  assert.ok(again instanceof DomainError);
  assert.deepEqual(
    [again.kind, again.code, again.message, again.details],
    ['unprocessable', 'ffmpeg_failed', 'ffmpeg failed: Invalid data', { stream: 0 }],
  );
});

test('cancel: a queued job never runs; a running one is aborted through its signal', async () => {
  const runner = new JobRunner(openDatabase(tmpDb()), 1, silent);
  let aborted = false;
  let ran = 0;
  runner.define('long', async (job) => {
    ran++;
    await new Promise<void>((resolve) =>
      job.signal.addEventListener('abort', () => {
        aborted = true;
        resolve();
      }),
    );
    throw job.signal.reason;
  });
  const a = runner.enqueue('long', {});
  const b = runner.enqueue('long', {});
  await sleep(50);
  assert.equal(runner.cancel(b.id).status, 'cancelled');
  runner.cancel(a.id);
  const done = await runner.wait(a.id);
  assert.equal(done.status, 'cancelled');
  assert.equal(done.error_code, 'cancelled');
  assert.equal(runner.get(b.id)!.error_code, 'cancelled');
  assert.ok(aborted);
  assert.equal(ran, 1);
});

test('restart recovery: running jobs become errors, queued jobs run again', async () => {
  const file = tmpDb();
  const first = new JobRunner(openDatabase(file), 1, silent);
  first.define('slow', () => new Promise(() => {}));
  const running = first.enqueue('slow', {});
  const queued = first.enqueue('slow', {});
  await sleep(50);
  assert.equal(first.get(running.id)!.status, 'running');

  const second = new JobRunner(openDatabase(file), 1, silent);
  let reran = '';
  second.define('slow', async (job) => {
    reran = job.id;
    return { output_url: '/media/x.mp4' };
  });
  second.recover();
  const r = second.get(running.id)!;
  assert.equal(r.status, 'error');
  assert.match(r.error!, /restart/);
  assert.equal((await second.wait(queued.id)).status, 'complete');
  assert.equal(reran, queued.id);
});

test('runNow: the same handler in the caller, its scratch removed however it ends, no record kept', async () => {
  const scratchRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'bms-now-'));
  const env = { scratchRoot } as unknown as ConstructorParameters<typeof JobRunner>[4];
  const runner = new JobRunner(openDatabase(tmpDb()), 1, silent, undefined, env);
  let scratch = '';
  runner.define('now', async (job) => {
    scratch = await job.scratch();
    fs.writeFileSync(path.join(scratch, 'work.txt'), 'x');
    if (job.params.wait)
      await new Promise((_, reject) => job.signal.addEventListener('abort', () => reject(job.signal.reason)));
    if (job.params.fail) throw new ToolFailed('ffmpeg', 'it broke');
    return { result: { done: true, dir: path.dirname(scratch) } };
  });
  assert.deepEqual(await runner.runNow('now', {}, new AbortController().signal), { done: true, dir: scratchRoot });
  assert.equal(fs.existsSync(scratch), false, 'the scratch folder is gone after success');
  await assert.rejects(runner.runNow('now', { fail: true }, new AbortController().signal), /it broke/);
  assert.equal(fs.existsSync(scratch), false, 'the scratch folder is gone after a failure');
  const client = new AbortController();
  const pending = runner.runNow('now', { wait: true }, client.signal);
  await sleep(50);
  client.abort(new Error('client gone'));
  await assert.rejects(pending, /client gone/);
  assert.equal(fs.existsSync(scratch), false, 'the scratch folder is gone after the caller went away');
  assert.deepEqual(runner.list(), [], 'work run now is not a job');
});

test('generic job endpoints: 404 for unknown ids, list is empty on a fresh service', async () => {
  const svc = await startService();
  try {
    const r = await svc.api('GET', '/api/jobs/job_unknown');
    assert.equal(r.status, 404);
    assert.equal(r.body.error.code, 'not_found');
    assert.equal((await svc.api('POST', '/api/jobs/job_unknown/cancel')).status, 404);
    assert.deepEqual((await svc.api('GET', '/api/jobs')).body, { jobs: [] });
  } finally {
    await svc.close();
  }
});
