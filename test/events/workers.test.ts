import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeVideo, tempDir } from '../helpers/fixtures.js';
import { queueHarness, WORKER_TOKEN } from '../helpers/queue-harness.js';
import { findRedisServer, REDIS_MISSING, startRedis, type RedisServer } from '../helpers/redis.js';
import { EventStream } from './stream.js';

const redisBin = findRedisServer();
if (!redisBin) console.log(`# ${REDIS_MISSING}`);

/** Jobs a render worker on another machine runs (here: another process) reach the service's stream like local ones. */
describe('events of jobs run by render workers', { skip: redisBin ? false : REDIS_MISSING }, () => {
  let redis: RedisServer;
  let clips: string;
  let short: string;
  let long: string;
  before(async () => {
    redis = await startRedis(redisBin!);
    clips = await tempDir();
    short = await makeVideo(path.join(clips, 'short.mp4'), { duration: 2, width: 320, height: 240 });
    long = await makeVideo(path.join(clips, 'long.mp4'), { duration: 30, width: 640, height: 360 });
  });
  after(async () => {
    await redis?.stop();
    if (clips) await fsp.rm(clips, { recursive: true, force: true });
  });
  const { worker, withQueued } = queueHarness(() => redis, 'events-test');

  it('queued, progress, the output element and completed; a cancel of a running one', async () => {
    await withQueued({ LOCAL_WORKER: '0' }, async (s) => {
      await worker(s);
      const board = await s.createBoard();
      const stream = await EventStream.open(s.baseUrl, `?board_id=${board}`, {
        authorization: `Bearer ${WORKER_TOKEN}`,
      });
      try {
        const clip = (await s.upload(board, short, { addToBoard: true })).body.element.id as string;
        const convert = (element: string) =>
          s.api('POST', '/api/convert-video', {
            board_id: board,
            element_id: element,
            format: 'webm',
            codec: 'vp9',
            async: true,
          });
        const job = (await convert(clip)).body.job_id as string;
        const jobEvent = (type: string) => stream.next((e) => e.event === type && e.data.data.job.id === job, 60_000);
        await jobEvent('job.queued');
        assert.equal((await jobEvent('job.progress')).data.data.job.status, 'running', 'the worker took it');
        const done = await jobEvent('job.completed');
        const { element } = done.data.data;
        assert.equal(element.url, done.data.data.job.output_url);
        assert.deepEqual(element, (await s.api('GET', `/api/moodboards/${board}/elements/${element.id}`)).body);
        const added = stream.events.find((e) => e.event === 'element.added' && e.data.data.element.id === element.id);
        assert.ok(added && added.data.id < done.data.id, 'the output element is announced before the completion');

        const longClip = (await s.upload(board, long, { addToBoard: true })).body.element.id as string;
        const running = (await convert(longClip)).body.job_id as string;
        await stream.next(
          (e) => e.event === 'job.progress' && e.data.data.job.id === running && e.data.data.job.progress > 0,
          60_000,
        );
        await s.api('POST', `/api/jobs/${running}/cancel`);
        const cancelled = await stream.next(
          (e) => e.event === 'job.cancelled' && e.data.data.job.id === running,
          60_000,
        );
        assert.deepEqual(cancelled.data.data.job, (await s.api('GET', `/api/jobs/${running}`)).body);
      } finally {
        stream.close();
      }
    });
  });
});
