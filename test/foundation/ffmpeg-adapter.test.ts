import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Tools } from '../../src/tools/locate.js';
import { runFfmpeg, type FfmpegProgress } from '../../src/tools/ffmpeg.js';
import { Cancelled, TimedOut, ToolFailed } from '../../src/errors.js';
import { statusOf } from '../../src/http/errors.js';
import { tempDir } from '../helpers/fixtures.js';

const tools = new Tools(process.env);
/** An endless test pattern encoded slowly enough to outlive the limits below. */
const endless = (out: string) => [
  '-re',
  '-f',
  'lavfi',
  '-i',
  'testsrc2=size=320x240:rate=25',
  '-c:v',
  'mpeg4',
  '-f',
  'avi',
  out,
];

test('the time limit kills ffmpeg and answers 504 timeout', async () => {
  const dir = await tempDir();
  await assert.rejects(
    runFfmpeg(tools, endless(path.join(dir, 'a.avi')), { timeoutMs: 300 }),
    (e: unknown) => e instanceof TimedOut && statusOf(e) === 504 && e.code === 'timeout',
  );
  fs.rmSync(dir, { recursive: true, force: true });
});

test('aborting the signal kills ffmpeg (client gone, job cancelled)', async () => {
  const dir = await tempDir();
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 300);
  await assert.rejects(
    runFfmpeg(tools, endless(path.join(dir, 'b.avi')), { signal: controller.signal }),
    (e: unknown) => e instanceof Cancelled && e.code === 'aborted',
  );
  fs.rmSync(dir, { recursive: true, force: true });
});

test("progress comes from ffmpeg's own progress output; failures carry ffmpeg's reason", async () => {
  const dir = await tempDir();
  const seen: FfmpegProgress[] = [];
  await runFfmpeg(
    tools,
    ['-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25:duration=2', '-c:v', 'mpeg4', path.join(dir, 'c.avi')],
    {
      durationSeconds: 2,
      onProgress: (p) => seen.push(p),
    },
  );
  assert.ok(seen.length > 0);
  assert.ok(seen.every((p) => p.fraction !== undefined && p.fraction >= 0 && p.fraction <= 1));
  assert.ok(seen.at(-1)!.outTimeSeconds > 1.5);
  await assert.rejects(
    runFfmpeg(tools, ['-i', path.join(dir, 'missing.mp4'), path.join(dir, 'd.avi')]),
    (e: unknown) =>
      e instanceof ToolFailed && statusOf(e) === 422 && e.code === 'ffmpeg_failed' && /missing\.mp4/.test(e.message),
  );
  fs.rmSync(dir, { recursive: true, force: true });
});
