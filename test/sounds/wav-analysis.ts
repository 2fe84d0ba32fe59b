/** Independent reading of the service's WAV files, so the tests do not trust the encoder they check. */

export interface ParsedWav {
  format: number;
  channels: number;
  sampleRate: number;
  byteRate: number;
  blockAlign: number;
  bitsPerSample: number;
  /** Samples scaled to [-1, 1). */
  samples: Float64Array;
  duration: number;
}

/** Parses a RIFF/WAVE file chunk by chunk; throws on anything malformed. */
export function parseWav(buf: Buffer): ParsedWav {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE')
    throw new Error('not a RIFF/WAVE file');
  if (buf.readUInt32LE(4) !== buf.length - 8)
    throw new Error(`RIFF size ${buf.readUInt32LE(4)} does not match file size ${buf.length}`);
  let fmt: Omit<ParsedWav, 'samples' | 'duration'> | undefined;
  let data: Buffer | undefined;
  for (let at = 12; at + 8 <= buf.length; ) {
    const id = buf.toString('ascii', at, at + 4);
    const size = buf.readUInt32LE(at + 4);
    const body = buf.subarray(at + 8, at + 8 + size);
    if (body.length !== size) throw new Error(`chunk ${id} is truncated`);
    if (id === 'fmt ') {
      fmt = {
        format: body.readUInt16LE(0),
        channels: body.readUInt16LE(2),
        sampleRate: body.readUInt32LE(4),
        byteRate: body.readUInt32LE(8),
        blockAlign: body.readUInt16LE(12),
        bitsPerSample: body.readUInt16LE(14),
      };
    } else if (id === 'data') data = body;
    at += 8 + size + (size % 2);
  }
  if (!fmt || !data) throw new Error('missing fmt or data chunk');
  if (fmt.format !== 1 || fmt.bitsPerSample !== 16)
    throw new Error(`not 16-bit PCM (format ${fmt.format}, ${fmt.bitsPerSample} bits)`);
  const frames = data.length / fmt.blockAlign;
  const samples = new Float64Array(frames);
  for (let i = 0; i < frames; i++) samples[i] = data.readInt16LE(i * fmt.blockAlign) / 32768;
  return { ...fmt, samples, duration: frames / fmt.sampleRate };
}

const WINDOW_SECONDS = 0.04;

/**
 * The dominant frequency of each 40 ms window (Hann-windowed Goertzel scan over 150-3000 Hz in quarter semitones),
 * or null where the window is quiet (below 5% of the loudest window's RMS).
 */
export function pitchContour(samples: Float64Array, sampleRate: number): (number | null)[] {
  const n = Math.round(WINDOW_SECONDS * sampleRate);
  const hann = Float64Array.from({ length: n }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (n - 1)));
  const freqs: number[] = [];
  for (let f = 150; f <= 3000; f *= 2 ** (1 / 48)) freqs.push(f);
  const windows: { rms: number; freq: number }[] = [];
  for (let start = 0; start + n <= samples.length; start += n) {
    let energy = 0;
    for (let i = 0; i < n; i++) energy += samples[start + i] ** 2;
    let best = 0;
    let bestFreq = 0;
    for (const f of freqs) {
      const coeff = 2 * Math.cos((2 * Math.PI * f) / sampleRate);
      let s1 = 0;
      let s2 = 0;
      for (let i = 0; i < n; i++) {
        const s0 = samples[start + i] * hann[i] + coeff * s1 - s2;
        s2 = s1;
        s1 = s0;
      }
      const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
      if (power > best) {
        best = power;
        bestFreq = f;
      }
    }
    windows.push({ rms: Math.sqrt(energy / n), freq: bestFreq });
  }
  const loudest = Math.max(...windows.map((w) => w.rms));
  return windows.map((w) => (w.rms >= 0.05 * loudest ? w.freq : null));
}

/**
 * Share of windows in which two contours disagree: one sounds while the other is silent or over, or both sound
 * more than a semitone and a half apart.
 */
export function contourDifference(a: (number | null)[], b: (number | null)[]): number {
  const len = Math.max(a.length, b.length);
  let differ = 0;
  for (let i = 0; i < len; i++) {
    const x = a[i] ?? null;
    const y = b[i] ?? null;
    if ((x === null) !== (y === null)) differ++;
    else if (x !== null && y !== null && Math.abs(12 * Math.log2(x / y)) > 1.5) differ++;
  }
  return differ / len;
}
