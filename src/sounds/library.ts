import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { replaceFileAtomic } from '../files/atomic.js';
import { SOUNDS } from './catalog.js';
import { durationOf, render, SAMPLE_RATE, type SoundSpec } from './synth.js';
import { encodeWav } from './wav.js';

interface SoundWav {
  bytes: Buffer;
  /** Strong validator for GET caching: the bytes only change when the synthesis code does. */
  etag: string;
}

export interface SoundInfo {
  name: string;
  description: string;
  duration: number;
}

/**
 * The synthesized sounds: each is rendered at most once per service (on first use), kept in memory for the HTTP
 * previews, and written once to `dir` (DATA_DIR/sounds) for the host player, which needs a file path.
 */
export class SoundLibrary {
  private readonly wavs = new Map<string, SoundWav>();
  private readonly files = new Map<string, Promise<string>>();

  constructor(readonly dir: string) {}

  list(): SoundInfo[] {
    return SOUNDS.map((s) => ({
      name: s.name,
      description: s.description,
      duration: Math.round(durationOf(s) * 1000) / 1000,
    }));
  }

  wav(spec: SoundSpec): SoundWav {
    let wav = this.wavs.get(spec.name);
    if (!wav) {
      const bytes = encodeWav(render(spec), SAMPLE_RATE);
      wav = { bytes, etag: `"${crypto.createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"` };
      this.wavs.set(spec.name, wav);
    }
    return wav;
  }

  /** Path of the sound's WAV file, writing it (atomically) unless an identical file is already there. */
  file(spec: SoundSpec): Promise<string> {
    let p = this.files.get(spec.name);
    if (!p) {
      p = this.write(spec);
      this.files.set(spec.name, p);
      // A failed write (disk full) is retried on the next play instead of being remembered forever.
      p.catch(() => this.files.delete(spec.name));
    }
    return p;
  }

  private async write(spec: SoundSpec): Promise<string> {
    const target = path.join(this.dir, `${spec.name}.wav`);
    const { bytes } = this.wav(spec);
    const existing = await fsp.readFile(target).catch(() => undefined);
    if (!existing?.equals(bytes)) await replaceFileAtomic(target, bytes);
    return target;
  }
}
