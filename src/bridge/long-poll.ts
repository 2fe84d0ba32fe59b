import type { BridgeItem } from './items.js';
import type { ItemQueue } from './queue.js';

/** Most items one poll answer carries; the rest stay queued for the next poll. */
const POLL_BATCH = 100;
export const DEFAULT_WAIT_SECONDS = 25;
export const MAX_WAIT_SECONDS = 60;

/**
 * Answers with the queued items as soon as there are any, or `{items: []}` after `waitSeconds`. Items are taken off
 * the queue only at the moment the answer is produced for a client that is still connected: a client that goes away
 * while waiting (`gone`, from the route) loses nothing. `shutdown` ends every wait when the service stops.
 */
export async function longPoll(
  queue: ItemQueue<BridgeItem>,
  waitSeconds: number,
  gone: AbortSignal,
  shutdown: AbortSignal,
): Promise<{ items: BridgeItem[] }> {
  const deadline = Date.now() + Math.min(waitSeconds, MAX_WAIT_SECONDS) * 1000;
  const stop = AbortSignal.any([gone, shutdown]);
  for (;;) {
    if (gone.aborted) {
      // This poll may have been the one woken for the items: hand them to the next waiting poll.
      if (queue.length > 0) queue.notify();
      return { items: [] };
    }
    if (queue.length > 0) return { items: queue.take(POLL_BATCH) };
    const left = deadline - Date.now();
    if (left <= 0 || shutdown.aborted) return { items: [] };
    await queue.waitForPush(left, stop);
  }
}
