import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { streamText, tool, jsonSchema } from 'ai';
import { resolveChatModel } from '../../src/generation/models.js';
import type { DomainError } from '../../src/errors.js';
import { statusOf } from '../../src/http/errors.js';
import { logCapture, startService, type TestService } from '../helpers/service.js';
import { tempDir } from '../helpers/fixtures.js';
import { startOpenAIDouble, type OpenAIDouble } from '../helpers/ai-doubles/openai.js';
import { startAnthropicDouble, type AnthropicDouble } from '../helpers/ai-doubles/anthropic.js';

const OPENAI_KEY = 'sk-test-openai-0123456789abcd';
const ANTHROPIC_KEY = 'sk-ant-test-runtime-key-9876wxyz';

const ids = (list: { id: string }[]) => list.map((m) => m.id);

describe('generation providers and models', () => {
  let openai: OpenAIDouble;
  let anthropic: AnthropicDouble;
  let local: OpenAIDouble;
  before(async () => {
    openai = await startOpenAIDouble({ apiKey: OPENAI_KEY });
    anthropic = await startAnthropicDouble({ apiKey: ANTHROPIC_KEY });
    local = await startOpenAIDouble();
    local.models = ['llama3.2:latest', 'qwen2.5'];
  });
  after(async () => {
    await Promise.all([openai.close(), anthropic.close(), local.close()]);
  });

  it('lists nothing without keys and names the keys that enable each provider', async () => {
    const t = await startService({
      OPENAI_API_KEY: '',
      ANTHROPIC_API_KEY: '',
      GOOGLE_GENERATIVE_AI_API_KEY: '',
      REPLICATE_API_TOKEN: '',
      FAL_KEY: '',
      OPENAI_COMPATIBLE_BASE_URL: '',
    });
    try {
      const models = await t.api('GET', '/api/ai/models');
      assert.equal(models.status, 200);
      assert.deepEqual(models.body, { image: [], video: [], chat: [] });
      const providers = (await t.api('GET', '/api/ai/providers')).body.providers;
      assert.equal(providers.length, 6);
      assert.ok(providers.every((p: any) => p.configured === false && p.source === null && p.key_last4 === null));
      assert.equal(providers.find((p: any) => p.provider === 'replicate').env.key, 'REPLICATE_API_TOKEN');
      await assert.rejects(
        resolveChatModel(t.service.features.generation, 'gpt-4.1'),
        (e: DomainError) =>
          statusOf(e) === 400 && e.code === 'provider_not_configured' && /OPENAI_API_KEY/.test(e.message),
      );
      await assert.rejects(
        resolveChatModel(t.service.features.generation, 'no-such-model'),
        (e: DomainError) => statusOf(e) === 400 && e.code === 'unknown_model',
      );
      await assert.rejects(
        resolveChatModel(t.service.features.generation, 'gpt-image-1'),
        (e: DomainError) => e.code === 'unknown_model',
        'an image model is not a chat model',
      );
    } finally {
      await t.close();
    }
  });

  it('follows the configured keys: env, run-time PUT (0600 file, survives a restart), DELETE; keys never shown or logged', async () => {
    const dataDir = await tempDir('bms-gen-');
    const logs = logCapture();
    const env = {
      OPENAI_API_KEY: OPENAI_KEY,
      OPENAI_BASE_URL: `${openai.url}/v1`,
      ANTHROPIC_API_KEY: '',
      ANTHROPIC_BASE_URL: `${anthropic.url}/v1`,
      GOOGLE_GENERATIVE_AI_API_KEY: '',
      REPLICATE_API_TOKEN: '',
      FAL_KEY: '',
      OPENAI_COMPATIBLE_BASE_URL: '',
      LOG_LEVEL: 'debug',
    };
    let t: TestService = await startService(env, { dataDir, logStream: logs.stream });
    try {
      let models = (await t.api('GET', '/api/ai/models')).body;
      assert.ok(ids(models.image).includes('gpt-image-1'));
      assert.ok(ids(models.chat).includes('gpt-4.1'));
      assert.ok(!ids(models.chat).includes('claude-sonnet-4-5'));
      assert.deepEqual(models.video, [], 'no video model of OpenAI in the catalogue');
      assert.ok(models.chat.every((m: any) => m.provider === 'openai'));
      const gptImage = models.image.find((m: any) => m.id === 'gpt-image-1');
      assert.deepEqual(gptImage.aspect_ratios, ['1:1', '3:2', '2:3']);

      const put = await t.api('PUT', '/api/ai/providers/anthropic', { api_key: ANTHROPIC_KEY });
      assert.equal(put.status, 200);
      assert.equal(put.body.configured, true);
      assert.equal(put.body.source, 'runtime');
      assert.equal(put.body.key_last4, 'wxyz');
      const file = path.join(dataDir, 'ai-providers.json');
      assert.equal((await fsp.stat(file)).mode & 0o777, 0o600);
      models = (await t.api('GET', '/api/ai/models')).body;
      assert.ok(ids(models.chat).includes('claude-sonnet-4-5'));

      const listed = await t.api('GET', '/api/ai/providers');
      assert.ok(!listed.text.includes(ANTHROPIC_KEY) && !listed.text.includes(OPENAI_KEY), 'keys are never returned');
      const openaiView = listed.body.providers.find((p: any) => p.provider === 'openai');
      assert.deepEqual(
        [openaiView.source, openaiView.key_last4, openaiView.base_url],
        ['env', 'abcd', `${openai.url}/v1`],
      );

      // Refused input writes nothing.
      assert.equal((await t.api('PUT', '/api/ai/providers/anthropic', { api_key: 'has spaces in it' })).status, 400);
      assert.equal((await t.api('PUT', '/api/ai/providers/anthropic', { base_url: 'ftp://x' })).status, 400);
      assert.equal((await t.api('PUT', '/api/ai/providers/anthropic', {})).status, 400);
      assert.equal((await t.api('PUT', '/api/ai/providers/nope', { api_key: 'x' })).status, 400);
      assert.equal(
        (await t.api('GET', '/api/ai/providers')).body.providers.find((p: any) => p.provider === 'anthropic').key_last4,
        'wxyz',
      );

      // The run-time key works for a real call through the library.
      const claude = await resolveChatModel(t.service.features.generation, 'claude-haiku-4-5');
      anthropic.chat.push({ text: 'Bonjour tout le monde', toolCalls: [{ name: 'add_note', input: { text: 'hi' } }] });
      const r = streamText({
        model: claude.model,
        prompt: 'hi',
        maxRetries: 0,
        tools: {
          add_note: tool({
            inputSchema: jsonSchema<{ text: string }>({ type: 'object', properties: { text: { type: 'string' } } }),
          }),
        },
      });
      assert.equal(await r.text, 'Bonjour tout le monde');
      assert.deepEqual(
        (await r.toolCalls).map((c) => [c.toolName, c.input]),
        [['add_note', { text: 'hi' }]],
      );
      assert.equal(anthropic.messageRequests.at(-1).model, 'claude-haiku-4-5');

      await t.close();
      await fsp.chmod(file, 0o644); // as a copy restored from a backup might be
      t = await startService(env, { dataDir, logStream: logs.stream });
      assert.ok(
        ids((await t.api('GET', '/api/ai/models')).body.chat).includes('claude-haiku-4-5'),
        'the run-time key survives a restart',
      );
      assert.equal((await fsp.stat(file)).mode & 0o777, 0o600, 'wider permissions are narrowed at start');

      const del = await t.api('DELETE', '/api/ai/providers/anthropic');
      assert.equal(del.status, 200);
      assert.equal(del.body.configured, false);
      assert.ok(!ids((await t.api('GET', '/api/ai/models')).body.chat).includes('claude-haiku-4-5'));
      assert.ok(!(await fsp.readFile(file, 'utf8')).includes(ANTHROPIC_KEY), 'the deleted key is gone from the file');

      const text = logs
        .lines()
        .map((l) => JSON.stringify(l))
        .join('\n');
      assert.ok(text.includes('AI provider settings changed'), 'the change itself is logged');
      assert.ok(!text.includes(ANTHROPIC_KEY) && !text.includes(OPENAI_KEY), 'no key reaches the log');
    } finally {
      await t.close();
      await fsp.rm(dataDir, { recursive: true, force: true });
    }
  });

  it('resolveChatModel gives a streaming LanguageModel with tool calls (OpenAI chat completions)', async () => {
    const t = await startService({ OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: `${openai.url}/v1` });
    try {
      const resolved = await resolveChatModel(t.service.features.generation, 'gpt-4.1-mini');
      assert.equal(resolved.provider, 'openai');
      openai.chat.push({
        chunks: ['A ', 'red ', 'fox'],
        toolCalls: [{ name: 'generate_image', input: { prompt: 'a red fox', aspect_ratio: '1:1' } }],
      });
      const r = streamText({
        model: resolved.model,
        prompt: 'draw a fox',
        maxRetries: 0,
        tools: {
          generate_image: tool({
            description: 'make an image',
            inputSchema: jsonSchema<{ prompt: string; aspect_ratio: string }>({
              type: 'object',
              properties: { prompt: { type: 'string' }, aspect_ratio: { type: 'string' } },
              required: ['prompt'],
            }),
          }),
        },
      });
      const deltas: string[] = [];
      for await (const d of r.textStream) deltas.push(d);
      assert.deepEqual(deltas, ['A ', 'red ', 'fox']);
      const calls = await r.toolCalls;
      assert.equal(calls.length, 1);
      assert.equal(calls[0].toolName, 'generate_image');
      assert.deepEqual(calls[0].input, { prompt: 'a red fox', aspect_ratio: '1:1' });
      const sent = openai.chatRequests.at(-1);
      assert.equal(sent.model, 'gpt-4.1-mini');
      assert.equal(sent.stream, true);
      assert.equal(sent.tools[0].function.name, 'generate_image');
    } finally {
      await t.close();
    }
  });

  it('a keyless local OpenAI-compatible server adds the chat models it lists', async () => {
    const t = await startService({
      OPENAI_API_KEY: '',
      ANTHROPIC_API_KEY: '',
      GOOGLE_GENERATIVE_AI_API_KEY: '',
      REPLICATE_API_TOKEN: '',
      FAL_KEY: '',
      OPENAI_COMPATIBLE_BASE_URL: `${local.url}/v1`,
    });
    try {
      const models = (await t.api('GET', '/api/ai/models')).body;
      assert.deepEqual(models.chat, [
        { id: 'openai-compatible/llama3.2:latest', label: 'llama3.2:latest (local)', provider: 'openai-compatible' },
        { id: 'openai-compatible/qwen2.5', label: 'qwen2.5 (local)', provider: 'openai-compatible' },
      ]);
      const resolved = await resolveChatModel(t.service.features.generation, 'openai-compatible/qwen2.5');
      local.chat.push({ text: 'local answer' });
      assert.equal(await streamText({ model: resolved.model, prompt: 'hi', maxRetries: 0 }).text, 'local answer');
      assert.equal(local.chatRequests.at(-1).model, 'qwen2.5');
      assert.equal(
        local.received('POST', /chat/).at(-1)!.headers.authorization,
        undefined,
        'no key is sent to a keyless server',
      );
      await assert.rejects(
        resolveChatModel(t.service.features.generation, 'openai-compatible/not-pulled'),
        (e: DomainError) => e.code === 'unknown_model',
      );
    } finally {
      await t.close();
    }
  });
});
