import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { eventually, startService, waitForJob, type TestService } from '../helpers/service.js';
import { startGoogleDouble, type GoogleDouble } from '../helpers/ai-doubles/google.js';

const KEY = 'AIza-test-google-key-5678';

const finished = (t: TestService, jobId: string) => waitForJob(t, `/api/ai/jobs/${jobId}`, { timeoutMs: 20_000 });

/** MP4-looking bytes (an `ftyp` box, then noise): enough for the type check, unique per call. */
const fakeMp4 = () =>
  Buffer.concat([
    Buffer.from('0000001866747970', 'hex'),
    Buffer.from('isom'),
    Buffer.from(Array.from({ length: 4096 }, () => Math.floor(Math.random() * 256))),
  ]);

describe('Google: Imagen at once, Veo operations queued', () => {
  let google: GoogleDouble;
  let t: TestService;
  before(async () => {
    google = await startGoogleDouble({ apiKey: KEY });
    t = await startService({
      GOOGLE_GENERATIVE_AI_API_KEY: KEY,
      GOOGLE_BASE_URL: `${google.url}/v1beta`,
      AI_POLL_INTERVAL_MS: '20',
    });
  });
  after(async () => {
    await t.close();
    await google.close();
  });

  it('Imagen: the predicted image lands on the board byte for byte; a bad key is provider_auth_failed', async () => {
    const board = await t.createBoard();
    const png = await sharp({ create: { width: 20, height: 12, channels: 3, background: { r: 1, g: 2, b: 3 } } })
      .png()
      .toBuffer();
    google.images.push(png);
    const res = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'imagen-4-fast',
      prompt: 'a teapot',
      aspect_ratio: '16:9',
      negative_prompt: 'people',
    });
    assert.equal(res.status, 200, res.text);
    assert.ok(Buffer.from(await (await fetch(t.baseUrl + res.body.element.url)).arrayBuffer()).equals(png));
    const sent = google.received('POST', /:predict$/).at(-1)!.json;
    assert.deepEqual(
      sent.instances,
      [{ prompt: 'a teapot\n\nAvoid: people' }],
      'Imagen 4 has no negative prompt: it joins the prompt',
    );
    assert.deepEqual(sent.parameters, { sampleCount: 1, aspectRatio: '16:9' });

    // A wrong run-time key replaces the environment's until it is deleted.
    assert.equal((await t.api('PUT', '/api/ai/providers/google', { api_key: 'AIza-wrong-key-000000' })).status, 200);
    try {
      const bad = await t.api('POST', '/api/ai/generate', {
        board_id: board,
        model: 'imagen-4',
        prompt: 'x',
        aspect_ratio: '1:1',
      });
      assert.equal(bad.status, 502);
      assert.equal(bad.body.error.code, 'provider_auth_failed');
    } finally {
      await t.api('DELETE', '/api/ai/providers/google');
    }
  });

  it('Veo: polls the operation, downloads the video with the key sent to the API only (not to the storage host it redirects to)', async () => {
    const board = await t.createBoard();
    const video = fakeMp4();
    google.veoPlans.push({ pollsBeforeDone: 2, video });
    const res = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'veo-3-fast',
      prompt: 'waves on rocks',
      aspect_ratio: '9:16',
      params: { duration: 4 },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'queued');
    assert.equal(res.body.cost_estimate, 0.6, '4 s at 0.15 $/s');
    const job = await finished(t, res.body.job_id);
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.equal(job.element.type, 'video');
    assert.ok(Buffer.from(await (await fetch(t.baseUrl + job.element.url)).arrayBuffer()).equals(video));
    const started = google.received('POST', /:predictLongRunning$/).at(-1)!.json;
    assert.deepEqual(started.instances, [{ prompt: 'waves on rocks' }]);
    assert.deepEqual(started.parameters, { aspectRatio: '9:16', duration: 4 });
    const blob = google.storage.received('GET', /^\/blob\//).at(-1)!;
    assert.equal(blob.headers['x-goog-api-key'], undefined, 'the key does not follow the redirect to another host');
    assert.equal(google.received('GET', /:download$/).at(-1)!.headers['x-goog-api-key'], KEY);
  });

  it('Veo: a filtered video is content_refused; cancel reaches the operation', async () => {
    const board = await t.createBoard();
    google.veoPlans.push({ pollsBeforeDone: 0, filteredReasons: ['The video was filtered by our safety system.'] });
    const a = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'veo-3',
      prompt: 'x',
      aspect_ratio: '16:9',
    });
    const ja = await finished(t, a.body.job_id);
    assert.deepEqual([ja.status, ja.error_code], ['error', 'content_refused']);

    google.veoPlans.push({ pollsBeforeDone: 1_000_000 });
    const b = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'veo-3',
      prompt: 'y',
      aspect_ratio: '16:9',
    });
    const op = [...google.operations.values()].at(-1)!;
    await eventually(() => (op.polls > 0 ? true : undefined));
    const cancelled = await t.api('POST', `/api/ai/jobs/${b.body.job_id}/cancel`);
    assert.deepEqual([cancelled.body.status, cancelled.body.provider_cancelled], ['cancelled', true]);
    assert.equal(op.cancelled, true);
  });
});
