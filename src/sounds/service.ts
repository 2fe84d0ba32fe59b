import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { soundFor, DEFAULT_SOUND } from './catalog.js';
import { SoundLibrary, type SoundInfo } from './library.js';
import { PlaybackQueue } from './playback-queue.js';
import type { SoundsConfig } from './config.js';
import { findPlayer, type PlayerLookup } from './player-command.js';
import type { PlayerStatus, PlayResult } from './schemas.js';

/** Sounds that may wait while one plays (the one playing is not counted). */
const MAX_WAITING = 32;

/** Notification sounds: synthesis, the host player and the playback queue of one service instance. */
export class SoundService {
  readonly library: SoundLibrary;
  private readonly lookup: PlayerLookup;
  private readonly queue: PlaybackQueue | undefined;
  private missingLogged = false;

  constructor(
    dataDir: string,
    env: NodeJS.ProcessEnv,
    config: SoundsConfig,
    private readonly log: FastifyBaseLogger,
  ) {
    this.library = new SoundLibrary(path.join(dataDir, 'sounds'));
    this.lookup = findPlayer(config.soundPlayer, env);
    if (this.lookup.found) {
      this.queue = new PlaybackQueue({
        player: this.lookup.player,
        fileFor: (name) => this.library.file(soundFor(name)),
        maxWaiting: MAX_WAITING,
        timeoutMs: config.soundPlayerTimeoutMs,
        env,
        log,
      });
    }
  }

  list(): { sounds: SoundInfo[]; default: string; player: PlayerStatus } {
    return { sounds: this.library.list(), default: DEFAULT_SOUND, player: this.player() };
  }

  player(): PlayerStatus {
    return this.lookup.found
      ? { available: true, name: this.lookup.player.name }
      : { available: false, reason: this.lookup.reason };
  }

  /** Queues a sound and answers at once; unknown names play the default sound. */
  play(requested: string): PlayResult {
    const sound = soundFor(requested).name;
    if (!this.queue) {
      if (!this.missingLogged && !this.lookup.found)
        this.log.warn(`notification sounds cannot play: ${this.lookup.reason}`);
      this.missingLogged = true;
      return { ok: false, sound, queued: false, reason: 'no_player' };
    }
    return this.queue.enqueue(sound)
      ? { ok: true, sound, queued: true }
      : { ok: true, sound, queued: false, reason: 'queue_full' };
  }

  close(): Promise<void> {
    return this.queue?.close() ?? Promise.resolve();
  }
}
