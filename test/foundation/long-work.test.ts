import { test } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import {
  Cancelled,
  Conflict,
  InvalidInput,
  NotFound,
  ShuttingDown,
  TimedOut,
  ToolFailed,
  ToolMissing,
  ToolUnavailable,
  Unprocessable,
  TooLarge,
  Unsupported,
  UpstreamFailed,
  RateLimited,
  Unavailable,
  Internal,
} from '../../src/errors.js';
import { ApiError, statusOf } from '../../src/http/errors.js';
import { KeyedQueue } from '../../src/jobs/keyed-queue.js';
import { timeLimit } from '../../src/jobs/time-limit.js';
import { createTestContext } from '../helpers/context.js';

declare module '../../src/jobs/kinds.js' {
  interface JobKinds {
    'test.copy': { board_id: string; url: string; fail?: 'before' | 'after' | 'hang' };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('domain errors: one map from kind to status, ApiError keeps its own', () => {
  const cases: [Error, number][] = [
    [new InvalidInput('x'), 400],
    [new NotFound('x'), 404],
    [new Conflict('x'), 409],
    [new Unprocessable('render_failed', 'x'), 422],
    [new ToolFailed('ffmpeg_failed', 'x'), 422],
    [new Cancelled(), 499],
    [new ToolMissing('ffmpeg', 'x'), 503],
    [new ToolUnavailable('x'), 503],
    [new ShuttingDown(), 503],
    [new TimedOut('x'), 504],
    [new ApiError(429, 'rate_limited', 'x'), 429],
    [new TooLarge('x'), 413],
    [new Unsupported('not_media', 'x'), 415],
    [new RateLimited('x'), 429],
    [new Internal('history_missing', 'x'), 500],
    [new UpstreamFailed('provider_error', 'x'), 502],
    [new Unavailable('share_worker_not_configured', 'x'), 503],
  ];
  for (const [err, status] of cases) assert.equal(statusOf(err as never), status, err.constructor.name);
  assert.equal(new ToolMissing('ffmpeg', 'install it').code, 'tool_missing');
  assert.equal(new ApiError(422, 'x', 'y').kind, 'unprocessable');
  // A 429 kept by a failed job comes back as a 429, not as the 400 an unknown status used to fall back to.
  assert.equal(new ApiError(429, 'rate_limited', 'x').kind, 'rate_limited');
});

test('KeyedQueue: one task at a time per key, keys run side by side, a failure does not stop the next', async () => {
  const queue = new KeyedQueue();
  const log: string[] = [];
  const task =
    (name: string, ms: number, fail = false) =>
    async () => {
      log.push(`start ${name}`);
      await sleep(ms);
      log.push(`end ${name}`);
      if (fail) throw new Error(name);
      return name;
    };
  const a1 = queue.run('a', task('a1', 40, true));
  const a2 = queue.run('a', task('a2', 10));
  const b1 = queue.run('b', task('b1', 10));
  await assert.rejects(a1, /a1/);
  assert.equal(await a2, 'a2');
  assert.equal(await b1, 'b1');
  await queue.idle();
  assert.ok(log.indexOf('end b1') < log.indexOf('end a1'), 'b ran beside a');
  assert.ok(log.indexOf('end a1') < log.indexOf('start a2'), 'a2 waited for a1');
});

test('BoardOutputs.produce: unique names beside a user file, an element per file, nothing left by a failed write', async () => {
  const t = await createTestContext();
  try {
    const board = (await t.ctx.boards.createBoard('b')).id;
    const dir = await t.ctx.media.boardDir(board);
    await fsp.writeFile(path.join(dir, 'out.txt'), 'the user file');
    const made = await t.outputs.produce(board, 'out.txt', (temp) => fsp.writeFile(temp, 'new'), {
      data: { made_by: 'test' },
    });
    assert.equal(made.filename, 'out (1).txt');
    assert.equal(made.element.data.made_by, 'test');
    assert.equal(await fsp.readFile(path.join(dir, 'out.txt'), 'utf8'), 'the user file');
    await assert.rejects(
      t.outputs.produce(board, 'broken.txt', async (temp) => {
        await fsp.writeFile(temp, 'half');
        throw new Cancelled();
      }),
      Cancelled,
    );
    assert.deepEqual((await fsp.readdir(dir)).sort(), ['out (1).txt', 'out.txt']);
  } finally {
    await t.close();
  }
});

test('job files: the runner resolves declared inputs and commits the output handed back; failures and cancels leave nothing', async () => {
  const t = await createTestContext();
  try {
    const board = (await t.ctx.boards.createBoard('b')).id;
    const dir = await t.ctx.media.boardDir(board);
    await fsp.writeFile(path.join(dir, 'in.txt'), 'input bytes');
    t.ctx.jobs.define(
      'test.copy',
      async (job) => {
        const out = await job.output(job.params.board_id, 'copy.txt');
        await fsp.copyFile(job.input(job.params.url), out.temp);
        if (job.params.fail === 'after') throw new ToolFailed('copy_failed', 'the copy failed');
        if (job.params.fail === 'hang' && !job.signal.aborted)
          await new Promise((_, reject) => job.signal.addEventListener('abort', () => reject(job.signal.reason)));
        return {
          output: {
            file: out,
            element: { data: { copied_from: job.params.url } },
          },
        };
      },
      { inputs: (p) => [p.url], result: (c) => ({ name: c.filename }) },
    );
    const url = t.ctx.media.urlFor(board, 'in.txt');
    const done = await t.ctx.jobs.wait(t.ctx.jobs.enqueue('test.copy', { board_id: board, url }).id);
    assert.equal(done.status, 'complete', done.error ?? '');
    assert.deepEqual(done.result, { name: 'copy.txt' });
    assert.equal(done.output_url, t.ctx.media.urlFor(board, 'copy.txt'));
    assert.equal(await fsp.readFile(path.join(dir, 'copy.txt'), 'utf8'), 'input bytes');
    assert.equal(t.ctx.boards.listElements(board).find((e) => e.name === 'copy.txt')?.data.copied_from, url);

    const failed = await t.ctx.jobs.wait(t.ctx.jobs.enqueue('test.copy', { board_id: board, url, fail: 'after' }).id);
    assert.deepEqual([failed.status, failed.error_code], ['error', 'copy_failed']);
    const missing = await t.ctx.jobs.wait(
      t.ctx.jobs.enqueue('test.copy', { board_id: board, url: t.ctx.media.urlFor(board, 'gone.txt') }).id,
    );
    assert.deepEqual([missing.status, missing.error_code], ['error', 'not_found']);
    const hanging = t.ctx.jobs.enqueue('test.copy', { board_id: board, url, fail: 'hang' });
    while (t.ctx.jobs.get(hanging.id)!.status !== 'running') await sleep(10);
    t.ctx.jobs.cancel(hanging.id);
    assert.deepEqual(
      [(await t.ctx.jobs.wait(hanging.id)).status, t.ctx.jobs.get(hanging.id)!.error_code],
      ['cancelled', 'cancelled'],
    );
    assert.deepEqual(
      (await fsp.readdir(dir)).sort(),
      ['copy.txt', 'in.txt'],
      'no temp file of the failed or cancelled copies',
    );
  } finally {
    await t.close();
  }
});

test('timeLimit: the outer abort is Cancelled (or its own domain reason), the limit TimedOut, neither undefined', async () => {
  const outer = new AbortController();
  const limited = timeLimit(
    outer.signal,
    60_000,
    () => new TimedOut('too slow', 'download_timeout'),
    'The download was cancelled',
  );
  assert.equal(limited.stopped(), undefined);
  outer.abort();
  assert.ok(limited.signal.aborted);
  const cancelled = limited.stopped();
  assert.ok(cancelled instanceof Cancelled);
  assert.deepEqual([cancelled.code, cancelled.message], ['aborted', 'The download was cancelled']);

  const jobCancel = new AbortController();
  jobCancel.abort(new Cancelled());
  assert.equal(
    timeLimit(jobCancel.signal, 60_000, () => new TimedOut('x')).stopped()?.code,
    'cancelled',
    "a job's own reason is kept",
  );

  const short = timeLimit(undefined, 20, () => new TimedOut('too slow', 'download_timeout'));
  // AbortSignal.timeout's timer does not hold the process open, so the test waits on one of its own.
  while (!short.signal.aborted) await sleep(10);
  const timedOut = short.stopped();
  assert.ok(timedOut instanceof TimedOut);
  assert.equal(timedOut.code, 'download_timeout');
});
