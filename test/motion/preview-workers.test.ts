// Motion previews (motion.preview) on render workers: the service takes no jobs; a worker process fetches the project
// and its footage, draws with its own Chromium and hands the file back; a cancel stops it.
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { doneBy, FAST_QUEUE, queueHarness, WORKER_TOKEN } from '../helpers/queue-harness.js';
import { findRedisServer, REDIS_MISSING, startRedis, type RedisServer } from '../helpers/redis.js';
import { startService, waitForJob } from '../helpers/service.js';
import { png, project } from './preview-project.js';

const redisBin = findRedisServer();
if (!redisBin) console.log(`# ${REDIS_MISSING}`);

describe('motion previews on render workers', { skip: redisBin ? false : REDIS_MISSING, concurrency: false }, () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedis(redisBin!);
  });
  after(() => redis?.stop());
  const harness = queueHarness(() => redis, 'preview-queue');

  test('a worker draws the preview with the footage it fetched, the same bytes as the service; a cancel stops it', async () => {
    const s = await startService({
      JOB_QUEUE: redis.url,
      JOB_QUEUE_NAME: 'preview-queue-1',
      API_TOKEN: WORKER_TOKEN,
      LOCAL_WORKER: '0',
      ...FAST_QUEUE,
    });
    try {
      const board = await s.createBoard('Preview on workers');
      const boardDir = await fsp.realpath(await s.service.ctx.media.boardDir(board));
      const logo = await s.upload(board, { name: 'logo-file.png', data: await png(64, 32, { r: 255, g: 0, b: 0 }) });
      // The project names the board file by its absolute path (the render plan's own rule).
      const up = await s.upload(
        board,
        { name: 'template.aep', data: project({ logoPath: path.join(boardDir, 'logo-file.png') }) },
        { addToBoard: true },
      );
      assert.equal(logo.status, 200);
      const preview = (body: Record<string, unknown>) =>
        s.api('POST', '/api/motion/projects/preview', {
          board_id: board,
          element_id: up.body.element.id,
          ...body,
        });
      const w = await harness.worker(s);
      const queued = await preview({ composition: 'Logo', async: true });
      assert.equal(queued.status, 202, queued.text);
      const done = await waitForJob(s, queued.body.job_id, { timeoutMs: 120_000 });
      assert.equal(done.status, 'complete', JSON.stringify(done));
      await doneBy(w, queued.body.job_id);
      assert.equal(done.result.type, 'image');
      assert.deepEqual(done.result.approximations, [], 'the footage reached the worker');
      const bytes = async (url: string) => Buffer.from(await (await fetch(s.baseUrl + url)).arrayBuffer());
      const here = await preview({ composition: 'Logo' });
      assert.equal(here.status, 200, here.text);
      assert.ok((await bytes(done.result.url)).equals(await bytes(here.body.url)), 'same PNG on the worker and here');

      const files = (await fsp.readdir(boardDir)).sort();
      const long = await preview({ composition: 'Long', format: 'mp4', fps: 30, duration: 60, async: true });
      await waitForJob(s, long.body.job_id, {
        timeoutMs: 120_000,
        until: (j) => j.status === 'running' && j.progress > 0.2,
      });
      assert.equal((await s.api('POST', `/api/jobs/${long.body.job_id}/cancel`)).status, 200);
      assert.equal((await waitForJob(s, long.body.job_id)).status, 'cancelled');
      assert.deepEqual((await fsp.readdir(boardDir)).sort(), files, 'nothing left of the cancelled preview');
    } finally {
      await harness.stopWorkers();
      await s.close();
    }
  });
});
