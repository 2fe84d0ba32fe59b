import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { startAnthropicDouble, type AnthropicDouble } from '../helpers/ai-doubles/anthropic.js';
import { startOpenAIDouble, type OpenAIDouble } from '../helpers/ai-doubles/openai.js';
import { HttpDouble, sendJson, sse } from '../helpers/ai-doubles/http-double.js';
import { makeImage, makeVideo, tempDir } from '../helpers/fixtures.js';
import { eventually, startService, type TestService } from '../helpers/service.js';
import { postSse, type SseAnswer } from './sse.js';

const OPENAI_KEY = 'sk-test-agents-openai-0123';
const ANTHROPIC_KEY = 'sk-ant-test-agents-4567';
const A = '/api/agents';

const CARD_HTML =
  '<!doctype html><html><head><style>body{margin:0;background:rgb(255,0,0)}</style></head><body></body></html>';

describe('agents: chat, cards, apply, reject, auto-apply', () => {
  let openai: OpenAIDouble;
  let anthropic: AnthropicDouble;
  let s: TestService;
  let board: string;
  let dir: string;
  /** A local OpenAI-compatible server whose answer stops after its first delta until the test opens the gate. */
  let local: HttpDouble;
  let openGate: () => void = () => undefined;
  let releasedByClient = false;

  before(async () => {
    openai = await startOpenAIDouble({ apiKey: OPENAI_KEY });
    anthropic = await startAnthropicDouble({ apiKey: ANTHROPIC_KEY });
    local = new HttpDouble();
    local.route('GET', /^\/v1\/models$/, 'GET /v1/models', (_rec, res) =>
      sendJson(res, 200, { object: 'list', data: [{ id: 'gated', object: 'model' }] }),
    );
    local.route('POST', /^\/v1\/chat\/completions$/, 'POST /v1/chat/completions', async (_rec, res) => {
      const gate = new Promise<void>((resolve) => (openGate = resolve));
      const stream = sse(res);
      const chunk = (delta: unknown, finish_reason: string | null = null) =>
        stream.send({
          id: 'c1',
          object: 'chat.completion.chunk',
          created: 0,
          model: 'gated',
          choices: [{ index: 0, delta, finish_reason }],
        });
      chunk({ role: 'assistant', content: 'First' });
      // Released by the client's first event; a service that buffered would get the rest after 10 s instead of hanging.
      releasedByClient = await Promise.race([
        gate.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 10_000)),
      ]);
      chunk({ content: ' and last.' });
      chunk({}, 'stop');
      stream.raw('data: [DONE]\n\n');
      stream.end();
    });
    await local.listen();
    s = await startService({
      OPENAI_API_KEY: OPENAI_KEY,
      OPENAI_BASE_URL: `${openai.url}/v1`,
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
      ANTHROPIC_BASE_URL: `${anthropic.url}/v1`,
      GOOGLE_GENERATIVE_AI_API_KEY: '',
      REPLICATE_API_TOKEN: '',
      FAL_KEY: '',
      OPENAI_COMPATIBLE_BASE_URL: `${local.url}/v1`,
      ALLOWED_ORIGINS: 'app://board',
    });
    board = await s.createBoard('Agents');
    dir = await tempDir('bms-agents-');
  });
  after(async () => {
    await s.close();
    await Promise.all([openai.close(), anthropic.close(), local.close()]);
    await fsp.rm(dir, { recursive: true, force: true });
  });

  const session = async (model = 'gpt-4.1', agent_type = 'board-helper') => {
    const res = await s.api('POST', `${A}/session`, { board_id: board, agent_type, model });
    assert.equal(res.status, 200, res.text);
    return res.body.session_id as string;
  };
  const chat = (session_id: string, content: string, extra: Record<string, unknown> = {}) =>
    postSse(s.baseUrl, `${A}/chat`, { session_id, messages: [{ role: 'user', content }], ...extra });
  const named = (answer: SseAnswer, event: string) => answer.events.filter((e) => e.event === event);
  const done = (answer: SseAnswer) => {
    const d = named(answer, 'done');
    assert.equal(
      d.length,
      1,
      `one done event, got ${JSON.stringify(answer.events.map((e) => e.event))} ${JSON.stringify(named(answer, 'error'))}`,
    );
    assert.equal(answer.events.at(-1)?.event, 'done', 'done is the last event');
    return d[0].data;
  };
  const htmlCard = async (name: string) => {
    const res = await s.api('POST', `/api/moodboards/${board}/elements`, { type: 'html', name, width: 64, height: 48 });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };
  const textElement = async (x = 10, y = 20) =>
    (
      await s.api('POST', `/api/moodboards/${board}/elements`, {
        type: 'text',
        name: 'note',
        data: { text: 'hi' },
        x,
        y,
      })
    ).body;

  it('streams text deltas as message events before done, and remembers the conversation', async () => {
    const sid = await session();
    openai.chat.push({ chunks: ['Hel', 'lo ', 'there', '!'] });
    // From the desktop app's origin: the stream carries the CORS headers the guard set.
    const answer = await postSse(
      s.baseUrl,
      `${A}/chat`,
      { session_id: sid, messages: [{ role: 'user', content: 'Say hello' }] },
      { headers: { origin: 'app://board' } },
    );
    assert.equal(answer.status, 200);
    assert.match(answer.contentType, /^text\/event-stream/);
    assert.equal(answer.allowOrigin, 'app://board');
    const deltas = named(answer, 'message').map((e) => e.data.delta);
    assert.deepEqual(deltas, ['Hel', 'lo ', 'there', '!']);
    const body = done(answer);
    assert.equal(body.message, 'Hello there!');
    assert.deepEqual(body.actions, []);
    const request = openai.chatRequests.at(-1);
    assert.equal(request.stream, true);
    assert.match(request.messages[0].content, /Board "Agents"/, 'the board is described in the system prompt');

    openai.chat.push({ text: 'Second answer.' });
    const second = await s.api(
      'POST',
      `${A}/chat`,
      { session_id: sid, messages: [{ role: 'user', content: 'And again' }] },
      { accept: 'application/json' },
    );
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(second.body, { message: 'Second answer.', actions: [] });
    const roles = openai.chatRequests
      .at(-1)
      .messages.map((m: any) => `${m.role}:${typeof m.content === 'string' ? m.content : ''}`);
    assert.deepEqual(
      roles.slice(1),
      ['user:Say hello', 'assistant:Hello there!', 'user:And again'],
      'the earlier turn is sent again',
    );
  });

  it('sends each delta while the model is still writing (a local OpenAI-compatible model)', async () => {
    const sid = await session('openai-compatible/gated');
    let whileOpen: string | undefined;
    const answer = await postSse(
      s.baseUrl,
      `${A}/chat`,
      { session_id: sid, messages: [{ role: 'user', content: 'go' }] },
      {
        onEvent: (e) => {
          if (e.event === 'message' && whileOpen === undefined) {
            whileOpen = e.data.delta;
            openGate(); // the model's answer goes on only now that the client holds the first piece
          }
        },
      },
    );
    assert.equal(whileOpen, 'First');
    assert.ok(releasedByClient, 'the first delta reached the client while the model still held back the rest');
    assert.equal(done(answer).message, 'First and last.');
  });

  it('a provider failure is an error event in the stream, and the error status with Accept: application/json', async () => {
    const sid = await session();
    const refused = {
      status: 401,
      json: {
        error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' },
      },
    };
    openai.script('POST /v1/chat/completions', refused, refused);
    const answer = await chat(sid, 'hello');
    assert.equal(answer.status, 200);
    assert.deepEqual(
      answer.events.map((e) => e.event),
      ['error'],
    );
    assert.equal(answer.events[0].data.error.code, 'provider_auth_failed');
    const json = await s.api(
      'POST',
      `${A}/chat`,
      { session_id: sid, messages: [{ role: 'user', content: 'hello' }] },
      { accept: 'application/json' },
    );
    assert.equal(json.status, 502);
    assert.equal(json.body.error.code, 'provider_auth_failed');
    assert.doesNotMatch(json.text, new RegExp(OPENAI_KEY), 'the key is never echoed');
  });

  it('turns an update_element_html call streamed in pieces into one card with a rendered preview; apply bumps the version and the served file', async () => {
    const card = await htmlCard('Poster');
    const sid = await session();
    openai.chat.push({
      text: 'Here is a red card.',
      toolCalls: [{ name: 'update_element_html', input: { element_id: card.id, html: CARD_HTML } }],
    });
    openai.chat.push({ text: 'Apply it when you like.' });
    const answer = await chat(sid, 'Make it red');
    const body = done(answer);
    const actions = named(answer, 'action');
    assert.equal(actions.length, 1, 'one card for one call whose arguments came in two pieces');
    const action = actions[0].data;
    assert.equal(action.type, 'update_element_html');
    assert.equal(action.status, 'proposed');
    assert.deepEqual(action.params, { element_id: card.id, html: CARD_HTML });
    assert.equal(action.preview.html, CARD_HTML);
    assert.equal(action.preview.html_version, 1);
    assert.equal(action.preview.element.id, card.id);
    assert.deepEqual([action.preview.width, action.preview.height], [64, 48], "rendered at the card's own size");
    const png = await fetch(s.baseUrl + action.preview.image_url);
    assert.equal(png.status, 200);
    const { data, info } = await sharp(Buffer.from(await png.arrayBuffer()))
      .raw()
      .toBuffer({ resolveWithObject: true });
    assert.deepEqual([info.width, info.height], [64, 48]);
    assert.deepEqual([...data.subarray(0, 3)], [255, 0, 0], 'the preview shows the new document');
    assert.equal(body.message, 'Here is a red card.Apply it when you like.');
    assert.deepEqual(
      body.actions.map((a: any) => a.id),
      [action.id],
    );
    const before = await s.api('GET', card.url);
    assert.doesNotMatch(before.text, /rgb\(255,0,0\)/, 'nothing changes before apply');

    const applied = await s.api('POST', `${A}/apply-action`, { session_id: sid, action_id: action.id });
    assert.equal(applied.status, 200, applied.text);
    assert.equal(applied.body.action.status, 'applied');
    assert.equal(applied.body.elements[0].id, card.id);
    assert.equal(applied.body.elements[0].data.htmlVersion, 2);
    assert.equal(applied.body.board.id, board);
    assert.ok(applied.body.board.elements.some((e: any) => e.id === card.id && e.data.htmlVersion === 2));
    assert.equal((await s.api('GET', card.url)).text, CARD_HTML, 'the served file is the new document');
    const versions = await s.api('GET', `/api/moodboards/${board}/elements/${card.id}/html/versions`);
    assert.deepEqual(
      versions.body.versions.map((v: any) => v.version),
      [1, 2],
      'a version like PUT .../html makes',
    );

    const again = await s.api('POST', `${A}/apply-action`, { session_id: sid, action_id: action.id });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'action_already_applied');
    const reject = await s.api('POST', `${A}/reject-action`, { session_id: sid, action_id: action.id });
    assert.equal(reject.status, 409);
    const unknown = await s.api('POST', `${A}/apply-action`, { session_id: sid, action_id: 'act_nope' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'action_not_found');
  });

  it('anthropic: reject leaves the board alone; a card whose element was deleted meanwhile is a 409 naming it', async () => {
    const el = await textElement(10, 20);
    const sid = await session('claude-sonnet-4-5');
    anthropic.chat.push({
      text: 'Two suggestions.',
      toolCalls: [
        { name: 'move_element', input: { element_id: el.id, x: 300, y: 400 } },
        { name: 'delete_element', input: { element_id: el.id } },
      ],
    });
    anthropic.chat.push({ text: 'Done.' });
    const answer = await chat(sid, 'Tidy up');
    const body = done(answer);
    assert.deepEqual(
      named(answer, 'message')
        .map((e) => e.data.delta)
        .join(''),
      'Two suggestions.Done.',
    );
    const [move, del] = ['move_element', 'delete_element'].map((t) => body.actions.find((a: any) => a.type === t));
    assert.ok(move && del, JSON.stringify(body.actions));
    assert.deepEqual(move.preview.from, { x: 10, y: 20 });
    assert.deepEqual(move.preview.to, { x: 300, y: 400 });
    assert.equal(del.preview.element.id, el.id, 'a delete shows the element as it is');
    const tools = anthropic.messageRequests
      .at(-2)
      .tools.map((t: any) => t.name)
      .sort();
    assert.deepEqual(tools, [
      'add_text',
      'convert_media',
      'create_html_card',
      'delete_element',
      'generate_image',
      'move_element',
      'trim_media',
      'update_element_html',
    ]);

    const rejected = await s.api('POST', `${A}/reject-action`, { session_id: sid, action_id: move.id });
    assert.equal(rejected.status, 200, rejected.text);
    assert.equal(rejected.body.action.status, 'rejected');
    const unchanged = await s.api('GET', `/api/moodboards/${board}/elements/${el.id}`);
    assert.deepEqual([unchanged.body.x, unchanged.body.y], [10, 20], 'a rejected card does not touch the board');
    const applyRejected = await s.api('POST', `${A}/apply-action`, { session_id: sid, action_id: move.id });
    assert.equal(applyRejected.status, 409);
    assert.equal(applyRejected.body.error.code, 'action_rejected');

    await s.api('DELETE', `/api/moodboards/${board}/elements/${el.id}`);
    const gone = await s.api('POST', `${A}/apply-action`, { session_id: sid, action_id: del.id });
    assert.equal(gone.status, 409);
    assert.equal(gone.body.error.code, 'element_deleted');
    assert.match(gone.body.error.message, new RegExp(`${el.id} \\("note"\\)`));
  });

  it('sends a bad tool argument back to the model; only the corrected call becomes a card', async () => {
    const el = await textElement();
    const sid = await session();
    openai.chat.push({ toolCalls: [{ name: 'move_element', input: { element_id: el.id, x: 'left', y: 5 } }] });
    openai.chat.push({ toolCalls: [{ name: 'move_element', input: { element_id: 'el_missing', x: 1, y: 5 } }] });
    openai.chat.push({ toolCalls: [{ name: 'move_element', input: { element_id: el.id, x: 120, y: 5 } }] });
    openai.chat.push({ text: 'Moved, pending your approval.' });
    const first = openai.chatRequests.length;
    const body = done(await chat(sid, 'Move the note right'));
    assert.equal(body.actions.length, 1);
    assert.deepEqual(body.actions[0].params, { element_id: el.id, x: 120, y: 5 });
    const requests = openai.chatRequests.slice(first);
    assert.equal(requests.length, 4, 'each tool answer went back to the model');
    const toolAnswer = (r: any) => String(r.messages.filter((m: any) => m.role === 'tool').at(-1)?.content);
    assert.match(toolAnswer(requests[1]), /Invalid arguments for move_element: x must be number/);
    assert.match(toolAnswer(requests[2]), /no element el_missing on this board/);
    assert.match(toolAnswer(requests[3]), /"status":"proposed"/);
  });

  it('offers each agent type its own tools; a call to another tool is refused back to the model', async () => {
    const el = await textElement();
    const sid = await session('gpt-4.1', 'prompt-suggestor');
    openai.chat.push({ toolCalls: [{ name: 'delete_element', input: { element_id: el.id } }] });
    openai.chat.push({ toolCalls: [{ name: 'generate_image', input: { prompt: 'a quiet harbour at dawn' } }] });
    openai.chat.push({ text: 'Try this prompt.' });
    const first = openai.chatRequests.length;
    const body = done(await chat(sid, 'clean up and suggest a prompt'));
    assert.deepEqual(
      body.actions.map((a: any) => a.type),
      ['generate_image'],
    );
    const requests = openai.chatRequests.slice(first);
    assert.deepEqual(requests[0].tools.map((t: any) => t.function.name).sort(), ['add_text', 'generate_image']);
    assert.match(String(requests[1].messages.at(-1).content), /delete_element/);
    assert.equal(
      (await s.api('GET', `/api/moodboards/${board}/elements/${el.id}`)).status,
      200,
      'the element is still there',
    );
  });

  it('auto-apply executes cards as they arrive (applied, or failed with the reason)', async () => {
    const sid = await session('gpt-4.1', 'terminal');
    const on = await s.api('POST', `${A}/auto-apply`, { session_id: sid, enabled: true });
    assert.deepEqual(on.body, { session_id: sid, auto_apply: true });
    openai.chat.push({
      toolCalls: [
        { name: 'add_text', input: { text: 'from the agent', x: 5, y: 6 } },
        { name: 'send_to_terminal', input: { text: 'ls -la' } },
      ],
    });
    openai.chat.push({ text: 'ok' });
    const answer = await chat(sid, 'note it and list files');
    const body = done(answer);
    const text = body.actions.find((a: any) => a.type === 'add_text');
    const term = body.actions.find((a: any) => a.type === 'send_to_terminal');
    assert.equal(text.status, 'applied');
    assert.equal(term.status, 'failed');
    assert.equal(term.error.code, 'terminal_not_connected');
    assert.deepEqual(
      named(answer, 'action')
        .map((e) => e.data.status)
        .sort(),
      ['applied', 'failed'],
      'the stream carries the outcome',
    );
    const elements = (await s.api('GET', `/api/moodboards/${board}/elements`)).body;
    assert.ok(
      elements.some((e: any) => e.type === 'text' && e.data.text === 'from the agent' && e.x === 5 && e.y === 6),
    );
    assert.match(
      JSON.stringify(openai.chatRequests.at(-1).messages),
      /terminal_not_connected|No terminal is live/,
      'the model learns of the failure',
    );

    // The failed card may be applied again once a terminal is live on the board.
    await s.api('POST', '/api/terminal-bridge/session', {
      session_id: 'pty-agents',
      board_id: board,
      enabled: true,
      bot_id: 'agentbot',
    });
    await s.api('POST', '/api/terminal-bridge/chat', { chat_id: 7, enabled: true, bot_id: 'agentbot' });
    const retry = await s.api('POST', `${A}/apply-action`, { session_id: sid, action_id: term.id });
    assert.equal(retry.status, 200, retry.text);
    const items = await s.api('GET', '/api/terminal-bridge/to-terminal?wait=0&bot_id=agentbot');
    assert.deepEqual(
      items.body.items.map((i: any) => i.text),
      ['ls -la'],
    );
    await s.api('POST', '/api/terminal-bridge/session', {
      session_id: 'pty-agents',
      board_id: board,
      enabled: false,
      bot_id: 'agentbot',
    });

    await s.api('POST', `${A}/auto-apply`, { session_id: sid, enabled: false });
    openai.chat.push({ toolCalls: [{ name: 'add_text', input: { text: 'not yet' } }] });
    const off = done(await chat(sid, 'one more'));
    assert.equal(off.actions[0].status, 'proposed');
  });

  it('gives references to the model: html of cards, images as image parts; an unknown reference is a 404 before any stream', async () => {
    const card = await htmlCard('Referenced');
    await s.api('PUT', `/api/moodboards/${board}/elements/${card.id}/html`, {
      html: '<!doctype html><html><body>REFERENCED-CARD</body></html>',
    });
    const up = await s.upload(board, await makeImage(path.join(dir, 'ref.png'), { width: 64, height: 32 }), {
      addToBoard: true,
    });
    const image =
      up.body.element ??
      (await s.api('GET', `/api/moodboards/${board}/elements`)).body.find((e: any) => e.url === up.body.url);
    const sid = await session();
    const missing = await chat(sid, 'look', { references: ['el_unknown'] });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'reference_not_found');

    openai.chat.push({ text: 'I see them.' });
    done(await chat(sid, 'What do you see?', { references: [card.id, image.id] }));
    const user = openai.chatRequests.at(-1).messages.at(-1);
    assert.equal(user.role, 'user');
    const text = user.content.find((p: any) => p.type === 'text').text;
    assert.match(text, /^What do you see\?/);
    assert.match(text, /REFERENCED-CARD/);
    assert.match(text, new RegExp(`${image.id}, type image, name "ref.png"`));
    const img = user.content.find((p: any) => p.type === 'image_url');
    assert.match(img.image_url.url, /^data:image\/jpeg;base64,/);

    openai.chat.push({ text: 'Still here.' });
    done(await chat(sid, 'and now?'));
    const history = JSON.stringify(openai.chatRequests.at(-1).messages);
    assert.doesNotMatch(history, /image_url/, 'images are sent in their turn only');
    assert.match(history, /REFERENCED-CARD/);
  });

  it('generate_image (preview: model, prompt, cost), create_html_card, convert and trim apply through the service logic', async () => {
    const video = await s.upload(
      board,
      await makeVideo(path.join(dir, 'clip.mp4'), { duration: 2, width: 64, height: 48 }),
      { addToBoard: true },
    );
    const videoEl = (await s.api('GET', `/api/moodboards/${board}/elements`)).body.find(
      (e: any) => e.url === video.body.url,
    );
    await eventually(async () =>
      (await s.api('GET', `/api/moodboards/${board}/elements/${videoEl.id}`)).body.data.probe_status === 'done'
        ? true
        : undefined,
    );
    const picture = await s.upload(board, await makeImage(path.join(dir, 'pic.png'), { width: 40, height: 30 }), {
      addToBoard: true,
    });
    const pictureEl = (await s.api('GET', `/api/moodboards/${board}/elements`)).body.find(
      (e: any) => e.url === picture.body.url,
    );

    const sid = await session();
    openai.chat.push({
      toolCalls: [
        { name: 'generate_image', input: { prompt: 'a red fox', aspect_ratio: '4:3' } },
        { name: 'trim_media', input: { element_id: videoEl.id, start_seconds: 0.5, end_seconds: 9 } },
      ],
    });
    openai.chat.push({
      toolCalls: [
        { name: 'generate_image', input: { prompt: 'a red fox' } },
        { name: 'trim_media', input: { element_id: videoEl.id, start_seconds: 0.5, end_seconds: 1.5 } },
        { name: 'convert_media', input: { element_id: pictureEl.id, format: 'webp', width: 20 } },
        { name: 'create_html_card', input: { name: 'Agent card', html: CARD_HTML, x: 50 } },
      ],
    });
    openai.chat.push({ text: 'Four cards.' });
    const body = done(await chat(sid, 'do things'));
    assert.deepEqual(body.actions.map((a: any) => a.type).sort(), [
      'convert_media',
      'create_html_card',
      'generate_image',
      'trim_media',
    ]);
    const card = (t: string) => body.actions.find((a: any) => a.type === t);
    const refused = JSON.stringify(openai.chatRequests.at(-2).messages);
    assert.match(refused, /takes the aspect ratios 1:1, 3:2, 2:3, not 4:3/);
    assert.match(refused, /past the end of element/);

    const gen = card('generate_image');
    assert.deepEqual(
      {
        model: gen.preview.model,
        prompt: gen.preview.prompt,
        cost: gen.preview.cost_estimate,
        ratio: gen.preview.aspect_ratio,
      },
      { model: 'gpt-image-1', prompt: 'a red fox', cost: 0.042, ratio: '1:1' },
    );
    assert.equal(gen.params.model, 'gpt-image-1', 'the card runs the model its preview shows');
    const generated = await s.api('POST', `${A}/apply-action`, { session_id: sid, action_id: gen.id });
    assert.equal(generated.status, 200, generated.text);
    const image = generated.body.elements[0];
    assert.equal(image.type, 'image');
    assert.equal(image.data.generation.prompt, 'a red fox');
    assert.equal(image.data.generation.model, 'gpt-image-1');
    assert.equal(openai.received('POST', /\/images\/generations$/).at(-1)?.json.prompt, 'a red fox');
    assert.equal((await fetch(s.baseUrl + image.url)).headers.get('content-type'), 'image/png');

    const created = await s.api('POST', `${A}/apply-action`, {
      session_id: sid,
      action_id: card('create_html_card').id,
    });
    assert.equal(created.status, 200, created.text);
    const newCard = created.body.elements[0];
    assert.equal(newCard.type, 'html');
    assert.equal(newCard.data.htmlVersion, 1);
    assert.equal(newCard.x, 50);
    assert.equal((await s.api('GET', newCard.url)).text, CARD_HTML);

    const converted = await s.api('POST', `${A}/apply-action`, {
      session_id: sid,
      action_id: card('convert_media').id,
    });
    assert.equal(converted.status, 200, converted.text);
    const webp = await fetch(s.baseUrl + converted.body.elements[0].url);
    const meta = await sharp(Buffer.from(await webp.arrayBuffer())).metadata();
    assert.deepEqual([meta.format, meta.width], ['webp', 20]);

    const trimmed = await s.api('POST', `${A}/apply-action`, { session_id: sid, action_id: card('trim_media').id });
    assert.equal(trimmed.status, 200, trimmed.text);
    assert.equal(trimmed.body.elements[0].type, 'video');
    assert.ok(trimmed.body.board.elements.some((e: any) => e.id === trimmed.body.elements[0].id));
  });
});
