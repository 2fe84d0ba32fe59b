import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { startService, waitForJob, type TestService } from '../helpers/service.js';
import { ffmpegPath, frameAt, makeImage, makeVideo, tempDir } from '../helpers/fixtures.js';

const run = promisify(execFile);
const W = 64;
const H = 36;
const FPS = 10;

/** Mean absolute sample value (0..1) of the render's audio between two times, decoded to mono 8 kHz floats. */
async function loudness(file: string, from: number, to: number): Promise<number> {
  const { stdout } = await run(
    await ffmpegPath(),
    ['-hide_banner', '-loglevel', 'error', '-i', file, '-vn', '-ac', '1', '-ar', '8000', '-f', 'f32le', 'pipe:1'],
    { encoding: 'buffer', maxBuffer: 16 * 1024 * 1024 },
  );
  // The Buffer may be a view into a larger ArrayBuffer: copy out exactly its bytes (whole samples) before reading. On
  // Node 24 (a 64 KiB Buffer pool) the second of audio below, 32 KB, is a slice of the shared pool at some offset:
  // reading from the ArrayBuffer's start failed "sound stops with its item" (docs/architecture.md, Node versions).
  const pcm = stdout as unknown as Buffer;
  const samples = new Float32Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.length - (pcm.length % 4)));
  // The audio track may end before the video (amix stops with its longest input): what is not there is silence.
  const slice = samples.subarray(Math.round(from * 8000), Math.round(to * 8000));
  return slice.reduce((sum, v) => sum + Math.abs(v), 0) / Math.round((to - from) * 8000);
}

/**
 * Every stream of an item ends with the item, whichever ffmpeg renders (Debian's 5.1 or the npm-shipped 2018
 * build): ffmpeg 5.1's alphamerge repeats the layer's last frame while its (longer) opacity mask has frames left,
 * which kept a faded item on screen, fully opaque, for a second after its end.
 */
describe('timeline: nothing outlives its item', () => {
  let t: TestService;
  let board: string;
  let fixtures: string;
  let output: string;

  before(async () => {
    t = await startService();
    board = await t.createBoard('Fades');
    fixtures = await tempDir();
    const upload = async (file: string) => {
      const up = await t.upload(board, file);
      assert.equal(up.status, 200, up.text);
      return up.body.url as string;
    };
    const [white, whiteStill, tone, blackStill] = await Promise.all([
      makeVideo(path.join(fixtures, 'white.mp4'), {
        width: W,
        height: H,
        fps: FPS,
        duration: 2,
        source: 'color=c=white',
      }).then(upload),
      makeImage(path.join(fixtures, 'white.png'), { width: W, height: H, source: 'color=c=white' }).then(upload),
      makeVideo(path.join(fixtures, 'tone.mp4'), {
        width: W,
        height: H,
        fps: FPS,
        duration: 3,
        source: 'color=c=black',
        tone: 440,
      }).then(upload),
      makeImage(path.join(fixtures, 'black.png'), { width: W, height: H, source: 'color=c=black' }).then(upload),
    ]);
    const clip = (id: string, url: string, mediaType: string, duration: number) => ({
      id,
      source: 'REMOTE',
      mediaType,
      url,
      name: id,
      duration,
    });
    const fadeIn = {
      opacity: [
        { position: 0, value: '0', easing: 'Linear' },
        { position: 2, value: '100', easing: 'Linear' },
      ],
    };
    const data = {
      videoSize: { w: W, h: H },
      clips: [
        clip('white', white, 'video', 2),
        clip('whiteStill', whiteStill, 'image', 5),
        clip('tone', tone, 'video', 3),
        clip('blackStill', blackStill, 'image', 5),
      ],
      channels: [
        {
          id: 'top',
          name: 'Fades',
          visible: true,
          items: [
            // A white clip and a looped white still, each fading in over its own 2 seconds, end to end.
            { id: 'a', clipId: 'white', trimStart: 0, trimEnd: 2, start: 0, propertyKeyframes: fadeIn },
            { id: 'b', clipId: 'whiteStill', trimStart: 0, trimEnd: 2, start: 2, propertyKeyframes: fadeIn },
          ],
        },
        {
          id: 'below',
          name: 'Below',
          visible: true,
          items: [
            // One second of a 3-second clip with a tone: its sound must stop at 1 s.
            { id: 't', clipId: 'tone', trimStart: 0, trimEnd: 1, start: 0 },
            // A black still that keeps the timeline running after the fades end.
            { id: 'd', clipId: 'blackStill', trimStart: 0, trimEnd: 1, start: 4 },
          ],
        },
      ],
    };
    const created = await t.api('POST', `/api/moodboards/${board}/video-projects`, { name: 'fades' });
    assert.equal(created.status, 201, created.text);
    const pid = created.body.id as string;
    const put = await t.api('PUT', `/api/moodboards/${board}/video-projects/${pid}`, {
      data: { ...created.body.data, ...data },
    });
    assert.equal(put.status, 200, put.text);
    const start = await t.api('POST', `/api/moodboards/${board}/video-projects/${pid}/render`, {
      format: 'mp4',
      codec: 'h264',
      crf: 0,
      size_preset: 'source',
      fps: FPS,
    });
    assert.equal(start.status, 202, start.text);
    const done = await waitForJob(t, `/api/moodboards/${board}/video-projects/${pid}/render/${start.body.job_id}`, {
      timeoutMs: 120_000,
      what: 'render',
    });
    assert.equal(done.status, 'complete', done.error);
    output = (await t.service.ctx.media.resolveUrl(done.output_url)).path;
  });
  after(async () => {
    await t.close();
    await fsp.rm(fixtures, { recursive: true, force: true });
  });

  const luma = async (time: number) => (await frameAt(output, time, W, H)).at(W / 2, H / 2)[1];

  it('a fading item is gone right after its end: the next one shows its own opacity', async () => {
    // Sanity: half-way through the first fade.
    assert.ok(Math.abs((await luma(1)) - 128) <= 20, `t=1: ${await luma(1)}`);
    // Just after a's end, b is at 5 % and 25 % (a lingering a would be 255).
    assert.ok((await luma(2.1)) <= 13 + 20, `t=2.1: ${await luma(2.1)}`);
    assert.ok(Math.abs((await luma(2.5)) - 64) <= 20, `t=2.5: ${await luma(2.5)}`);
  });

  it('a faded looped still is gone right after its end', async () => {
    for (const time of [4.1, 4.5, 4.9])
      assert.ok((await luma(time)) <= 20, `t=${time}: ${await luma(time)} (black expected)`);
  });

  it('sound stops with its item', async () => {
    assert.ok((await loudness(output, 0.2, 0.8)) > 0.05, 'the tone plays during its item');
    assert.ok((await loudness(output, 1.2, 4.8)) < 0.005, 'and is silent after its end');
  });
});
