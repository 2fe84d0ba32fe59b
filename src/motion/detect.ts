import type { Tools } from '../tools/locate.js';
import { InvalidInput } from '../errors.js';

/** How long a detect answer is reused: installing After Effects shows up within this time, without a restart. */
const DETECT_CACHE_MS = 30_000;

interface Detected {
  installed: boolean;
  binaryPath: string;
  version: string;
}

/**
 * Finds aerender through the shared tool locator (AERENDER_PATH, then the standard install folders newest first,
 * then PATH) and remembers the answer briefly.
 */
export class AerenderLocator {
  private at = 0;

  constructor(
    private readonly tools: Tools,
    private readonly ttlMs = DETECT_CACHE_MS,
  ) {}

  async detect(): Promise<Detected> {
    if (Date.now() - this.at > this.ttlMs) {
      this.tools.refresh('aerender');
      this.at = Date.now();
    }
    const info = await this.tools.info('aerender');
    return { installed: info.found, binaryPath: info.path ?? '', version: info.version ?? '' };
  }

  /** aerender's path, or 400 motion_editor_missing (checked before anything else of a render runs). */
  async require(): Promise<string> {
    const d = await this.detect();
    if (!d.installed) {
      throw new InvalidInput(
        'After Effects (aerender) was not found: install After Effects or set AERENDER_PATH to its aerender binary',
        undefined,
        'motion_editor_missing',
      );
    }
    return d.binaryPath;
  }
}
