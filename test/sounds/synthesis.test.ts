import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { startService, type TestService } from '../helpers/service.js';
import { probeFile } from '../helpers/fixtures.js';
import { contourDifference, parseWav, pitchContour, type ParsedWav } from './wav-analysis.js';

const REQUIRED = ['notice', 'error', 'success', 'message', 'complete'];

interface Listed {
  name: string;
  description: string;
  duration: number;
  url: string;
}

describe('synthesized sounds', () => {
  let svc: TestService;
  let listed: Listed[];
  const wavs = new Map<string, { bytes: Buffer; wav: ParsedWav }>();

  before(async () => {
    svc = await startService({ SOUND_PLAYER: 'none' });
    const res = await svc.api<{ sounds: Listed[]; default: string }>('GET', '/api/sounds');
    assert.equal(res.status, 200);
    listed = res.body.sounds;
    for (const s of listed) {
      const r = await fetch(svc.baseUrl + s.url);
      assert.equal(r.status, 200, s.url);
      assert.equal(r.headers.get('content-type'), 'audio/wav');
      const bytes = Buffer.from(await r.arrayBuffer());
      wavs.set(s.name, { bytes, wav: parseWav(bytes) });
    }
  });
  after(() => svc.close());

  it('lists at least notice, error, success, message and complete, and names the default', async () => {
    const res = await svc.api('GET', '/api/sounds');
    assert.equal(res.body.default, 'notice');
    const names = listed.map((s) => s.name);
    for (const n of REQUIRED) assert.ok(names.includes(n), `missing ${n} in ${names}`);
    assert.equal(new Set(names).size, names.length);
    for (const s of listed) assert.equal(s.url, `/api/sounds/${s.name}.wav`);
  });

  it('serves every sound as a mono 16-bit PCM WAV under 1.5 s whose length matches the listing', () => {
    for (const s of listed) {
      const { wav } = wavs.get(s.name)!;
      assert.equal(wav.channels, 1, s.name);
      assert.equal(wav.bitsPerSample, 16, s.name);
      assert.equal(wav.sampleRate, 44_100, s.name);
      assert.equal(wav.byteRate, wav.sampleRate * wav.blockAlign, s.name);
      assert.equal(wav.blockAlign, 2, s.name);
      assert.ok(wav.duration > 0.2 && wav.duration < 1.5, `${s.name} lasts ${wav.duration} s`);
      assert.ok(
        Math.abs(wav.duration - s.duration) < 0.002,
        `${s.name}: listed ${s.duration} s, file ${wav.duration} s`,
      );
    }
  });

  it('has no DC offset, no clipping, and is clearly audible', () => {
    for (const s of listed) {
      const x = wavs.get(s.name)!.wav.samples;
      let sum = 0;
      let peak = 0;
      let energy = 0;
      for (const v of x) {
        sum += v;
        energy += v * v;
        peak = Math.max(peak, Math.abs(v));
      }
      assert.ok(Math.abs(sum / x.length) < 0.001, `${s.name} mean ${sum / x.length}`);
      assert.ok(peak < 0.9, `${s.name} peaks at ${peak} of full scale`);
      assert.ok(peak > 0.5, `${s.name} peaks at only ${peak} of full scale`);
      assert.ok(Math.sqrt(energy / x.length) > 0.05, `${s.name} is too quiet`);
    }
  });

  it('starts and ends at zero with gentle fades (no clicks)', () => {
    for (const s of listed) {
      const { samples: x, sampleRate } = wavs.get(s.name)!.wav;
      assert.equal(x[0], 0, `${s.name} first sample`);
      assert.equal(x[x.length - 1], 0, `${s.name} last sample`);
      const ms = Math.round(sampleRate / 1000);
      const edge = (from: number, to: number) => Math.max(...Array.from(x.subarray(from, to), Math.abs));
      assert.ok(edge(0, ms) < 0.05, `${s.name} jumps in its first millisecond (${edge(0, ms)})`);
      assert.ok(
        edge(x.length - ms, x.length) < 0.01,
        `${s.name} is still loud in its last millisecond (${edge(x.length - ms, x.length)})`,
      );
      // The first and last samples step away from zero by no more than a fade allows.
      assert.ok(Math.abs(x[1]) < 0.001 && Math.abs(x[x.length - 2]) < 0.001, `${s.name} steps at an edge`);
    }
  });

  it('gives every sound its own pitch contour', () => {
    const contours = new Map(listed.map((s) => [s.name, pitchContour(wavs.get(s.name)!.wav.samples, 44_100)]));
    for (const a of listed) {
      for (const b of listed) {
        if (a.name >= b.name) continue;
        const d = contourDifference(contours.get(a.name)!, contours.get(b.name)!);
        assert.ok(d >= 0.3, `${a.name} and ${b.name} differ in only ${Math.round(d * 100)}% of their 40 ms windows`);
      }
    }
  });

  it('is read by ffprobe as pcm_s16le of the same length', async () => {
    const dir = await fsp.mkdtemp(path.join(svc.dataDir, 'probe-'));
    for (const s of listed) {
      const file = path.join(dir, `${s.name}.wav`);
      await fsp.writeFile(file, wavs.get(s.name)!.bytes);
      const p = await probeFile(file);
      assert.equal(p.audio?.codec, 'pcm_s16le', s.name);
      assert.equal(p.audio?.sampleRate, 44_100, s.name);
      assert.ok(Math.abs((p.duration ?? 0) - s.duration) < 0.01, `${s.name}: ffprobe says ${p.duration} s`);
    }
  });

  it('serves the same bytes each time, with an ETag that answers 304, and matches names case-insensitively', async () => {
    const first = wavs.get('error')!.bytes;
    const again = await fetch(`${svc.baseUrl}/api/sounds/ERROR.wav`);
    assert.equal(again.status, 200);
    assert.ok(Buffer.from(await again.arrayBuffer()).equals(first));
    const etag = again.headers.get('etag');
    assert.ok(etag);
    const cached = await fetch(`${svc.baseUrl}/api/sounds/error.wav`, { headers: { 'if-none-match': etag } });
    assert.equal(cached.status, 304);
    const otherTag = (await fetch(`${svc.baseUrl}/api/sounds/notice.wav`, { method: 'HEAD' })).headers.get('etag');
    assert.notEqual(otherTag, etag);
  });

  it('answers 404 for the file of an unknown sound (no fallback for an explicit file)', async () => {
    const res = await svc.api('GET', '/api/sounds/trumpet.wav');
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'not_found');
    assert.match(res.body.error.message, /trumpet/);
  });
});
