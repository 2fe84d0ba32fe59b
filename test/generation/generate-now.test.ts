import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { startService, type TestService } from '../helpers/service.js';
import { startOpenAIDouble, type OpenAIDouble } from '../helpers/ai-doubles/openai.js';

const KEY = 'sk-test-generate-now-key-1234';

/** A PNG no other test produces: random pixels, so equality proves the bytes came from this double. */
const noisePng = async (w = 40, h = 30) =>
  sharp(Buffer.from(Array.from({ length: w * h * 3 }, () => Math.floor(Math.random() * 256))), {
    raw: { width: w, height: h, channels: 3 },
  })
    .png()
    .toBuffer();

async function boardFiles(t: TestService, board: string): Promise<string[]> {
  return fsp.readdir(path.join(t.dataDir, 'media', 'admin', board));
}

describe('generation answered at once (OpenAI images)', () => {
  let openai: OpenAIDouble;
  let t: TestService;
  before(async () => {
    openai = await startOpenAIDouble({ apiKey: KEY });
    t = await startService({
      OPENAI_API_KEY: KEY,
      OPENAI_BASE_URL: `${openai.url}/v1`,
      GOOGLE_GENERATIVE_AI_API_KEY: '',
      AI_MAX_RETRIES: '2',
    });
  });
  after(async () => {
    await t.close();
    await openai.close();
  });

  it('writes the image the provider sent, byte for byte, named from the prompt, with data.generation and a history entry', async () => {
    const board = await t.createBoard();
    const png = await noisePng();
    openai.images.push(png);
    const res = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'gpt-image-1',
      prompt: 'A red fox in the snow',
      aspect_ratio: '3:2',
      params: { quality: 'low' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'complete');
    assert.equal(res.body.element.type, 'image');
    assert.equal(decodeURIComponent(res.body.element.url), `/media/${board}/A red fox in the snow.png`);
    assert.equal(res.body.cost_estimate, 0.042);
    const served = await fetch(t.baseUrl + res.body.element.url);
    assert.ok(Buffer.from(await served.arrayBuffer()).equals(png), 'the file is the bytes the provider sent');

    const sent = openai.received('POST', /images\/generations/).at(-1)!.json;
    assert.deepEqual(
      [sent.model, sent.prompt, sent.size, sent.n, sent.quality],
      ['gpt-image-1', 'A red fox in the snow', '1536x1024', 1, 'low'],
    );

    const el = (await t.api('GET', `/api/moodboards/${board}/elements/${res.body.element.id}`)).body;
    assert.deepEqual(el.data.generation.model, 'gpt-image-1');
    assert.equal(el.data.generation.prompt, 'A red fox in the snow');
    assert.deepEqual(el.data.generation.params, { quality: 'low' });
    assert.equal(el.data.generation.history_entry_id, res.body.history_entry_id);

    const history = (await t.api('GET', `/api/ai/history?board_id=${board}`)).body.entries;
    assert.equal(history.length, 1);
    assert.equal(history[0].id, res.body.history_entry_id);
    assert.equal(history[0].status, 'complete');
    assert.equal(history[0].element_id, res.body.element.id);
    assert.ok(history[0].duration_ms >= 0);

    // A second image with the same prompt gets its own name, and the history lists it first.
    openai.images.push(await noisePng());
    const again = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'gpt-image-1',
      prompt: 'A red fox in the snow',
      aspect_ratio: '1:1',
    });
    assert.equal(decodeURIComponent(again.body.element.url), `/media/${board}/A red fox in the snow (1).png`);
    const both = (await t.api('GET', `/api/ai/history?board_id=${board}`)).body.entries;
    assert.deepEqual(
      both.map((e: any) => e.id),
      [again.body.history_entry_id, res.body.history_entry_id],
    );
  });

  it('refuses what the model cannot do, naming it, and writes nothing', async () => {
    const board = await t.createBoard();
    const before = openai.requests.length;
    const unknown = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'no-such-model',
      prompt: 'x',
      aspect_ratio: '1:1',
    });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.code, 'unknown_model');
    assert.match(unknown.body.error.message, /no-such-model/);
    const unconfigured = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'imagen-4',
      prompt: 'x',
      aspect_ratio: '1:1',
    });
    assert.equal(unconfigured.status, 400);
    assert.equal(unconfigured.body.error.code, 'provider_not_configured');
    assert.match(unconfigured.body.error.message, /GOOGLE_GENERATIVE_AI_API_KEY/);
    const ratio = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'gpt-image-1',
      prompt: 'x',
      aspect_ratio: '16:9',
    });
    assert.equal(ratio.status, 400);
    assert.match(ratio.body.error.message, /1:1, 3:2, 2:3/);
    const badRatio = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'gpt-image-1',
      prompt: 'x',
      aspect_ratio: 'wide',
    });
    assert.equal(badRatio.status, 400);
    assert.equal(badRatio.body.error.code, 'invalid_request');
    const longParamName = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'gpt-image-1',
      prompt: 'x',
      aspect_ratio: '1:1',
      params: { ['k'.repeat(101)]: 1 },
    });
    assert.equal(longParamName.status, 400, 'a parameter name over 100 characters');
    const noImageInput = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'dall-e-3',
      prompt: 'x',
      aspect_ratio: '1:1',
      input_image_url: `/media/${board}/x.png`,
    });
    assert.equal(noImageInput.status, 400);
    const missingBoard = await t.api('POST', '/api/ai/generate', {
      board_id: 'bd_missing',
      model: 'gpt-image-1',
      prompt: 'x',
      aspect_ratio: '1:1',
    });
    assert.equal(missingBoard.status, 404);
    assert.equal(openai.requests.length, before, 'no provider call');
    assert.deepEqual(await boardFiles(t, board), []);
  });

  it('sends an input image from the board to the edits endpoint', async () => {
    const board = await t.createBoard();
    const source = await noisePng(16, 16);
    const up = await t.upload(board, { name: 'source.png', data: source });
    assert.equal(up.status, 200, up.text);
    openai.images.push(await noisePng());
    const res = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'gpt-image-1',
      prompt: 'make it blue',
      aspect_ratio: '1:1',
      input_image_url: up.body.url,
    });
    assert.equal(res.status, 200, res.text);
    const edit = openai.received('POST', /images\/edits/).at(-1)!;
    const form = await new Request('http://x/', {
      method: 'POST',
      headers: { 'content-type': String(edit.headers['content-type']) },
      body: new Uint8Array(edit.body),
    }).formData();
    const sentImage = [...form.entries()].find(([k]) => k.startsWith('image'))![1] as File;
    assert.ok(Buffer.from(await sentImage.arrayBuffer()).equals(source));
    assert.equal(form.get('prompt'), 'make it blue');
  });

  it('maps provider failures: 401 -> 502 provider_auth_failed, 429 after retries -> 429 retry_after, 500 then success', async () => {
    const board = await t.createBoard();
    assert.equal(
      (await t.api('PUT', '/api/ai/providers/openai', { api_key: 'sk-wrong-key-000000000000' })).status,
      200,
    );
    try {
      const res = await t.api('POST', '/api/ai/generate', {
        board_id: board,
        model: 'gpt-image-1',
        prompt: 'x',
        aspect_ratio: '1:1',
      });
      assert.equal(res.status, 502);
      assert.equal(res.body.error.code, 'provider_auth_failed');
      assert.match(res.body.error.message, /openai/);
      assert.ok(!res.text.includes('sk-wrong-key'), 'the key is not echoed');
      const h = (await t.api('GET', `/api/ai/history?board_id=${board}`)).body.entries;
      assert.deepEqual([h[0].status, h[0].error_code], ['error', 'provider_auth_failed']);
      assert.deepEqual(await boardFiles(t, board), []);
    } finally {
      await t.api('DELETE', '/api/ai/providers/openai');
    }

    const limited = {
      status: 429,
      headers: { 'retry-after': '7', 'retry-after-ms': '20' },
      json: { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } },
    };
    openai.script('POST /v1/images', limited, limited, limited);
    const n = openai.received('POST', /images/).length;
    const res = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'gpt-image-1',
      prompt: 'x',
      aspect_ratio: '1:1',
    });
    assert.equal(res.status, 429);
    assert.equal(res.body.error.code, 'rate_limited');
    assert.equal(res.body.error.info.retry_after, 7);
    assert.equal(openai.received('POST', /images/).length - n, 3, 'one call and two retries');

    openai.script('POST /v1/images', {
      status: 500,
      json: { error: { message: 'The server had an error', type: 'server_error' } },
    });
    const png = await noisePng();
    openai.images.push(png);
    const ok = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'gpt-image-1',
      prompt: 'retry me',
      aspect_ratio: '1:1',
    });
    assert.equal(ok.status, 200, ok.text);
    assert.ok(Buffer.from(await (await fetch(t.baseUrl + ok.body.element.url)).arrayBuffer()).equals(png));
    assert.deepEqual(await boardFiles(t, board), ['retry me.png'], 'only the finished image, no temp file');
  });

  it('gives up on a hung provider at the time limit (504) and leaves no file', async () => {
    const hungService = await startService({
      OPENAI_API_KEY: KEY,
      OPENAI_BASE_URL: `${openai.url}/v1`,
      AI_REQUEST_TIMEOUT_MS: '400',
      AI_MAX_RETRIES: '0',
    });
    try {
      const board = await hungService.createBoard();
      openai.script('POST /v1/images', { hang: true });
      const res = await hungService.api('POST', '/api/ai/generate', {
        board_id: board,
        model: 'gpt-image-1',
        prompt: 'never',
        aspect_ratio: '1:1',
      });
      assert.equal(res.status, 504);
      assert.equal(res.body.error.code, 'provider_timeout');
      assert.deepEqual(await boardFiles(hungService, board), []);
      const h = (await hungService.api('GET', `/api/ai/history?board_id=${board}`)).body.entries[0];
      assert.equal(h.error_code, 'provider_timeout');
    } finally {
      await hungService.close();
    }
  });

  it('a provider content refusal is a 422 with its reason', async () => {
    const board = await t.createBoard();
    openai.script('POST /v1/images', {
      status: 400,
      json: {
        error: {
          message: 'Your request was rejected as a result of our safety system.',
          type: 'invalid_request_error',
          code: 'moderation_blocked',
        },
      },
    });
    const res = await t.api('POST', '/api/ai/generate', {
      board_id: board,
      model: 'gpt-image-1',
      prompt: 'something',
      aspect_ratio: '1:1',
    });
    assert.equal(res.status, 422);
    assert.equal(res.body.error.code, 'content_refused');
    assert.match(res.body.error.info.reason, /safety system/);
  });
});
