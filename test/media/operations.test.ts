import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { eventually, startService, waitForJob, type TestService } from '../helpers/service.js';
import { ffmpeg, ffmpegPath, makeAudio, makeCorrupt, makeVideo, probeFile, tempDir } from '../helpers/fixtures.js';

const FRAME = 1 / 25;

let t: TestService;
let board: string;
let fx: string;
const ids: Record<string, string> = {};

/** Absolute path of a board file from its /media URL. */
const fileOf = (url: string) =>
  path.join(t.dataDir, 'media', 'admin', board, decodeURIComponent(url.split('/').pop()!));

/** Duration of the first stream of a kind, from ffprobe's stream record. */
async function streamDuration(file: string, kind: 'video' | 'audio'): Promise<number> {
  const info = await probeFile(file);
  const s = info.raw.streams?.find((x) => x.codec_type === kind);
  return Number(s?.duration ?? info.duration);
}

/** Luma at the centre of a frame at `t` seconds (converted to grey before cropping: 4:2:0 cannot crop 1 pixel). */
async function lumaAt(file: string, t: number): Promise<number> {
  const { stdout } = await promisify(execFile)(
    await ffmpegPath(),
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-ss',
      String(t),
      '-i',
      file,
      '-frames:v',
      '1',
      '-vf',
      'format=gray,crop=1:1:32:32',
      '-f',
      'rawvideo',
      'pipe:1',
    ],
    { encoding: 'buffer' },
  );
  return (stdout as Buffer)[0];
}

async function post(url: string, body: unknown) {
  return t.api('POST', url, body);
}

before(async () => {
  t = await startService();
  board = await t.createBoard('media ops');
  fx = await tempDir();
  const files: Record<string, string> = {
    clip: await makeVideo(path.join(fx, 'clip.mp4'), { tone: 440 }),
    clip2: await makeVideo(path.join(fx, 'bars.mp4'), { tone: 660, source: 'smptebars' }),
    silent: await makeVideo(path.join(fx, 'silent.mp4'), { source: 'testsrc', duration: 1 }),
    odd: await makeVideo(path.join(fx, 'odd.mp4'), {
      width: 321,
      height: 241,
      source: 'testsrc',
      tone: 330,
      codec: ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv444p'],
    }),
    tone: await makeAudio(path.join(fx, 'tone.wav'), { duration: 2 }),
    corrupt: await makeCorrupt(path.join(fx, 'corrupt.mp4')),
  };
  await sharp({ create: { width: 321, height: 241, channels: 3, background: '#3366cc' } })
    .png()
    .toFile(path.join(fx, 'picture.png'));
  // Stored landscape 320x240 with EXIF orientation 6: displayed as portrait 240x320.
  await sharp({ create: { width: 320, height: 240, channels: 3, background: '#cc3333' } })
    .jpeg()
    .withMetadata({ orientation: 6 })
    .toFile(path.join(fx, 'rotated.jpg'));
  files.picture = path.join(fx, 'picture.png');
  files.rotated = path.join(fx, 'rotated.jpg');
  for (const [key, file] of Object.entries(files)) {
    const res = await t.upload(board, file, { addToBoard: true });
    assert.equal(res.status, 200, res.text);
    ids[key] = res.body.element.id;
  }
});

after(async () => {
  await t?.close();
  if (fx) await fsp.rm(fx, { recursive: true, force: true });
});

describe('extract-audio', () => {
  it('writes an MP3 of the audio track as a new element, source untouched', async () => {
    const before = await fsp.stat(path.join(t.dataDir, 'media', 'admin', board, 'clip.mp4'));
    const res = await post('/api/extract-audio', { board_id: board, element_id: ids.clip });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.filename, 'clip.mp3');
    assert.equal(res.body.url, `/media/${board}/clip.mp3`);
    assert.equal(res.body.element.type, 'audio');
    assert.equal(res.body.element.url, res.body.url);
    const info = await probeFile(fileOf(res.body.url));
    assert.equal(info.audio?.codec, 'mp3');
    assert.equal(info.video, undefined);
    assert.ok(Math.abs(info.duration! - 2) < 0.1, `duration ${info.duration}`);
    const afterStat = await fsp.stat(path.join(t.dataDir, 'media', 'admin', board, 'clip.mp4'));
    assert.equal(afterStat.mtimeMs, before.mtimeMs);
    const el = await t.api('GET', `/api/moodboards/${board}/elements/${res.body.element.id}`);
    assert.equal(el.status, 200);
  });

  it('is 400 for a video without audio and 4xx for a corrupt file', async () => {
    const res = await post('/api/extract-audio', { board_id: board, element_id: ids.silent });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /no audio/);
    const bad = await post('/api/extract-audio', { board_id: board, element_id: ids.corrupt });
    assert.equal(bad.status, 422);
    const missing = await post('/api/extract-audio', { board_id: board, element_id: 'el_nope' });
    assert.equal(missing.status, 404);
  });
});

describe('trim-media', () => {
  it('cuts a video frame-accurately, keeping audio', async () => {
    const res = await post('/api/trim-media', {
      board_id: board,
      element_id: ids.clip,
      start_seconds: 0.52,
      end_seconds: 1.72,
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.filename, 'clip (trim 0.52-1.72).mp4');
    const file = fileOf(res.body.url);
    const v = await streamDuration(file, 'video');
    assert.ok(Math.abs(v - 1.2) <= FRAME + 1e-6, `video duration ${v}`);
    const info = await probeFile(file);
    assert.equal(info.video?.codec, 'h264');
    assert.equal(info.audio?.codec, 'aac');
  });

  it('starts on the exact frame, even far from a key frame', async () => {
    // Brightness rises 5 levels per frame and the only key frame is the first, so a cut that snapped to a key frame
    // or to a neighbouring frame shows in the first output pixel.
    const ramp = path.join(fx, 'ramp.mp4');
    await ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'color=c=black:s=64x64:r=25:d=2',
      '-vf',
      "geq=lum='N*5':cb=128:cr=128",
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-g',
      '100',
      '-pix_fmt',
      'yuv420p',
      ramp,
    ]);
    const up = await t.upload(board, ramp, { addToBoard: true });
    const res = await post('/api/trim-media', {
      board_id: board,
      element_id: up.body.element.id,
      start_seconds: 0.52,
      end_seconds: 1.2,
    });
    assert.equal(res.status, 200, res.text);
    const first = await lumaAt(fileOf(res.body.url), 0);
    const frame13 = await lumaAt(ramp, 13 / 25);
    const frame12 = await lumaAt(ramp, 12 / 25);
    assert.ok(Math.abs(first - frame13) <= 2, `first frame ${first}, source frame 13 ${frame13}`);
    assert.ok(frame13 - frame12 >= 4, 'the ramp tells neighbouring frames apart');
    const v = await streamDuration(fileOf(res.body.url), 'video');
    assert.ok(Math.abs(v - 0.68) <= FRAME + 1e-6, `video duration ${v}`);
  });

  it('keeps odd dimensions and trims audio files', async () => {
    const odd = await post('/api/trim-media', {
      board_id: board,
      element_id: ids.odd,
      start_seconds: 0,
      end_seconds: 1,
    });
    assert.equal(odd.status, 200, odd.text);
    const info = await probeFile(fileOf(odd.body.url));
    assert.deepEqual([info.video?.width, info.video?.height], [321, 241]);
    const audio = await post('/api/trim-media', {
      board_id: board,
      element_id: ids.tone,
      start_seconds: 1,
      end_seconds: 2,
    });
    assert.equal(audio.status, 200, audio.text);
    assert.equal(audio.body.filename, 'tone (trim 1.0-2.0).wav');
    const a = await probeFile(fileOf(audio.body.url));
    assert.equal(a.audio?.codec, 'pcm_s16le');
    assert.ok(Math.abs(a.duration! - 1) < 0.01, `duration ${a.duration}`);
  });

  it('is 400 unless 0 <= start < end <= duration', async () => {
    for (const [start, end] of [
      [1.5, 1.0],
      [1, 1],
      [0, 2.5],
      [-1, 1],
    ]) {
      const res = await post('/api/trim-media', {
        board_id: board,
        element_id: ids.clip,
        start_seconds: start,
        end_seconds: end,
      });
      assert.equal(res.status, 400, `${start}-${end}: ${res.text}`);
    }
    const img = await post('/api/trim-media', {
      board_id: board,
      element_id: ids.picture,
      start_seconds: 0,
      end_seconds: 1,
    });
    assert.equal(img.status, 400);
  });
});

describe('convert-image', () => {
  it('converts with one side keeping the aspect ratio and both sides fitting inside', async () => {
    const webp = await post('/api/convert-image', {
      board_id: board,
      element_id: ids.picture,
      format: 'webp',
      width: 160,
    });
    assert.equal(webp.status, 200, webp.text);
    assert.match(webp.body.filename, /^picture \(160x\)\.webp$/);
    let meta = await sharp(fileOf(webp.body.url)).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 160, 120]);
    const avif = await post('/api/convert-image', {
      board_id: board,
      element_id: ids.picture,
      format: 'avif',
      width: 100,
      height: 100,
    });
    assert.equal(avif.status, 200, avif.text);
    meta = await sharp(fileOf(avif.body.url)).metadata();
    assert.equal(meta.format, 'heif');
    assert.deepEqual([meta.width, meta.height], [100, 75]);
    const jpg = await post('/api/convert-image', { board_id: board, element_id: ids.picture, format: 'jpg' });
    assert.equal(jpg.status, 200, jpg.text);
    meta = await sharp(fileOf(jpg.body.url)).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['jpeg', 321, 241]);
  });

  it('applies the EXIF orientation', async () => {
    const res = await post('/api/convert-image', {
      board_id: board,
      element_id: ids.rotated,
      format: 'png',
      height: 160,
    });
    assert.equal(res.status, 200, res.text);
    const meta = await sharp(fileOf(res.body.url)).metadata();
    assert.deepEqual([meta.width, meta.height, meta.orientation ?? 1], [120, 160, 1]);
  });

  it('is 400 for another format or a non-image element', async () => {
    const gif = await post('/api/convert-image', { board_id: board, element_id: ids.picture, format: 'gif' });
    assert.equal(gif.status, 400);
    const video = await post('/api/convert-image', { board_id: board, element_id: ids.clip, format: 'png' });
    assert.equal(video.status, 400);
  });
});

describe('convert-video', () => {
  it('converts to webm/vp9 with opus audio', async () => {
    const res = await post('/api/convert-video', {
      board_id: board,
      element_id: ids.clip,
      format: 'webm',
      codec: 'vp9',
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.filename, 'clip (vp9).webm');
    const info = await probeFile(fileOf(res.body.url));
    assert.match(info.formatName, /webm|matroska/);
    assert.equal(info.video?.codec, 'vp9');
    assert.equal(info.audio?.codec, 'opus');
    assert.ok(Math.abs(info.duration! - 2) <= 0.05, `duration ${info.duration}`);
  });

  it('converts an odd-sized clip to h265 in mp4 at a bitrate, and to prores in mov', async () => {
    const h265 = await post('/api/convert-video', {
      board_id: board,
      element_id: ids.odd,
      format: 'mp4',
      codec: 'h265',
      bitrate: '800k',
    });
    assert.equal(h265.status, 200, h265.text);
    const a = await probeFile(fileOf(h265.body.url));
    assert.equal(a.video?.codec, 'hevc');
    assert.deepEqual([a.video?.width, a.video?.height], [320, 240]);
    assert.equal(a.audio?.codec, 'aac');
    const prores = await post('/api/convert-video', {
      board_id: board,
      element_id: ids.clip,
      format: 'mov',
      codec: 'prores',
    });
    assert.equal(prores.status, 200, prores.text);
    const b = await probeFile(fileOf(prores.body.url));
    assert.match(b.formatName, /mov/);
    assert.equal(b.video?.codec, 'prores');
    assert.equal(b.audio?.codec, 'pcm_s16le');
  });

  it('encodes AV1 in webm', async () => {
    const tiny = await makeVideo(path.join(fx, 'tiny.mp4'), { width: 128, height: 96, duration: 0.4 });
    const up = await t.upload(board, tiny, { addToBoard: true });
    const res = await post('/api/convert-video', {
      board_id: board,
      element_id: up.body.element.id,
      format: 'webm',
      codec: 'av1',
    });
    assert.equal(res.status, 200, res.text);
    const info = await probeFile(fileOf(res.body.url));
    assert.equal(info.video?.codec, 'av1');
    assert.deepEqual([info.video?.width, info.video?.height], [128, 96]);
  });

  it('is 400 for a pair the container cannot hold, naming the valid pairs, and for a bad bitrate', async () => {
    const res = await post('/api/convert-video', {
      board_id: board,
      element_id: ids.clip,
      format: 'mp4',
      codec: 'vp9',
    });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /mp4\/h264/);
    assert.match(res.body.error.message, /webm\/vp9/);
    for (const bitrate of ['fast', '2G', '10k', '2 M']) {
      const bad = await post('/api/convert-video', {
        board_id: board,
        element_id: ids.clip,
        format: 'mp4',
        codec: 'h264',
        bitrate,
      });
      assert.equal(bad.status, 400, bitrate);
    }
    const image = await post('/api/convert-video', {
      board_id: board,
      element_id: ids.picture,
      format: 'mp4',
      codec: 'h264',
    });
    assert.equal(image.status, 400);
  });

  it('runs as a job with async: true', async () => {
    const res = await post('/api/convert-video', {
      board_id: board,
      element_id: ids.silent,
      format: 'mp4',
      codec: 'h264',
      bitrate: '2M',
      async: true,
    });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.status, 'queued');
    const job = await waitForJob(t, res.body.job_id, { what: 'convert job' });
    assert.equal(job.status, 'complete', job.error);
    assert.equal(job.progress, 1);
    assert.equal(job.result.element.type, 'video');
    assert.equal(job.output_url, job.result.url);
    const info = await probeFile(fileOf(job.result.url));
    assert.equal(info.video?.codec, 'h264');
    assert.equal(info.audio, undefined);
  });

  it('kills ffmpeg and removes the partial file when the client disconnects', async () => {
    const long = await makeVideo(path.join(fx, 'long.mp4'), { duration: 20, width: 640, height: 480 });
    const up = await t.upload(board, long, { addToBoard: true });
    const before = (await t.api('GET', `/api/moodboards/${board}/elements`)).body.length;
    const controller = new AbortController();
    const request = fetch(`${t.baseUrl}/api/convert-video`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ board_id: board, element_id: up.body.element.id, format: 'webm', codec: 'vp9' }),
      signal: controller.signal,
    }).catch((err: Error) => err);
    const dir = path.join(t.dataDir, 'media', 'admin', board);
    await eventually(
      async () => ((await fsp.readdir(dir)).some((n) => n.startsWith('.tmp-')) ? true : undefined),
      10_000,
      'ffmpeg temp file',
    );
    controller.abort();
    assert.ok((await request) instanceof Error);
    await eventually(
      async () => ((await fsp.readdir(dir)).some((n) => n.startsWith('.tmp-')) ? undefined : true),
      10_000,
      'temp file removal',
    );
    assert.ok(!(await fsp.readdir(dir)).some((n) => n.startsWith('long (vp9)')));
    assert.equal((await t.api('GET', `/api/moodboards/${board}/elements`)).body.length, before);
  });
});

describe('concat-videos', () => {
  it('joins matching clips without re-encoding', async () => {
    const res = await post('/api/concat-videos', { board_id: board, element_ids: [ids.clip, ids.clip2] });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.element.data.concat_mode, 'copy');
    assert.equal(res.body.filename, 'clip (concat 2).mp4');
    const file = fileOf(res.body.url);
    const v = await streamDuration(file, 'video');
    assert.ok(Math.abs(v - 4) <= FRAME + 1e-6, `duration ${v}`);
    const info = await probeFile(file);
    assert.equal(info.audio?.codec, 'aac');
  });

  it('normalises differing clips to the first one, with silence where audio is missing', async () => {
    const res = await post('/api/concat-videos', { board_id: board, element_ids: [ids.clip, ids.odd, ids.silent] });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.element.data.concat_mode, 'reencode');
    const file = fileOf(res.body.url);
    const info = await probeFile(file);
    assert.deepEqual([info.video?.codec, info.video?.width, info.video?.height], ['h264', 320, 240]);
    assert.ok(Math.abs((info.video?.fps ?? 0) - 25) < 0.01);
    assert.equal(info.audio?.channels, 2);
    const v = await streamDuration(file, 'video');
    assert.ok(Math.abs(v - 5) <= FRAME + 1e-6, `video duration ${v}`);
    const a = await streamDuration(file, 'audio');
    assert.ok(Math.abs(a - 5) <= 0.1, `audio duration ${a}`);
  });

  it('runs as a job with async: true', async () => {
    const res = await post('/api/concat-videos', { board_id: board, element_ids: [ids.clip2, ids.clip], async: true });
    assert.equal(res.status, 202, res.text);
    const job = await waitForJob(t, res.body.job_id, { what: 'concat job' });
    assert.equal(job.status, 'complete', job.error);
    assert.equal(job.result.element.data.concat_mode, 'copy');
    assert.equal(job.result.filename, 'bars (concat 2).mp4');
  });

  it('is 400 for fewer than two ids or an element that is not a video', async () => {
    assert.equal((await post('/api/concat-videos', { board_id: board, element_ids: [ids.clip] })).status, 400);
    const img = await post('/api/concat-videos', { board_id: board, element_ids: [ids.clip, ids.picture] });
    assert.equal(img.status, 400);
    assert.match(img.body.error.message, /not a video/);
    const queued = await post('/api/concat-videos', {
      board_id: board,
      element_ids: [ids.clip, ids.tone],
      async: true,
    });
    assert.equal(queued.status, 400);
  });
});
