// The render tests of the timeline and of the queued media operations, run again with every job on the shared
// BullMQ queue (a real Redis) and taken by the service's own queue worker: the same assertions hold on both backends.
import { after, test } from 'node:test';
import { findRedisServer, REDIS_MISSING, startRedis } from '../helpers/redis.js';

const bin = findRedisServer();
if (!bin) {
  console.log(`# ${REDIS_MISSING}`);
  test('render tests on the shared queue', { skip: REDIS_MISSING }, () => undefined);
} else {
  const redis = await startRedis(bin);
  after(() => redis.stop());
  process.env.TEST_JOB_QUEUE = redis.url;
  await import('../timeline/render.test.js');
  await import('../timeline/fades.test.js');
}
