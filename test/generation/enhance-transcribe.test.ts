import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { startService, type TestService } from '../helpers/service.js';
import { ffmpeg, ffmpegPath, makeAudio, makeVideo, tempDir } from '../helpers/fixtures.js';
import { startOpenAIDouble, type OpenAIDouble } from '../helpers/ai-doubles/openai.js';
import { startAnthropicDouble, type AnthropicDouble } from '../helpers/ai-doubles/anthropic.js';

const run = promisify(execFile);
const OPENAI_KEY = 'sk-test-transcribe-000011112222';
const ANTHROPIC_KEY = 'sk-ant-test-enhance-33334444';

/** The pitch of the tone in an audio file (test side): zero crossings of its loud samples, decoded by ffmpeg. */
async function toneOf(bytes: Buffer, dir: string): Promise<number> {
  const file = path.join(dir, `piece-${Math.random().toString(36).slice(2)}.mp3`);
  await fsp.writeFile(file, bytes);
  const { stdout } = await run(
    await ffmpegPath(),
    ['-v', 'error', '-i', file, '-f', 's16le', '-ac', '1', '-ar', '8000', 'pipe:1'],
    { encoding: 'buffer', maxBuffer: 64 << 20 },
  );
  const pcm = stdout as unknown as Buffer;
  let loud = 0;
  let crossings = 0;
  let prev = 0;
  for (let i = 0; i + 1 < pcm.length; i += 2) {
    const x = pcm.readInt16LE(i);
    if (Math.abs(x) < 300) continue;
    loud++;
    if (prev !== 0 && Math.sign(x) !== Math.sign(prev)) crossings++;
    prev = x;
  }
  return loud ? Math.round(((crossings / 2) * 8000) / loud / 100) * 100 : 0;
}

describe('prompt enhancement and transcription', () => {
  let openai: OpenAIDouble;
  let anthropic: AnthropicDouble;
  let t: TestService;
  let work: string;
  before(async () => {
    openai = await startOpenAIDouble({ apiKey: OPENAI_KEY });
    anthropic = await startAnthropicDouble({ apiKey: ANTHROPIC_KEY });
    work = await tempDir('bms-gen-audio-');
    t = await startService({
      OPENAI_API_KEY: OPENAI_KEY,
      OPENAI_BASE_URL: `${openai.url}/v1`,
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
      ANTHROPIC_BASE_URL: `${anthropic.url}/v1`,
      AI_TRANSCRIBE_MAX_BYTES: '15000',
    });
    openai.maxUploadBytes = 15000;
  });
  after(async () => {
    await t.close();
    await Promise.all([openai.close(), anthropic.close()]);
    await fsp.rm(work, { recursive: true, force: true });
  });

  it('enhances a prompt with a chat model, sending the board image as an image part', async () => {
    const board = await t.createBoard();
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 0, g: 90, b: 0 } } })
      .png()
      .toBuffer();
    const up = await t.upload(board, { name: 'ref.png', data: png });
    anthropic.chat.push({ text: '"A misty pine forest at dawn, soft green light, 35 mm film grain"' });
    const res = await t.api('POST', '/api/ai/prompt-enhancer/analyze', {
      prompt: 'a forest',
      reference_image_url: up.body.url,
      model: 'claude-haiku-4-5',
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.enhanced_prompt, 'A misty pine forest at dawn, soft green light, 35 mm film grain');
    const sent = anthropic.messageRequests.at(-1);
    assert.equal(sent.model, 'claude-haiku-4-5');
    const parts = sent.messages[0].content;
    assert.equal(parts[0].text, 'a forest');
    assert.equal(parts[1].type, 'image');
    assert.ok(Buffer.from(parts[1].source.data, 'base64').equals(png), 'the board file went as the image part');

    anthropic.chat.push({ text: '', finish: 'refusal' });
    const refused = await t.api('POST', '/api/ai/prompt-enhancer/analyze', {
      prompt: 'something',
      reference_image_url: null,
      model: 'claude-haiku-4-5',
    });
    assert.equal(refused.status, 422);
    assert.equal(refused.body.error.code, 'content_refused');
    const unknown = await t.api('POST', '/api/ai/prompt-enhancer/analyze', {
      prompt: 'x',
      reference_image_url: null,
      model: 'gpt-image-1',
    });
    assert.equal(unknown.status, 400);
    const outside = await t.api('POST', '/api/ai/prompt-enhancer/analyze', {
      prompt: 'x',
      reference_image_url: '/media/../../etc/passwd',
      model: 'claude-haiku-4-5',
    });
    assert.ok([400, 404].includes(outside.status), outside.text);
  });

  it('transcribes a short video in one upload and keeps data.transcript', async () => {
    const board = await t.createBoard();
    const clip = await makeVideo(path.join(work, 'talk.mp4'), { duration: 1, tone: 440, width: 64, height: 48 });
    const up = await t.upload(board, clip, { addToBoard: true });
    const before = openai.received('POST', /transcriptions/).length;
    openai.transcribe = () => ({
      text: ' Hello board. ',
      language: 'english',
      segments: [{ start: 0.1, end: 0.9, text: 'Hello board.' }],
    });
    const res = await t.api('POST', '/api/ai/transcribe', {
      board_id: board,
      element_id: up.body.element.id,
      language: null,
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual([res.body.text, res.body.language, res.body.pieces], ['Hello board.', 'en', 1]);
    const sent = openai.received('POST', /transcriptions/);
    assert.equal(sent.length - before, 1);
    const el = (await t.api('GET', `/api/moodboards/${board}/elements/${up.body.element.id}`)).body;
    assert.equal(el.data.transcript.text, 'Hello board.');
    assert.deepEqual(el.data.transcript.segments, [{ start: 0.1, end: 0.9, text: 'Hello board.' }]);
    const client = await t.api('PATCH', `/api/moodboards/${board}/elements/${up.body.element.id}`, {
      data: { transcript: 'forged' },
    });
    assert.equal(client.status, 400, 'clients cannot write data.transcript');
  });

  it("cuts audio over the upload limit on its silences and joins the pieces' texts in order", async () => {
    const board = await t.createBoard();
    // Three 2 s tones (300, 600, 900 Hz) separated by 1 s of silence: about 32 KB as compact MP3, limit 15 KB.
    const file = path.join(work, 'three tones.wav');
    await ffmpeg([
      '-f',
      'lavfi',
      '-i',
      "aevalsrc='if(lt(t,2),0.8*sin(2*PI*300*t),if(lt(t,3),0,if(lt(t,5),0.8*sin(2*PI*600*t),if(lt(t,6),0,0.8*sin(2*PI*900*t)))))':d=8:s=16000",
      file,
    ]);
    const up = await t.upload(board, file, { addToBoard: true });
    const sizes: number[] = [];
    openai.transcribe = async (bytes) => {
      sizes.push(bytes.length);
      const hz = await toneOf(bytes, work);
      return { text: `tone ${hz}.`, segments: [{ start: 0.25, end: 1.75, text: `tone ${hz}.` }] };
    };
    const res = await t.api('POST', '/api/ai/transcribe', {
      board_id: board,
      element_id: up.body.element.id,
      language: 'en',
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.pieces, 3);
    assert.equal(res.body.text, 'tone 300. tone 600. tone 900.');
    assert.equal(res.body.language, 'en');
    assert.ok(
      sizes.every((s) => s < 15000),
      `every piece fits the limit: ${sizes}`,
    );
    const starts = res.body.segments.map((s: any) => s.start);
    assert.ok(
      starts[0] < 1 && starts[1] > 2 && starts[2] > 5,
      `segment times are shifted by each piece's start: ${starts}`,
    );
    assert.equal(
      openai
        .received('POST', /transcriptions/)
        .at(-1)!
        .body.includes('name="language"\r\n\r\nen'),
      true,
      'the language was sent',
    );
    assert.deepEqual(
      await fsp.readdir(path.join(t.dataDir, 'tmp')).then((d) => d.filter((n) => n.startsWith('transcribe-'))),
      [],
      'work files removed',
    );
  });

  it('says which keys enable transcription when no speech provider is configured', async () => {
    const bare = await startService({
      OPENAI_API_KEY: '',
      ANTHROPIC_API_KEY: ANTHROPIC_KEY,
      ANTHROPIC_BASE_URL: `${anthropic.url}/v1`,
    });
    try {
      const board = await bare.createBoard();
      const clip = await makeAudio(path.join(work, 'quiet.wav'), { duration: 1 });
      const up = await bare.upload(board, clip, { addToBoard: true });
      const res = await bare.api('POST', '/api/ai/transcribe', {
        board_id: board,
        element_id: up.body.element.id,
        language: null,
      });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'provider_not_configured');
      assert.match(res.body.error.message, /OPENAI_API_KEY/);
    } finally {
      await bare.close();
    }
  });
});
