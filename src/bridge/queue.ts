/**
 * One direction of one bot's bridge: items in arrival order plus the long polls waiting for them.
 * Waiters are plain callbacks in a set (no shared promise), so a poll that times out or disconnects leaves nothing
 * behind, and a push wakes a waiting poll at once instead of it polling on a timer.
 */
export class ItemQueue<T> {
  private items: T[] = [];
  private readonly waiters = new Set<() => void>();

  constructor(private readonly capacity: number) {}

  get length(): number {
    return this.items.length;
  }

  /** Appends an item and wakes a waiting poll; returns false when the queue was full and its oldest item was dropped. */
  push(item: T): boolean {
    this.items.push(item);
    const full = this.items.length > this.capacity;
    if (full) this.items.shift();
    this.notify();
    return !full;
  }

  /** Removes and returns up to `max` items from the front. Call only when the answer can still be written. */
  take(max: number): T[] {
    const batch = this.items.splice(0, max);
    // Items beyond the batch are for the next waiting poll, if any.
    if (this.items.length > 0) this.notify();
    return batch;
  }

  /** Drops every queued item; waiting polls keep waiting. */
  clear(): void {
    this.items = [];
  }

  /**
   * Resolves when an item is pushed, after `ms`, or when `signal` aborts, whichever comes first. The caller checks
   * the queue again afterwards: another poll may have taken the items first.
   */
  waitForPush(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.waiters.delete(done);
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.waiters.add(done);
    });
  }

  /** Wakes every waiter (used on shutdown so long polls answer before the server closes). */
  wakeAll(): void {
    for (const w of [...this.waiters]) w();
  }

  /**
   * Wakes the oldest waiter: one poll per push is enough, the rest keep waiting without a thundering herd. A woken
   * poll that finds its client gone calls this again to hand the items on.
   */
  notify(): void {
    const first = this.waiters.values().next();
    if (!first.done) first.value();
  }
}
