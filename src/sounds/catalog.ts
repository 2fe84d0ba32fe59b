import type { Partial, SoundSpec } from './synth.js';

/** Harmonic partials that fall off quickly: a soft bell or chime. */
const BELL: Partial[] = [
  { ratio: 1, gain: 1 },
  { ratio: 2, gain: 0.3 },
  { ratio: 3, gain: 0.1 },
];
/** Odd partials: a hollow, square-ish buzz for the error sound. */
const BUZZ: Partial[] = [
  { ratio: 1, gain: 1 },
  { ratio: 3, gain: 0.33 },
  { ratio: 5, gain: 0.18 },
  { ratio: 7, gain: 0.1 },
];
/** Weak odd partials: a triangle-like beep. */
const BEEP: Partial[] = [
  { ratio: 1, gain: 1 },
  { ratio: 3, gain: 0.11 },
];

const chime = { attack: 0.006, release: 0.06, partials: BELL };

/**
 * The sounds the service synthesizes. Each has its own pitch contour so that they can be told apart without
 * looking: one ringing tone (notice), two rising steps (message), a rising arpeggio (success), a falling line that
 * lands on a chord (complete), a low falling buzz (error), two equal beeps (warning).
 */
export const SOUNDS: readonly SoundSpec[] = [
  {
    name: 'notice',
    description: 'one soft chime (A5)',
    notes: [{ at: 0, length: 0.7, freq: 880, gain: 1, decay: 0.22, ...chime, release: 0.15 }],
  },
  {
    name: 'message',
    description: 'two quick rising chimes (G5, D6)',
    notes: [
      { at: 0, length: 0.16, freq: 784, gain: 0.8, decay: 0.12, ...chime },
      { at: 0.13, length: 0.4, freq: 1175, gain: 1, decay: 0.14, ...chime, release: 0.12 },
    ],
  },
  {
    name: 'success',
    description: 'rising major arpeggio (C5, E5, G5, C6)',
    notes: [
      { at: 0, length: 0.16, freq: 523, gain: 0.8, decay: 0.15, ...chime },
      { at: 0.09, length: 0.16, freq: 659, gain: 0.8, decay: 0.15, ...chime },
      { at: 0.18, length: 0.16, freq: 784, gain: 0.85, decay: 0.15, ...chime },
      { at: 0.27, length: 0.6, freq: 1047, gain: 1, decay: 0.2, ...chime, release: 0.15 },
    ],
  },
  {
    name: 'complete',
    description: 'falling pair (E6, C6) landing on a C major chord',
    notes: [
      { at: 0, length: 0.18, freq: 1319, gain: 0.8, decay: 0.15, ...chime },
      { at: 0.14, length: 0.18, freq: 1047, gain: 0.8, decay: 0.15, ...chime },
      { at: 0.28, length: 0.95, freq: 523, gain: 1, decay: 0.35, ...chime, release: 0.25 },
      { at: 0.28, length: 0.95, freq: 659, gain: 0.6, decay: 0.35, ...chime, release: 0.25 },
      { at: 0.28, length: 0.95, freq: 784, gain: 0.6, decay: 0.35, ...chime, release: 0.25 },
    ],
  },
  {
    name: 'error',
    description: 'low falling buzz (G4, then C#4 sliding down)',
    notes: [
      { at: 0, length: 0.22, freq: 392, gain: 1, attack: 0.008, decay: 0.5, release: 0.05, partials: BUZZ },
      { at: 0.2, length: 0.45, freq: 277, to: 247, gain: 1, attack: 0.008, decay: 0.4, release: 0.12, partials: BUZZ },
    ],
  },
  {
    name: 'warning',
    description: 'two equal beeps (B5)',
    notes: [
      { at: 0, length: 0.15, freq: 988, gain: 1, attack: 0.008, decay: 1, release: 0.04, partials: BEEP },
      { at: 0.22, length: 0.15, freq: 988, gain: 1, attack: 0.008, decay: 1, release: 0.04, partials: BEEP },
    ],
  },
];

/** What an unknown name plays. */
export const DEFAULT_SOUND = 'notice';

const byName = new Map(SOUNDS.map((s) => [s.name, s]));

export function findSound(name: string): SoundSpec | undefined {
  return byName.get(name.toLowerCase());
}

/** The sound a request for `name` plays: the sound of that name (case-insensitive), else the default. */
export function soundFor(name: string): SoundSpec {
  return findSound(name) ?? (byName.get(DEFAULT_SOUND) as SoundSpec);
}
