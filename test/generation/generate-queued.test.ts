import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { eventually, startService, waitForJob, type TestService } from '../helpers/service.js';
import { tempDir } from '../helpers/fixtures.js';
import { startReplicateDouble, type ReplicateDouble } from '../helpers/ai-doubles/replicate.js';

const TOKEN = 'r8_test_token_0123456789abcdef';

const noisePng = async () =>
  sharp(Buffer.from(Array.from({ length: 24 * 18 * 3 }, () => Math.floor(Math.random() * 256))), {
    raw: { width: 24, height: 18, channels: 3 },
  })
    .png()
    .toBuffer();

const env = (replicate: ReplicateDouble, extra: Record<string, string> = {}) => ({
  REPLICATE_API_TOKEN: TOKEN,
  REPLICATE_BASE_URL: `${replicate.url}/v1`,
  AI_POLL_INTERVAL_MS: '20',
  ...extra,
});

const finished = (t: TestService, jobId: string) => waitForJob(t, `/api/ai/jobs/${jobId}`, { timeoutMs: 20_000 });

describe('queued generation (Replicate predictions)', () => {
  let replicate: ReplicateDouble;
  let t: TestService;
  before(async () => {
    replicate = await startReplicateDouble({ apiToken: TOKEN });
    t = await startService(env(replicate));
  });
  after(async () => {
    await t.close();
    await replicate.close();
  });

  it('answers queued at once, polls starting -> processing -> succeeded, downloads the output onto the board', async () => {
    const board = await t.createBoard();
    const png = await noisePng();
    replicate.plans.push({
      steps: ['starting', 'processing', 'processing', 'succeeded'],
      output: png,
      logs: ' 50%|█████     | 2/4',
    });
    const res = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'flux-schnell',
      prompt: 'A lighthouse at dusk',
      aspect_ratio: '16:9',
      params: { num_inference_steps: 4 },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'queued');
    assert.match(res.body.job_id, /^aijob_/);
    assert.equal(res.body.cost_estimate, 0.003);
    const created = replicate.received('POST', /predictions$/).at(-1)!;
    assert.equal(created.path, '/v1/models/black-forest-labs/flux-schnell/predictions');
    assert.deepEqual(created.json.input, {
      prompt: 'A lighthouse at dusk',
      aspect_ratio: '16:9',
      num_inference_steps: 4,
    });

    const job = await finished(t, res.body.job_id);
    assert.equal(job.status, 'complete', JSON.stringify(job));
    assert.equal(job.element.type, 'image');
    assert.equal(decodeURIComponent(job.element.url), `/media/${board}/A lighthouse at dusk.png`);
    assert.ok(Buffer.from(await (await fetch(t.baseUrl + job.element.url)).arrayBuffer()).equals(png));
    assert.ok(replicate.received('GET', /predictions\//).length >= 4, 'polled until succeeded');
    const el = (await t.api('GET', `/api/moodboards/${board}/elements/${job.element.id}`)).body;
    assert.equal(el.data.generation.model, 'flux-schnell');
    assert.equal(el.data.generation.aspect_ratio, '16:9');
    const h = (await t.api('GET', `/api/ai/history?board_id=${board}`)).body.entries[0];
    assert.deepEqual(
      [h.status, h.provider_job_id, h.job_id, h.element_id],
      ['complete', [...replicate.predictions.keys()].at(-1), res.body.job_id, job.element.id],
    );
    // The generic job view has it too.
    assert.equal((await t.api('GET', `/api/jobs/${res.body.job_id}`)).body.output_url, job.element.url);
  });

  it("fetches an http(s) input image with the download limits and sends it in the model's image field", async () => {
    const board = await t.createBoard();
    const source = await noisePng();
    replicate.plans.push({ steps: ['succeeded'], output: source });
    const first = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'flux-schnell',
      prompt: 'source',
      aspect_ratio: '1:1',
    });
    await finished(t, first.body.job_id);
    const url = `${replicate.url}/files/${[...replicate.predictions.keys()].at(-1)}.png`;
    const res = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'flux-1.1-pro',
      prompt: 'like this',
      aspect_ratio: '4:5',
      input_image_url: url,
    });
    assert.equal(res.status, 200, res.text);
    const input = replicate.received('POST', /predictions$/).at(-1)!.json.input;
    assert.equal(input.image_prompt, `data:image/png;base64,${source.toString('base64')}`);
    assert.equal(input.aspect_ratio, '4:5');
    const notImage = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'flux-1.1-pro',
      prompt: 'x',
      aspect_ratio: '1:1',
      input_image_url: `${replicate.url}/v1/predictions/missing`,
    });
    assert.equal(notImage.status, 502, notImage.text);
    assert.equal(notImage.body.error.code, 'download_failed');
  });

  it('a failed prediction is an error with its reason; a safety failure is content_refused', async () => {
    const board = await t.createBoard();
    replicate.plans.push({ steps: ['processing', 'failed'], error: 'CUDA out of memory' });
    const a = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'flux-schnell',
      prompt: 'x',
      aspect_ratio: '1:1',
    });
    const ja = await finished(t, a.body.job_id);
    assert.deepEqual([ja.status, ja.error_code], ['error', 'provider_failed']);
    assert.match(ja.error, /CUDA out of memory/);
    replicate.plans.push({
      steps: ['failed'],
      error: 'NSFW content detected. Try running it again, or try a different prompt.',
    });
    const b = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'flux-schnell',
      prompt: 'y',
      aspect_ratio: '1:1',
    });
    const jb = await finished(t, b.body.job_id);
    assert.deepEqual([jb.status, jb.error_code], ['error', 'content_refused']);
    assert.deepEqual(await fsp.readdir(path.join(t.dataDir, 'media', 'admin', board)), []);
  });

  it('cancel reaches the provider, from our route and from the generic job cancel', async () => {
    const board = await t.createBoard();
    replicate.plans.push({ steps: ['processing'] }, { steps: ['processing'] });
    const a = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'flux-schnell',
      prompt: 'cancel me',
      aspect_ratio: '1:1',
    });
    const predA = [...replicate.predictions.keys()].at(-1)!;
    await eventually(() => (replicate.predictions.get(predA)!.gets > 0 ? true : undefined));
    const cancelled = await t.api('POST', `/api/ai/jobs/${a.body.job_id}/cancel`);
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.status, 'cancelled');
    assert.equal(cancelled.body.provider_cancelled, true);
    assert.ok(replicate.cancels.includes(predA));

    const b = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'flux-schnell',
      prompt: 'cancel me too',
      aspect_ratio: '1:1',
    });
    const predB = [...replicate.predictions.keys()].at(-1)!;
    assert.equal((await t.api('POST', `/api/jobs/${b.body.job_id}/cancel`)).status, 200);
    await eventually(() => (replicate.cancels.includes(predB) ? true : undefined));
    const hist = (await t.api('GET', `/api/ai/history?board_id=${board}`)).body.entries;
    assert.deepEqual(
      hist.map((e: any) => e.status),
      ['cancelled', 'cancelled'],
    );
    assert.equal((await t.api('GET', `/api/ai/jobs/${b.body.job_id}`)).body.status, 'cancelled');
    assert.equal((await t.api('GET', '/api/ai/jobs/job_notours')).status, 404);
  });

  it('waits out a rate-limited poll and a 500, then completes', async () => {
    const board = await t.createBoard();
    replicate.script(
      'GET /v1/predictions',
      {
        status: 429,
        headers: { 'retry-after': '0' },
        json: { title: 'Too Many Requests', detail: 'Request was throttled.', status: 429 },
      },
      { status: 500, text: 'oops' },
    );
    const res = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'flux-schnell',
      prompt: 'patience',
      aspect_ratio: '1:1',
    });
    const job = await finished(t, res.body.job_id);
    assert.equal(job.status, 'complete', JSON.stringify(job));
  });

  it('queued generations poll side by side (their own job lane), not one after another behind JOB_CONCURRENCY=1', async () => {
    const board = await t.createBoard();
    const jobs: string[] = [];
    for (let i = 0; i < 3; i++) {
      replicate.plans.push({ steps: ['processing'] });
      jobs.push(
        (
          await t.api('POST', '/api/ai/generate', {
            board_id: board,
            model: 'flux-schnell',
            prompt: `side ${i}`,
            aspect_ratio: '1:1',
          })
        ).body.job_id,
      );
    }
    const preds = [...replicate.predictions.keys()].slice(-3);
    await eventually(
      () => (preds.every((id) => replicate.predictions.get(id)!.gets > 0) ? true : undefined),
      10_000,
      'all three polled',
    );
    for (const id of jobs) assert.equal((await t.api('GET', `/api/ai/jobs/${id}`)).body.status, 'running');
    for (const id of jobs) assert.equal((await t.api('POST', `/api/ai/jobs/${id}/cancel`)).body.status, 'cancelled');
    const spec = (await t.api('GET', '/api/openapi.json')).body;
    for (const p of [
      '/api/ai/generate',
      '/api/ai/jobs/{job_id}',
      '/api/ai/jobs/{job_id}/cancel',
      '/api/ai/history',
      '/api/ai/models',
      '/api/ai/providers/{provider}',
      '/api/ai/transcribe',
      '/api/ai/prompt-enhancer/analyze',
    ]) {
      assert.ok(spec.paths[p], `OpenAPI lists ${p}`);
    }
  });

  it('a provider that never finishes hits the overall time limit, and is told to cancel', async () => {
    const short = await startService(env(replicate, { AI_JOB_TIMEOUT_SECONDS: '1' }));
    try {
      const board = await short.createBoard();
      replicate.plans.push({ steps: ['processing'] });
      const res = await short.api('POST', '/api/ai/generate', {
        board_id: board,
        model: 'flux-schnell',
        prompt: 'forever',
        aspect_ratio: '1:1',
      });
      const pred = [...replicate.predictions.keys()].at(-1)!;
      const job = await finished(short, res.body.job_id);
      assert.deepEqual([job.status, job.error_code], ['error', 'provider_timeout']);
      assert.ok(replicate.cancels.includes(pred));
    } finally {
      await short.close();
    }
  });

  it('a bad token answers 502 provider_auth_failed at once, with no job', async () => {
    assert.equal(
      (await t.api('PUT', '/api/ai/providers/replicate', { api_key: 'r8_wrong_000000000000000' })).status,
      200,
    );
    try {
      const board = await t.createBoard();
      const jobsBefore = (await t.api('GET', '/api/jobs?kind=generation.poll')).body.jobs.length;
      const res = await t.api('POST', '/api/ai/generate', {
        board_id: board,
        model: 'flux-schnell',
        prompt: 'x',
        aspect_ratio: '1:1',
      });
      assert.equal(res.status, 502);
      assert.equal(res.body.error.code, 'provider_auth_failed');
      assert.match(res.body.error.message, /replicate/);
      assert.equal((await t.api('GET', '/api/jobs?kind=generation.poll')).body.jobs.length, jobsBefore, 'no job');
    } finally {
      await t.api('DELETE', '/api/ai/providers/replicate');
    }
  });

  it('survives a service restart in the middle: the new service resumes polling the same prediction', async () => {
    const dataDir = await tempDir('bms-gen-restart-');
    let first: TestService | undefined = await startService(env(replicate), { dataDir });
    let second: TestService | undefined;
    try {
      const board = await first.createBoard();
      const png = await noisePng();
      replicate.plans.push({ steps: ['processing'], output: png });
      const res = await first.api('POST', '/api/ai/generate', {
        board_id: board,
        model: 'flux-schnell',
        prompt: 'across a restart',
        aspect_ratio: '1:1',
      });
      const pred = [...replicate.predictions.keys()].at(-1)!;
      await eventually(() => (replicate.predictions.get(pred)!.gets >= 2 ? true : undefined));
      const stranded = first.service.features.generation.history.insert({
        board_id: board,
        model: 'gpt-image-1',
        provider: 'openai',
        kind: 'image',
        prompt: 'cut off',
        negative_prompt: null,
        aspect_ratio: '1:1',
        params: {},
        status: 'running',
        cost_estimate: 0.042,
      }).id;
      await first.close();
      first = undefined;
      const created = replicate.received('POST', /predictions$/).length;

      replicate.force(pred, 'succeeded');
      second = await startService(env(replicate), { dataDir });
      const job = await finished(second, res.body.job_id);
      assert.equal(job.status, 'complete', JSON.stringify(job));
      assert.ok(Buffer.from(await (await fetch(second.baseUrl + job.element.url)).arrayBuffer()).equals(png));
      assert.equal(replicate.received('POST', /predictions$/).length, created, 'no second prediction was started');
      assert.equal(replicate.cancels.includes(pred), false, 'a restart does not cancel at the provider');
      const h = (await second.api('GET', `/api/ai/history?board_id=${board}`)).body.entries.find(
        (e: any) => e.id === res.body.history_entry_id,
      );
      assert.deepEqual([h.status, h.element_id], ['complete', job.element.id]);
      // A request cut off by the restart while it waited on its provider (no job of its own) is closed as interrupted.
      const cut = (await second.api('GET', `/api/ai/history?board_id=${board}`)).body.entries.find(
        (e: any) => e.id === stranded,
      );
      assert.deepEqual([cut.status, cut.error_code], ['error', 'interrupted']);
    } finally {
      await first?.close();
      await second?.close();
      await fsp.rm(dataDir, { recursive: true, force: true });
    }
  });
});
