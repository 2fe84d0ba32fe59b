import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { eventually, startService, waitForJob, type TestService } from '../helpers/service.js';
import { startFalDouble, type FalDouble } from '../helpers/ai-doubles/fal.js';

const KEY = 'fal-test-key-0000:secret1111';

const finished = (t: TestService, jobId: string) => waitForJob(t, `/api/ai/jobs/${jobId}`, { timeoutMs: 20_000 });

describe('fal queue', () => {
  let fal: FalDouble;
  let t: TestService;
  before(async () => {
    fal = await startFalDouble({
      key: KEY,
      output: await sharp({ create: { width: 16, height: 9, channels: 3, background: { r: 5, g: 5, b: 200 } } })
        .png()
        .toBuffer(),
    });
    t = await startService({ FAL_KEY: KEY, FAL_QUEUE_URL: fal.url, AI_POLL_INTERVAL_MS: '20' });
  });
  after(async () => {
    await t.close();
    await fal.close();
  });

  it('submits, polls IN_QUEUE -> IN_PROGRESS -> COMPLETED on the app id, reads the result and downloads the image', async () => {
    const board = await t.createBoard();
    const res = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'fal-flux-dev',
      prompt: 'a kite',
      aspect_ratio: '16:9',
    });
    assert.equal(res.status, 200, res.text);
    const job = await finished(t, res.body.job_id);
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.ok(Buffer.from(await (await fetch(t.baseUrl + job.element.url)).arrayBuffer()).equals(fal.defaultOutput));
    const submit = fal.received('POST', /^\/fal-ai\/flux\/dev$/).at(-1)!;
    assert.deepEqual(submit.json, { prompt: 'a kite', image_size: { width: 1360, height: 768 } });
    assert.ok(
      fal.received('GET', /^\/fal-ai\/flux\/requests\/[^/]+\/status$/).length >= 3,
      'status polled on the app id, without the sub-path',
    );
    const el = (await t.api('GET', `/api/moodboards/${board}/elements/${job.element.id}`)).body;
    assert.equal(el.data.generation.seed, 42);
  });

  it('an NSFW result is content_refused; cancel reaches the queue', async () => {
    const board = await t.createBoard();
    fal.plans.push({ nsfw: true });
    const a = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'fal-flux-dev',
      prompt: 'x',
      aspect_ratio: '1:1',
    });
    const ja = await finished(t, a.body.job_id);
    assert.deepEqual([ja.status, ja.error_code], ['error', 'content_refused']);
    fal.plans.push({ inQueue: 1_000_000 });
    const b = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'fal-flux-dev',
      prompt: 'y',
      aspect_ratio: '1:1',
    });
    const req = [...fal.queued.values()].at(-1)!;
    await eventually(() => (req.polls > 0 ? true : undefined));
    const c = await t.api('POST', `/api/ai/jobs/${b.body.job_id}/cancel`);
    assert.deepEqual([c.body.status, c.body.provider_cancelled], ['cancelled', true]);
    assert.equal(req.cancelled, true);
  });
});
