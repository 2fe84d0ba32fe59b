/**
 * The virtual clock injected into every frame of a card before its own scripts run. Chromium's own virtual-time
 * policy does not drive requestAnimationFrame or CSS animations, so the page's clocks are replaced instead:
 *
 * - `Date`, `performance.now`, `setTimeout`/`setInterval`, `requestAnimationFrame` and `requestIdleCallback` read or
 *   fire on virtual time that only moves when the renderer calls `__bmsClock.advanceTo(ms)`.
 * - Every animation in `document.getAnimations()` (CSS animations and transitions, Web Animations) is paused and its
 *   `currentTime` set from the virtual time at which it appeared; `play`, `pause` and `currentTime` writes by the page
 *   are honoured on that clock.
 * - SVG documents are paused and seeked (`setCurrentTime`), `<video>`/`<audio>` are paused and seeked to their position,
 *   and the advance waits for their `seeked` event (and, when the browser draws on its own, for the new video frame).
 * - `Math.random` is a seeded generator, so a card that uses it still draws the same frames on every run.
 * - `__bmsClock.takeChanged()` (and `step`, an advance that answers it) tells whether anything that draws may have
 *   changed since it was last asked (the screenshot path's stand-in for the compositor's damage report), and
 *   `__bmsClock.motion(until)` which rows running animations reach (for capturing in bands); docs/html.md.
 *
 * It is a string rather than a function so that no build step (TypeScript helpers, minifier renames) can touch it.
 */
export const VIRTUAL_CLOCK_SCRIPT = String.raw`(() => {
  if (window.__bmsClock) return;
  const EPOCH = Date.UTC(2025, 0, 1);
  const MAX_CALLBACKS_PER_ADVANCE = 100000;
  const MEDIA_SEEK_TIMEOUT_MS = 5000;
  const RealDate = Date;
  const realSetTimeout = window.setTimeout.bind(window);
  const realClearTimeout = window.clearTimeout.bind(window);
  // Taken before the card's scripts run, which may replace them.
  const RealAnimation = Animation;
  const RealKeyframeEffect = KeyframeEffect;
  const realRect = Element.prototype.getBoundingClientRect;
  const rectOf = (el) => realRect.call(el);
  let now = 0;
  let errors = 0;
  const report = (err) => { errors++; console.error(err); };

  // Whether anything that draws may have changed: a callback ran, an animation, SVG or video moved, the DOM changed, a
  // resource or font finished loading. A change also counts for the frame after it, so a picture that loads or decodes
  // a little after the change that asked for it is captured too.
  let changedNow = true;
  let changedBefore = true;
  const touch = () => { changedNow = true; };
  const mutations = new MutationObserver(touch);
  mutations.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  new PerformanceObserver(touch).observe({ type: 'resource', buffered: true });
  window.addEventListener('load', touch, true);
  window.addEventListener('error', touch, true);
  document.fonts.addEventListener('loadingdone', touch);

  // Date: no argument means "now" on the virtual clock; everything else is the real Date.
  function VDate(...args) {
    if (!new.target) return new RealDate(EPOCH + now).toString();
    return args.length === 0 ? new RealDate(EPOCH + now) : new RealDate(...args);
  }
  VDate.prototype = RealDate.prototype;
  VDate.now = () => EPOCH + now;
  VDate.parse = RealDate.parse;
  VDate.UTC = RealDate.UTC;
  window.Date = VDate;
  Object.defineProperty(performance, 'now', { value: () => now, configurable: true });

  let seed = 0x2545f491;
  Math.random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };

  // Timers, with the browser's clamp of deeply nested timers to 4 ms so self-rescheduling zero-delay loops end.
  const timers = new Map();
  let nextTimerId = 1;
  let order = 0;
  let nesting = 0;
  const addTimer = (fn, delay, args, repeat) => {
    let d = Number(delay) || 0;
    if (d < 0) d = 0;
    const level = nesting + 1;
    if (level > 5 && d < 4) d = 4;
    if (repeat && d < 1) d = 1;
    const id = nextTimerId++;
    timers.set(id, { id, due: now + d, fn, args, repeat: repeat ? d : -1, order: order++, level });
    return id;
  };
  window.setTimeout = (fn, delay, ...args) => addTimer(fn, delay, args, false);
  window.setInterval = (fn, delay, ...args) => addTimer(fn, delay, args, true);
  window.clearTimeout = window.clearInterval = (id) => { timers.delete(id); };

  let rafs = new Map();
  let nextRafId = 1;
  window.requestAnimationFrame = (cb) => { const id = nextRafId++; rafs.set(id, cb); return id; };
  window.cancelAnimationFrame = (id) => { rafs.delete(id); };
  window.requestIdleCallback = (cb) => addTimer(() => cb({ didTimeout: false, timeRemaining: () => 50 }), 1, [], false);
  window.cancelIdleCallback = window.clearTimeout;
  window.open = () => null;

  // A real macrotask lets the page's promise chains settle between callbacks, as they would in a browser.
  const channel = new MessageChannel();
  const ticks = [];
  channel.port1.onmessage = () => ticks.shift()();
  const settle = () => new Promise((resolve) => { ticks.push(resolve); channel.port2.postMessage(0); });

  // Animations (CSS animations, CSS transitions, Web Animations) on the virtual clock.
  const A = Animation.prototype;
  const realPause = A.pause, realPlay = A.play, realFinish = A.finish;
  const currentTime = Object.getOwnPropertyDescriptor(A, 'currentTime');
  const anims = new WeakMap();
  const localTime = (a, st) => (st.held !== null ? st.held : (now - st.origin) * a.playbackRate);
  const endOf = (a) => (a.effect ? a.effect.getComputedTiming().endTime : Infinity);
  A.pause = function () {
    const st = anims.get(this);
    if (st && st.held === null) st.held = localTime(this, st);
    return realPause.call(this);
  };
  A.play = function () {
    const st = anims.get(this);
    if (st) {
      let l = localTime(this, st);
      if (this.playbackRate > 0 && (l >= endOf(this) || l < 0)) l = 0;
      st.origin = now - l / (this.playbackRate || 1);
      st.held = null;
    }
    return realPlay.call(this);
  };
  Object.defineProperty(A, 'currentTime', {
    configurable: true,
    get() { return currentTime.get.call(this); },
    set(v) {
      const st = anims.get(this);
      if (st && v !== null) {
        if (st.held !== null) st.held = v;
        else st.origin = now - v / (this.playbackRate || 1);
      }
      currentTime.set.call(this, v);
    },
  });
  const adopt = () => {
    for (const a of document.getAnimations()) {
      if (anims.has(a)) continue;
      touch();
      anims.set(a, a.playState === 'paused' ? { origin: now, held: currentTime.get.call(a) || 0, shown: null } : { origin: now, held: null, shown: null });
    }
  };
  const syncAnimations = () => {
    adopt();
    // Every play state is read before any time is written: reading one after another animation's time was written
    // recalculates the document's style, once per animation (most of a frame's script time on a card with a hundred
    // animations).
    const states = [];
    for (const a of document.getAnimations()) {
      const state = a.playState;
      if (state !== 'idle') states.push([a, state]);
    }
    // An animation whose time is set to another value than the last one it was shown at may draw differently.
    const show = (a, st, t) => {
      if (st.shown !== t) { st.shown = t; touch(); }
      currentTime.set.call(a, t);
    };
    for (const [a, state] of states) {
      const st = anims.get(a);
      if (st.held !== null) {
        if (state !== 'paused') realPause.call(a);
        show(a, st, st.held);
        continue;
      }
      const t = localTime(a, st);
      const end = endOf(a);
      if (a.playbackRate > 0 && t >= end) {
        // Finishing (rather than holding at the end) resolves 'finished' and fires 'finish' for the page's scripts.
        if (state !== 'finished') {
          show(a, st, end);
          realFinish.call(a);
        }
        continue;
      }
      if (state !== 'paused') realPause.call(a);
      show(a, st, t);
    }
  };

  // SVG (SMIL): each outermost <svg> runs its own document time from when it appeared.
  const svgs = new WeakMap();
  const syncSvg = () => {
    for (const s of document.querySelectorAll('svg')) {
      if (s.ownerSVGElement || typeof s.setCurrentTime !== 'function') continue;
      let origin = svgs.get(s);
      if (origin === undefined) { origin = now; svgs.set(s, origin); }
      s.pauseAnimations();
      const t = (now - origin) / 1000;
      if (s.getCurrentTime() !== t && s.querySelector('animate, animateMotion, animateTransform, set')) touch();
      s.setCurrentTime(t);
    }
  };

  // <video> and <audio>: never really playing; their position follows the virtual clock and is seeked each frame.
  const M = HTMLMediaElement.prototype;
  const realMediaPause = M.pause;
  const media = new WeakMap();
  const mediaPosition = (el, st) => (st.held !== null ? st.held : ((now - st.origin) / 1000) * el.playbackRate);
  const mediaState = (el) => {
    let st = media.get(el);
    if (!st) {
      // An autoplaying element plays from the clock's first step (its real autoplay is held back: see firstFrames).
      st = el.autoplay ? { origin: now, held: null } : { origin: now, held: el.currentTime };
      media.set(el, st);
    }
    return st;
  };
  M.play = function () {
    const st = mediaState(this);
    if (st.held !== null) {
      let pos = st.held;
      if (this.ended || (Number.isFinite(this.duration) && pos >= this.duration)) pos = 0;
      st.origin = now - (pos * 1000) / (this.playbackRate || 1);
      st.held = null;
      this.dispatchEvent(new Event('play'));
      this.dispatchEvent(new Event('playing'));
    }
    return Promise.resolve();
  };
  M.pause = function () {
    const st = mediaState(this);
    if (st.held === null) {
      st.held = mediaPosition(this, st);
      this.dispatchEvent(new Event('pause'));
    }
    realMediaPause.call(this);
  };
  Object.defineProperty(M, 'paused', { configurable: true, get() { const st = media.get(this); return st ? st.held !== null : !this.autoplay; } });
  // Native autoplay would play an element on real time while the card loads: on a busy machine past its first
  // pictures, whose presentations then reached the screen after the clock's first seeks, and frames were captured with
  // the picture before theirs (docs/html.md). A real pause as its load starts clears the element's autoplay flag
  // (HTML's "can autoplay"), so only the clock plays it, from its first step (syncMedia); a real playback that starts
  // anyway (autoplay set later) is paused at once. The first picture's presentation is awaited by ready().
  const firstFrames = new WeakMap();
  window.addEventListener('loadstart', (e) => {
    const el = e.target;
    if (!(el instanceof HTMLMediaElement)) return;
    realMediaPause.call(el);
    if (typeof el.requestVideoFrameCallback === 'function')
      firstFrames.set(el, new Promise((resolve) => el.requestVideoFrameCallback(() => resolve())));
  }, true);
  window.addEventListener('play', (e) => {
    if (e.isTrusted && e.target instanceof HTMLMediaElement) realMediaPause.call(e.target);
  }, true);
  // When the browser draws on its own (screenshots), a seeked video's new frame reaches the compositor a little after
  // 'seeked': wait for it to be presented. Under begin-frame control nothing is presented between frames, so no wait.
  let awaitVideoFrames = false;
  const presented = (el) =>
    new Promise((resolve) => {
      const timer = realSetTimeout(resolve, MEDIA_SEEK_TIMEOUT_MS);
      el.requestVideoFrameCallback(() => { realClearTimeout(timer); resolve(); });
    });
  const seekTo = (el, t) =>
    new Promise((resolve) => {
      const frame = awaitVideoFrames && typeof el.requestVideoFrameCallback === 'function' ? presented(el) : null;
      const done = () => {
        realClearTimeout(timer);
        el.removeEventListener('seeked', done);
        el.removeEventListener('error', done);
        resolve(frame && !el.error ? frame : undefined);
      };
      const timer = realSetTimeout(done, MEDIA_SEEK_TIMEOUT_MS);
      el.addEventListener('seeked', done);
      el.addEventListener('error', done);
      el.currentTime = t;
    });
  const syncMedia = () => {
    const seeks = [];
    for (const el of document.querySelectorAll('video, audio')) {
      const adopted = media.has(el);
      const st = mediaState(el);
      // An autoplaying element starts playing now, on the clock: the events its real start would have fired.
      if (!adopted && el.autoplay && st.held === null) {
        el.dispatchEvent(new Event('play'));
        el.dispatchEvent(new Event('playing'));
      }
      realMediaPause.call(el);
      let t = Math.max(0, mediaPosition(el, st));
      const d = el.duration;
      if (Number.isFinite(d) && d > 0) t = el.loop ? t % d : Math.min(t, d);
      if (el.readyState >= 1 && Math.abs(el.currentTime - t) > 1e-6) {
        if (el instanceof HTMLVideoElement) touch();
        seeks.push(seekTo(el, t));
      }
    }
    return Promise.all(seeks);
  };

  // Work a page hands the clock (__bmsClock.waitFor(promise), e.g. loading the picture of this frame): the advance
  // waits for it after the frame callbacks, so the frame is drawn complete. Bounded, so a page cannot stall a render.
  const HOLD_TIMEOUT_MS = 30000;
  /** Settles when p does or after ms of real time, whichever comes first (the timer is cleared either way). */
  const within = async (p, ms) => {
    let timer;
    await Promise.race([p, new Promise((resolve) => { timer = realSetTimeout(resolve, ms); })]);
    realClearTimeout(timer);
  };

  let holds = [];
  const waitFor = (p) => { holds.push(Promise.resolve(p).catch(report)); };
  const awaitHolds = async () => {
    while (holds.length) {
      const pending = holds;
      holds = [];
      await within(Promise.all(pending), HOLD_TIMEOUT_MS);
    }
  };

  // An image the page added or pointed elsewhere during this advance shows on this frame once it has loaded (a browser
  // in real time shows it a few milliseconds later; a busy machine must not move it frames later). Lazy images that
  // may never load are not waited for; bounded like a media seek.
  const awaitImages = async () => {
    const loading = [];
    for (const img of document.images) {
      if (!img.complete && img.loading !== 'lazy') loading.push(img.decode().catch(() => undefined));
    }
    if (!loading.length) return;
    await within(Promise.all(loading), MEDIA_SEEK_TIMEOUT_MS);
    touch();
  };

  const nextDueTimer = (limit) => {
    let next = null;
    for (const t of timers.values()) {
      if (t.due <= limit && (!next || t.due < next.due || (t.due === next.due && t.order < next.order))) next = t;
    }
    return next;
  };

  const runTimer = async (t) => {
    now = Math.max(now, t.due);
    if (t.repeat >= 0) {
      t.due = now + Math.max(t.repeat, t.level >= 5 ? 4 : 0);
      t.order = order++;
      t.level++;
    } else {
      timers.delete(t.id);
    }
    nesting = t.level;
    touch();
    try {
      if (typeof t.fn === 'function') t.fn(...t.args);
      else (0, eval)(String(t.fn));
    } catch (err) {
      report(err);
    } finally {
      nesting = 0;
    }
    await settle();
    adopt();
  };

  // Whether the frame being reached will be captured; false while the renderer steps through earlier frames (see
  // willDraw below).
  let drawn = true;
  const advanceTo = async (target, waitForVideoFrames, willBeDrawn = true) => {
    awaitVideoFrames = !!waitForVideoFrames;
    drawn = !!willBeDrawn;
    let callbacks = 0;
    for (let t = nextDueTimer(target); t && callbacks < MAX_CALLBACKS_PER_ADVANCE; t = nextDueTimer(target)) {
      callbacks++;
      await runTimer(t);
    }
    now = Math.max(now, target);
    syncAnimations();
    // Media first, so rAF callbacks that read video.currentTime see this frame's time.
    await syncMedia();
    const due = rafs;
    rafs = new Map();
    if (due.size) touch();
    for (const cb of due.values()) {
      try { cb(now); } catch (err) { report(err); }
    }
    if (due.size) await settle();
    await awaitHolds();
    await awaitImages();
    syncAnimations();
    syncSvg();
    await syncMedia();
    // Child frames have their own clock (this script runs in every frame); all that can load are same-origin.
    for (let i = 0; i < window.frames.length; i++) {
      let child = null;
      try { child = window.frames[i].__bmsClock; } catch (err) { child = null; }
      if (child) errors += await child.advanceTo(target, waitForVideoFrames, willBeDrawn);
    }
    return errors;
  };

  /**
   * Waits (in real time) until fonts, images and media data have loaded, so frame 0 is complete; when the browser draws
   * on its own, also until each video's first picture was presented (see firstFrames).
   */
  const ready = async (timeoutMs, waitForVideoFrames) => {
    const deadline = new Promise((resolve) => realSetTimeout(resolve, timeoutMs));
    const firstFrame = (el) => {
      const shown = waitForVideoFrames && !el.error ? firstFrames.get(el) : undefined;
      return shown && within(shown, MEDIA_SEEK_TIMEOUT_MS);
    };
    const mediaReady = (el) =>
      (el.readyState >= 2 || el.error ? Promise.resolve() : new Promise((resolve) => {
        el.addEventListener('loadeddata', resolve, { once: true });
        el.addEventListener('error', resolve, { once: true });
      })).then(() => firstFrame(el));
    const all = Promise.all([
      document.fonts.ready,
      ...Array.from(document.images, (img) => img.decode().catch(() => undefined)),
      ...Array.from(document.querySelectorAll('video, audio'), (el) => {
        if (el.preload === 'none') el.preload = 'auto';
        return mediaReady(el);
      }),
    ]);
    await Promise.race([all, deadline]);
  };

  // A page whose picture is a function of the time alone may skip drawing work for frames that are not captured (the
  // renderer steps through them to reach a later frame); a page that integrates state frame by frame must not.
  const willDraw = () => drawn;

  // Where the page can move by itself until untilMs: the rows that running animations' elements cover at 16 times
  // from now to then, or null when anything but declarative animations may change the picture (callbacks scheduled,
  // media, canvas, SMIL, frames, more than 50 animations, an animated pseudo-element). The page's own animations are
  // not touched: copies of their effects on animations of no timeline are set to each time (a CSS animation seeked
  // would fire animationiteration and animationend events at the page), and cancelled before anything is drawn.
  const MOTION_SAMPLES = 16;
  const motion = (untilMs) => {
    if (rafs.size || timers.size || window.frames.length) return null;
    if (document.querySelector('video, audio, canvas, animate, animateMotion, animateTransform, set')) return null;
    adopt();
    const running = document.getAnimations().filter((a) => a.playState !== 'idle' && a.playState !== 'finished');
    if (running.length > 50) return null;
    if (running.some((a) => !a.effect || !a.effect.target || a.effect.pseudoElement)) return null;
    const probes = running.map((a) => ({ a, st: anims.get(a), copy: new RealAnimation(new RealKeyframeEffect(a.effect), null) }));
    let top = Infinity;
    let bottom = -Infinity;
    try {
      for (let i = 0; i <= MOTION_SAMPLES; i++) {
        const t = now + ((untilMs - now) * i) / MOTION_SAMPLES;
        for (const { a, st, copy } of probes) {
          const local = st.held !== null ? st.held : (t - st.origin) * a.playbackRate;
          currentTime.set.call(copy, Math.max(0, Math.min(local, endOf(a) - 0.5)));
        }
        for (const { a } of probes) {
          const r = rectOf(a.effect.target);
          top = Math.min(top, r.top);
          bottom = Math.max(bottom, r.bottom);
        }
      }
    } finally {
      for (const { copy } of probes) copy.cancel();
    }
    return probes.length ? { top, bottom } : { top: 0, bottom: 0 };
  };

  /** Whether anything that draws may have changed, here or in a child frame, since the last call. */
  const takeChanged = () => {
    if (mutations.takeRecords().length) touch();
    let changed = changedNow || changedBefore;
    changedBefore = changedNow;
    changedNow = false;
    for (let i = 0; i < window.frames.length; i++) {
      let child = null;
      try { child = window.frames[i].__bmsClock; } catch (err) { child = null; }
      if (child && child.takeChanged()) changed = true;
    }
    return changed;
  };
  // advanceTo, then for a frame that will be drawn whether anything changed since the last one (takeChanged).
  const step = async (target, waitForVideoFrames, willBeDrawn) => {
    await advanceTo(target, waitForVideoFrames, willBeDrawn);
    return willBeDrawn ? takeChanged() : false;
  };
  Object.defineProperty(window, '__bmsClock', { value: Object.freeze({ advanceTo, step, ready, waitFor, willDraw, takeChanged, motion }), enumerable: false });
})();`;
