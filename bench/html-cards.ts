// The cards of the HTML render benchmark (bench/html.bench.ts), each `seconds` long.

/** Width of the timing bars, whose position in a frame tells the time the frame shows. */
export const BAR = 8;

/** The two timing bars: CSS-moved in the upper band, rAF-moved in the lower band, both crossing the width in seconds. */
const barStyles = (
  travel: number,
  seconds: number,
) => `.bar { position: absolute; left: 0; width: ${BAR}px; height: 20vh; background: #fff; }
  #css { top: 10vh; animation: slide ${seconds}s linear forwards; }
  #raf { top: 60vh; }
  @keyframes slide { from { transform: translateX(0); } to { transform: translateX(${travel}px); } }`;

/** The rAF loop that moves the lower bar and runs `draw` (with `ts` and the canvas context `g`) every frame. */
const rafLoop = (travel: number, seconds: number, draw: string) => `<script>
  const raf = document.getElementById('raf');
  const g = document.getElementById('c').getContext('2d');
  function tick(ts) {
    const p = Math.min(1, ts / ${seconds * 1000});
    raf.style.transform = 'translateX(' + (${travel} * p) + 'px)';${draw}
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);
</script>`;

/** The timing bars, a spinning gradient square and a canvas arc drawn from rAF. */
export function benchCard(width: number, seconds: number): string {
  const travel = width - BAR;
  return `<!doctype html><html><head><meta charset="utf-8"><style>
  html, body { margin: 0; width: 100vw; height: 100vh; overflow: hidden; background: #102030; font: 32px sans-serif; color: #fff; }
  ${barStyles(travel, seconds)}
  .spin { position: absolute; left: 40vw; top: 35vh; width: 20vh; height: 20vh; border-radius: 20%;
          background: linear-gradient(45deg, #f0a, #0af); animation: spin 1.3s linear infinite; }
  @keyframes spin { to { transform: rotate(360deg); } }
  canvas { position: absolute; right: 2vw; top: 32vh; }
</style></head><body>
<div id="css" class="bar"></div><div id="raf" class="bar"></div><div class="spin"></div>
<canvas id="c" width="240" height="240"></canvas>
${rafLoop(
  travel,
  seconds,
  `
    g.clearRect(0, 0, 240, 240);
    g.strokeStyle = '#ff0'; g.lineWidth = 8;
    g.beginPath(); g.arc(120, 120, 100, 0, 2 * Math.PI * ((ts / 1000) % 1)); g.stroke();`,
)}</body></html>`;
}

/**
 * A heavier card: the same two timing bars, and between them 36 boxes that move, rotate and change colour by CSS
 * keyframes (each with its own duration and delay), a spinner, a canvas redrawn from rAF (80 moving dots and a sweep)
 * and static text below. The bars' bands (20% and 70% of the height) are kept clear of everything else.
 */
export function heavyCard(width: number, seconds: number): string {
  const travel = width - BAR;
  const boxes = Array.from({ length: 36 }, (_, i) => {
    const row = i % 4;
    const dur = 1.1 + (i % 7) * 0.37;
    const delay = (-(i * 0.23)).toFixed(2);
    return `<div class="box" style="top:${33 + row * 6}vh;left:${(i * 2.6).toFixed(1)}vw;animation-duration:${dur.toFixed(2)}s,${(dur * 1.7).toFixed(2)}s,${dur.toFixed(2)}s;animation-delay:${delay}s"></div>`;
  }).join('');
  return `<!doctype html><html><head><meta charset="utf-8"><style>
  html, body { margin: 0; width: 100vw; height: 100vh; overflow: hidden; background: #102030; font: 18px sans-serif; color: #cde; }
  ${barStyles(travel, seconds)}
  .box { position: absolute; width: 4.5vh; height: 4.5vh; border-radius: 6px; box-shadow: 0 0 8px rgba(0,0,0,.6);
         animation-name: move, turn, hue; animation-timing-function: ease-in-out, linear, linear;
         animation-iteration-count: infinite; animation-direction: alternate, normal, alternate; }
  @keyframes move { from { translate: 0 0; } to { translate: 40vw 1.5vh; } }
  @keyframes turn { to { rotate: 360deg; } }
  @keyframes hue { 0% { background: #e44; } 33% { background: #4e4; } 66% { background: #44e; } 100% { background: #ee4; } }
  .spinner { position: absolute; left: 62vw; top: 34vh; width: 18vh; height: 18vh; border-radius: 50%;
             border: 2.2vh solid rgba(255,255,255,.15); border-top-color: #6cf; animation: turn .9s linear infinite; }
  canvas { position: absolute; right: 1vw; top: 32vh; }
  p { position: absolute; left: 2vw; top: 84vh; margin: 0; width: 90vw; line-height: 1.4; }
</style></head><body>
<div id="css" class="bar"></div><div id="raf" class="bar"></div>${boxes}<div class="spinner"></div>
<canvas id="c" width="300" height="190"></canvas>
<p>Static text: the quick brown fox jumps over the lazy dog. Board Media Service renders this card frame by frame on a
virtual clock, so every animation above lands on the frame it belongs to, whatever the machine's speed.</p>
${rafLoop(
  travel,
  seconds,
  `
    g.fillStyle = '#0a1420'; g.fillRect(0, 0, 300, 190);
    for (let i = 0; i < 80; i++) {
      const a = ts / 1000 * (0.5 + (i % 9) * 0.2) + i;
      g.fillStyle = 'hsl(' + ((i * 37 + ts / 20) % 360) + ',80%,60%)';
      g.beginPath(); g.arc(150 + Math.cos(a) * (20 + i), 95 + Math.sin(a * 1.3) * (10 + i * 0.9), 4, 0, 2 * Math.PI); g.fill();
    }
    g.strokeStyle = '#ff0'; g.lineWidth = 6;
    g.beginPath(); g.arc(150, 95, 80, 0, 2 * Math.PI * ((ts / 1000) % 1)); g.stroke();`,
)}</body></html>`;
}

/**
 * A card where nothing moves: a note as most cards on a moodboard are (gradient, heading, quote, a row of swatches
 * with shadows). Every frame is the same picture.
 */
export function staticCard(): string {
  const swatches = ['#e63946', '#f1c453', '#2a9d8f', '#264653', '#a8dadc']
    .map((c) => `<i style="background:${c}"></i>`)
    .join('');
  return `<!doctype html><html><head><meta charset="utf-8"><style>
  html, body { margin: 0; width: 100vw; height: 100vh; overflow: hidden; font: 28px serif; color: #f4efe6;
               background: linear-gradient(135deg, #1d2b3a, #4a2f4f 60%, #7a4a3a); }
  h1 { position: absolute; left: 8vw; top: 36vh; margin: 0; font: 700 9vh sans-serif; letter-spacing: -.02em; }
  blockquote { position: absolute; left: 8vw; top: 52vh; width: 60vw; margin: 0; font-style: italic; line-height: 1.5; }
  .sw { position: absolute; left: 8vw; bottom: 6vh; display: flex; gap: 2vw; }
  .sw i { width: 9vh; height: 9vh; border-radius: 1.5vh; box-shadow: 0 1vh 3vh rgba(0,0,0,.45); }
</style></head><body>
<h1>Autumn palette</h1>
<blockquote>"Colour is a power which directly influences the soul." Warm rust against deep ink, with a teal accent for
calm, for the spring campaign's landing page and its print run.</blockquote>
<div class="sw">${swatches}</div></body></html>`;
}

/**
 * The static card with one small moving accent: the CSS timing bar (8 px wide) crossing the width once in `seconds`,
 * so the timing error of the CSS band can be measured as on the other cards.
 */
export function accentCard(width: number, seconds: number): string {
  const travel = width - BAR;
  return staticCard()
    .replace(
      '</style>',
      `.bar { position: absolute; left: 0; width: ${BAR}px; height: 20vh; background: #fff; }
  #css { top: 10vh; animation: slide ${seconds}s linear forwards; }
  @keyframes slide { from { transform: translateX(0); } to { transform: translateX(${travel}px); } }
</style>`,
    )
    .replace('</body>', '<div id="css" class="bar"></div></body>');
}
