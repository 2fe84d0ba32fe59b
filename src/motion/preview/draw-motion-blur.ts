/**
 * The drawer's motion blur (plain browser JavaScript, spliced into draw-script.ts's closure, where `acquire`,
 * `release` and `drawNode` are defined). A group with `motionBlur` (scene/motion-blur.ts) holds the layer at instants
 * spread over the open shutter; their mean (premultiplied pixels) is built as a tree: each half's mean on its own
 * surface, joined as a x (its share) + b x (its share) with destination-in and lighter, so a pixel is rounded to
 * 8 bits about log2(samples) times rather than once per sample (a running mean of 40 samples was 4 levels off).
 * Samples where the layer is not there count as empty: the mean is over `motionBlur` samples, not the children.
 */
export const DRAW_MOTION_BLUR_SCRIPT = String.raw`
  const scaleSurface = (c, f) => {
    const g = c.getContext('2d');
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.globalCompositeOperation = 'destination-in';
    g.fillStyle = 'rgba(0,0,0,' + f + ')';
    g.fillRect(0, 0, c.width, c.height);
    g.globalCompositeOperation = 'source-over';
  };
  // the mean of samples [from, to) on a new surface
  const meanOf = (list, from, to, m) => {
    if (to - from === 1) {
      const s = acquire();
      drawNode(s.getContext('2d'), list[from], m);
      return s;
    }
    const mid = (from + to) >> 1;
    const a = meanOf(list, from, mid, m);
    const b = meanOf(list, mid, to, m);
    scaleSurface(a, (mid - from) / (to - from));
    const g = a.getContext('2d');
    g.globalCompositeOperation = 'lighter';
    g.globalAlpha = (to - mid) / (to - from);
    g.drawImage(b, 0, 0);
    g.globalAlpha = 1;
    g.globalCompositeOperation = 'source-over';
    release(b);
    return a;
  };
  const drawSamples = (tg, n, m) => {
    if (!n.children.length) return;
    const acc = meanOf(n.children, 0, n.children.length, m);
    const total = Math.max(n.motionBlur, n.children.length);
    if (total > n.children.length) scaleSurface(acc, n.children.length / total);
    tg.save();
    tg.setTransform(1, 0, 0, 1, 0, 0);
    tg.drawImage(acc, 0, 0);
    tg.restore();
    release(acc);
  };
`;
