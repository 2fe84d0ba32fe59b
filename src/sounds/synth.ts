/** One sine component of a note's timbre, as a multiple of the note's frequency. */
export interface Partial {
  ratio: number;
  gain: number;
}

/** One tone of a sound: an oscillator (a sum of partials) shaped by an attack, an exponential decay and a release. */
export interface Note {
  /** Start, seconds from the beginning of the sound. */
  at: number;
  /** Seconds from start until the release has brought the note to silence. */
  length: number;
  /** Frequency at the start, Hz. */
  freq: number;
  /** Frequency at the end, Hz, for a glide (exponential, so it sounds even); defaults to `freq`. */
  to?: number;
  /** Relative loudness within the sound; the mix is normalized afterwards. */
  gain: number;
  /** Seconds of the raised-cosine fade in. */
  attack: number;
  /** Time constant of the exponential decay after the attack, seconds. */
  decay: number;
  /** Seconds of the raised-cosine fade out that ends the note at exactly zero. */
  release: number;
  /** Timbre; defaults to a pure sine. */
  partials?: Partial[];
}

export interface SoundSpec {
  name: string;
  description: string;
  notes: Note[];
}

export const SAMPLE_RATE = 44_100;
/** Peak level of every sound: about -3 dBFS, loud enough to notice and far from clipping. */
const PEAK = 0.7;
/** Fades over the whole mix, so the first and last samples are exactly zero whatever the notes do. */
const MASTER_FADE_IN = 0.002;
const MASTER_FADE_OUT = 0.01;

const SINE: Partial[] = [{ ratio: 1, gain: 1 }];

/** Length of a sound in seconds: until its last note has been released. */
export function durationOf(spec: SoundSpec): number {
  return Math.max(...spec.notes.map((n) => n.at + n.length));
}

/** Raised cosine from 0 (x = 0) to 1 (x = 1): its slope is zero at both ends, so a fade adds no click. */
const rise = (x: number) => 0.5 - 0.5 * Math.cos(Math.PI * Math.min(1, Math.max(0, x)));

function envelope(n: Note, t: number): number {
  const attack = rise(t / n.attack);
  const body = t <= n.attack ? 1 : Math.exp(-(t - n.attack) / n.decay);
  const release = rise((n.length - t) / n.release);
  return attack * body * release;
}

function addNote(out: Float32Array, n: Note): void {
  const first = Math.round(n.at * SAMPLE_RATE);
  const count = Math.min(out.length - first, Math.round(n.length * SAMPLE_RATE));
  const partials = n.partials ?? SINE;
  const glide = Math.log((n.to ?? n.freq) / n.freq);
  let phase = 0;
  for (let i = 0; i < count; i++) {
    const t = i / SAMPLE_RATE;
    let v = 0;
    for (const p of partials) v += p.gain * Math.sin(p.ratio * phase);
    out[first + i] += n.gain * envelope(n, t) * v;
    // Integrating the instantaneous frequency keeps a glide free of phase jumps.
    phase += (2 * Math.PI * n.freq * Math.exp((glide * t) / n.length)) / SAMPLE_RATE;
  }
}

/** Renders a sound to mono samples in [-PEAK, PEAK] that start and end at exactly zero. */
export function render(spec: SoundSpec): Float32Array {
  const out = new Float32Array(Math.ceil(durationOf(spec) * SAMPLE_RATE));
  for (const n of spec.notes) addNote(out, n);
  let peak = 0;
  for (const v of out) peak = Math.max(peak, Math.abs(v));
  const scale = peak > 0 ? PEAK / peak : 0;
  const last = out.length - 1;
  for (let i = 0; i <= last; i++) {
    const fade = rise(i / (MASTER_FADE_IN * SAMPLE_RATE)) * rise((last - i) / (MASTER_FADE_OUT * SAMPLE_RATE));
    out[i] *= scale * fade;
  }
  return out;
}
