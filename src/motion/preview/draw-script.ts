/**
 * The preview page's drawer: plain browser JavaScript (no build step reaches the page) that draws one display list
 * (src/motion/scene/display.ts) on a Canvas 2D at the output size. It is given `window.__preview` = {width, height,
 * fit: [scale, dx, dy], background, transparent, fonts: {postscript: {family}}, footage: {id: what to draw, see
 * frames.ts PageFootage}, frames: [display list index per output frame], chunk: lists per file, chunkUrl: prefix,
 * lists: the lists when they are in the page} and draws the list of the virtual clock's current frame from
 * requestAnimationFrame; `__bmsClock.waitFor` holds the capture until the list, its pictures and fonts are in.
 *
 * Every layer that needs its own surface (opacity, a blend mode, masks, a matte) is drawn into an offscreen canvas of
 * the output size (device pixels, so transforms stay exact) and composited; canvases are pooled across frames.
 */
import { MASK_FEATHER_SIGMA } from '../scene/display.js';
import { DRAW_3D_SCRIPT } from './draw-3d.js';
import { DRAW_ADJUST_SCRIPT } from './draw-adjust.js';
import { DRAW_MOTION_BLUR_SCRIPT } from './draw-motion-blur.js';
import { DRAW_TEXT_SCRIPT } from './draw-text.js';

export const DRAW_SCRIPT = String.raw`
(() => {
  const P = window.__preview;
  const canvas = document.getElementById('out');
  const out = canvas.getContext('2d');
  const W = P.width;
  const H = P.height;
  const pool = [];
  const acquire = () => {
    const c = pool.pop() || document.createElement('canvas');
    if (c.width !== W || c.height !== H) { c.width = W; c.height = H; }
    const g = c.getContext('2d');
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.globalAlpha = 1;
    g.globalCompositeOperation = 'source-over';
    g.filter = 'none';
    g.clearRect(0, 0, W, H);
    return c;
  };
  const release = (c) => pool.push(c);
  const BLEND = {
    normal: 'source-over', add: 'lighter', 'linear-dodge': 'lighter', multiply: 'multiply', screen: 'screen',
    overlay: 'overlay', darken: 'darken', lighten: 'lighten', 'color-dodge': 'color-dodge', 'color-burn': 'color-burn',
    'classic-color-dodge': 'color-dodge', 'classic-color-burn': 'color-burn', 'hard-light': 'hard-light',
    'soft-light': 'soft-light', difference: 'difference', 'classic-difference': 'difference', exclusion: 'exclusion',
    hue: 'hue', saturation: 'saturation', color: 'color', luminosity: 'luminosity',
    // The layer's alpha cuts (stencil) or punches (silhouette) everything below it.
    'stencil-alpha': 'destination-in', 'silhouette-alpha': 'destination-out',
  };
  const blendOf = (b) => BLEND[b] || 'source-over';
  // Blend modes Canvas 2D lacks, per channel on straight sRGB values 0..1 (d: below, s: the layer): Adobe's formulas
  // (Photoshop's blend mode reference, which After Effects' manual follows). Composited with the alpha rule of the
  // W3C compositing spec: co = s·(1 - ad) + d·(1 - as) + as·ad·B(d, s).
  const lum = (r, g, b) => 0.3 * r + 0.59 * g + 0.11 * b;
  const burn = (d, s) => (s <= 0 ? 0 : Math.max(0, 1 - (1 - d) / s));
  const dodge = (d, s) => (s >= 1 ? 1 : Math.min(1, d / (1 - s)));
  const vivid = (d, s) => (s <= 0.5 ? burn(d, 2 * s) : dodge(d, 2 * s - 1));
  const SEPARABLE = {
    'linear-burn': (d, s) => Math.max(0, d + s - 1),
    'linear-light': (d, s) => Math.min(1, Math.max(0, d + 2 * s - 1)),
    'vivid-light': vivid,
    'pin-light': (d, s) => (s <= 0.5 ? Math.min(d, 2 * s) : Math.max(d, 2 * s - 1)),
    'hard-mix': (d, s) => (d + s >= 1 ? 1 : 0),
    subtract: (d, s) => Math.max(0, d - s),
    divide: (d, s) => (s <= 0 ? (d > 0 ? 1 : 0) : Math.min(1, d / s)),
  };
  const WHOLE = {
    'darker-color': (d, s) => (lum(s[0], s[1], s[2]) < lum(d[0], d[1], d[2]) ? s : d),
    'lighter-color': (d, s) => (lum(s[0], s[1], s[2]) > lum(d[0], d[1], d[2]) ? s : d),
  };
  const customBlend = (b) => SEPARABLE[b] || WHOLE[b] || b === 'dissolve';
  // Composites canvas \`src\` (output size, device pixels) onto context g with one of the modes above at \`alpha\`.
  const blendPixels = (g, src, b, alpha) => {
    const dst = g.getImageData(0, 0, W, H);
    const sp = src.getContext('2d').getImageData(0, 0, W, H).data;
    const dp = dst.data;
    const sep = SEPARABLE[b], whole = WHOLE[b];
    const d3 = [0, 0, 0], s3 = [0, 0, 0], o3 = [0, 0, 0];
    for (let i = 0; i < dp.length; i += 4) {
      let as = (sp[i + 3] / 255) * alpha;
      if (as <= 0) continue;
      if (b === 'dissolve') {
        // Dissolve keeps a pixel whole where a fixed noise falls below its opacity (the same pixels every frame).
        let h = (i / 4) | 0;
        h = Math.imul(h ^ (h >>> 16), 0x45d9f3b); h = Math.imul(h ^ (h >>> 16), 0x45d9f3b); h ^= h >>> 16;
        as = (h >>> 0) / 4294967296 < as ? 1 : 0;
        if (!as) continue;
      }
      const ad = dp[i + 3] / 255;
      for (let c = 0; c < 3; c++) { d3[c] = dp[i + c] / 255; s3[c] = sp[i + c] / 255; }
      if (whole) { const r = whole(d3, s3); o3[0] = r[0]; o3[1] = r[1]; o3[2] = r[2]; }
      else for (let c = 0; c < 3; c++) o3[c] = sep ? sep(d3[c], s3[c]) : s3[c];
      const ao = as + ad * (1 - as);
      for (let c = 0; c < 3; c++) {
        const co = s3[c] * as * (1 - ad) + d3[c] * ad * (1 - as) + as * ad * o3[c];
        dp[i + c] = Math.round((co / ao) * 255);
      }
      dp[i + 3] = Math.round(ao * 255);
    }
    g.putImageData(dst, 0, 0);
  };
  const css = (c, alpha) => {
    const a = Math.max(0, Math.min(1, (c[3] === undefined ? 1 : c[3]) * (alpha === undefined ? 1 : alpha)));
    const ch = (v) => Math.round(Math.max(0, Math.min(1, v)) * 255);
    return 'rgba(' + ch(c[0]) + ',' + ch(c[1]) + ',' + ch(c[2]) + ',' + a + ')';
  };
  const mul = (m, n) => [
    m[0] * n[0] + m[2] * n[1], m[1] * n[0] + m[3] * n[1],
    m[0] * n[2] + m[2] * n[3], m[1] * n[2] + m[3] * n[3],
    m[0] * n[4] + m[2] * n[5] + m[4], m[1] * n[4] + m[3] * n[5] + m[5],
  ];
  const setM = (g, m) => g.setTransform(m[0], m[1], m[2], m[3], m[4], m[5]);
  const scaleOf = (m) => Math.sqrt(Math.abs(m[0] * m[3] - m[1] * m[2])) || 1;

  // ---- paths ----
  const bezier = (p, path) => {
    const v = path.v, n = v.length;
    if (!n) return;
    p.moveTo(v[0][0], v[0][1]);
    const seg = (a, b) => {
      const o = path.o[a] || [0, 0], i = path.i[b] || [0, 0];
      p.bezierCurveTo(v[a][0] + o[0], v[a][1] + o[1], v[b][0] + i[0], v[b][1] + i[1], v[b][0], v[b][1]);
    };
    for (let k = 0; k + 1 < n; k++) seg(k, k + 1);
    if (path.closed) { seg(n - 1, 0); p.closePath(); }
  };
  const pathOf = (paths) => {
    const p = new Path2D();
    for (const path of paths) bezier(p, path);
    return p;
  };
  // Trim paths: each bezier flattened to a polyline, the kept stretch taken by length.
  const flatten = (path) => {
    const v = path.v, n = v.length, pts = [];
    if (!n) return pts;
    pts.push(v[0]);
    const seg = (a, b) => {
      const o = path.o[a] || [0, 0], i = path.i[b] || [0, 0];
      const p0 = v[a], p1 = [v[a][0] + o[0], v[a][1] + o[1]], p2 = [v[b][0] + i[0], v[b][1] + i[1]], p3 = v[b];
      for (let s = 1; s <= 24; s++) {
        const t = s / 24, u = 1 - t;
        pts.push([
          u * u * u * p0[0] + 3 * u * u * t * p1[0] + 3 * u * t * t * p2[0] + t * t * t * p3[0],
          u * u * u * p0[1] + 3 * u * u * t * p1[1] + 3 * u * t * t * p2[1] + t * t * t * p3[1],
        ]);
      }
    };
    for (let k = 0; k + 1 < n; k++) seg(k, k + 1);
    if (path.closed) seg(n - 1, 0);
    return pts;
  };
  const lengthOf = (pts) => {
    let l = 0;
    for (let k = 1; k < pts.length; k++) l += Math.hypot(pts[k][0] - pts[k - 1][0], pts[k][1] - pts[k - 1][1]);
    return l;
  };
  // Appends the part of the polyline between lengths a and b (a < b, both within it) to Path2D p.
  const cut = (p, pts, a, b) => {
    let l = 0, started = false;
    for (let k = 1; k < pts.length; k++) {
      const q0 = pts[k - 1], q1 = pts[k];
      const d = Math.hypot(q1[0] - q0[0], q1[1] - q0[1]);
      const s0 = Math.max(a, l), s1 = Math.min(b, l + d);
      if (d > 0 && s1 > s0) {
        const at = (s) => [q0[0] + ((q1[0] - q0[0]) * (s - l)) / d, q0[1] + ((q1[1] - q0[1]) * (s - l)) / d];
        const A = at(s0), B = at(s1);
        if (!started) { p.moveTo(A[0], A[1]); started = true; }
        p.lineTo(B[0], B[1]);
      }
      l += d;
      if (l >= b) break;
    }
  };
  const trimmed = (paths, trim) => {
    const p = new Path2D();
    const lines = paths.map(flatten);
    const keep = (pts, total, from, to) => {
      // from/to are fractions; the offset can move them past 1: the kept part wraps round to the start.
      const a = from - Math.floor(from), span = Math.min(1, to - from);
      if (span <= 0) return;
      if (span >= 1) { cut(p, pts, 0, total); return; }
      const b = a + span;
      if (b <= 1) cut(p, pts, a * total, b * total);
      else { cut(p, pts, a * total, total); cut(p, pts, 0, (b - 1) * total); }
    };
    const s = Math.min(trim.start, trim.end), e = Math.max(trim.start, trim.end);
    if (trim.individually || lines.length === 1) {
      for (const pts of lines) keep(pts, lengthOf(pts), s + trim.offset, e + trim.offset);
    } else {
      // All paths as one length: each keeps its share of [s, e].
      const lens = lines.map(lengthOf), total = lens.reduce((x, y) => x + y, 0);
      let at = 0;
      lines.forEach((pts, k) => {
        const a = total ? at / total : 0, b = total ? (at + lens[k]) / total : 0;
        const from = Math.max(s, a), to = Math.min(e, b);
        if (to > from && lens[k] > 0) cut(p, pts, ((from - a) / (b - a)) * lens[k], ((to - a) / (b - a)) * lens[k]);
        at += lens[k];
      });
    }
    return p;
  };

  // ---- paints ----
  // After Effects samples a gradient at each pixel's corner, Canvas at its centre: the ramp is moved half a device
  // pixel right and down (ae-renders' gradient-radial is symmetric about a pixel, not between two).
  const gradient = (g, gr, alpha, m) => {
    const det = m[0] * m[3] - m[1] * m[2] || 1;
    const hx = (0.5 * m[3] - 0.5 * m[2]) / det, hy = (0.5 * m[0] - 0.5 * m[1]) / det;
    gr = { ...gr, start: [gr.start[0] + hx, gr.start[1] + hy], end: [gr.end[0] + hx, gr.end[1] + hy] };
    let paint;
    if (gr.type === 'radial') {
      const r = Math.hypot(gr.end[0] - gr.start[0], gr.end[1] - gr.start[1]);
      const h = Math.max(-0.99, Math.min(0.99, gr.highlight_length || 0)) * r;
      const ang = Math.atan2(gr.end[1] - gr.start[1], gr.end[0] - gr.start[0]) + ((gr.highlight_angle || 0) * Math.PI) / 180;
      paint = g.createRadialGradient(gr.start[0] + Math.cos(ang) * h, gr.start[1] + Math.sin(ang) * h, 0, gr.start[0], gr.start[1], r);
    } else paint = g.createLinearGradient(gr.start[0], gr.start[1], gr.end[0], gr.end[1]);
    for (const s of gr.stops) paint.addColorStop(Math.max(0, Math.min(1, s.offset)), css(s.color, alpha));
    return paint;
  };

  // ---- pictures and fonts ----
  const pictures = new Map();
  const picture = (url, still) => {
    let p = pictures.get(url);
    if (!p) {
      const img = new Image();
      img.src = url;
      p = { img, ready: img.decode().then(() => img, () => null), still };
      pictures.set(url, p);
    }
    return p;
  };
  // What a footage leaf shows: its picture, the video frame at its source time, nothing past a clip's last frame, or
  // the placeholder (footage missing or unreadable).
  const sourceOf = (n) => {
    const f = P.footage[n.footage_id];
    if (n.media === 'placeholder' || !f || f.missing) return { placeholder: true };
    if (f.image) return { src: f.image, still: true };
    const v = f.video;
    const frame = Math.max(0, Math.floor((n.source_time || 0) * v.rate + 1e-6));
    if (frame < v.first || frame >= v.first + v.count) return {};
    return { src: v.prefix + String(frame).padStart(6, '0') + '.jpg', still: false };
  };
  const fontsReady = Promise.all(
    Object.values(P.fonts).filter((f) => f.loaded).map((f) => document.fonts.load('16px "' + f.family + '"').catch(() => null)),
  );

  // ---- leaves ----
  const drawFootage = (g, n, m) => {
    const source = sourceOf(n);
    if (!source.src && !source.placeholder) return;
    setM(g, m);
    const pic = source.src ? pictures.get(source.src) : null;
    const img = pic && pic.img.complete && pic.img.naturalWidth ? pic.img : null;
    if (img) { g.drawImage(img, 0, 0, n.width, n.height); return; }
    // Missing footage: a labelled placeholder (listed in the approximations).
    g.fillStyle = 'rgba(128,128,128,0.6)';
    g.fillRect(0, 0, n.width, n.height);
    g.strokeStyle = 'rgba(255,255,255,0.8)';
    g.lineWidth = 2 / scaleOf(m);
    g.beginPath();
    g.moveTo(0, 0); g.lineTo(n.width, n.height); g.moveTo(n.width, 0); g.lineTo(0, n.height);
    g.strokeRect(0, 0, n.width, n.height);
    g.stroke();
    const size = Math.max(8, Math.min(n.height / 8, n.width / 12));
    g.font = size + 'px sans-serif';
    g.textAlign = 'center';
    g.textBaseline = 'middle';
    g.fillStyle = '#fff';
    g.fillText('Missing: ' + n.name, n.width / 2, n.height / 2, n.width * 0.9);
    g.textAlign = 'start';
    g.textBaseline = 'alphabetic';
  };

  // Merge Paths: each input filled on a surface of its own, combined with the one before by compositing (the area a
  // boolean of the paths would have, edge pixels as the canvas antialiases them), the paint kept inside it.
  const MERGE_OP = { add: 'source-over', subtract: 'destination-out', intersect: 'destination-in', exclude: 'xor' };
  const mergedFill = (g, n, m) => {
    const c = acquire();
    const a = c.getContext('2d');
    setM(a, m);
    let at = 0;
    n.merge.operands.forEach((count, k) => {
      a.globalCompositeOperation = k === 0 ? 'source-over' : MERGE_OP[n.merge.mode];
      a.fill(pathOf(n.paths.slice(at, at + count)));
      at += count;
    });
    a.globalCompositeOperation = 'source-over';
    if (at < n.paths.length) a.fill(pathOf(n.paths.slice(at)), n.fill.rule === 'evenodd' ? 'evenodd' : 'nonzero');
    // the paint over the whole surface (its corners taken back into the shape's coordinates), kept where covered
    const det = m[0] * m[3] - m[1] * m[2] || 1;
    const back = (x, y) => [(m[3] * (x - m[4]) - m[2] * (y - m[5])) / det, (m[0] * (y - m[5]) - m[1] * (x - m[4])) / det];
    const all = new Path2D();
    [back(0, 0), back(W, 0), back(W, H), back(0, H)].forEach(([x, y], k) => (k ? all.lineTo(x, y) : all.moveTo(x, y)));
    all.closePath();
    a.globalCompositeOperation = 'source-in';
    a.fillStyle = n.fill.gradient ? gradient(a, n.fill.gradient, n.fill.opacity, m) : css(n.fill.color, n.fill.opacity);
    a.fill(all);
    g.save();
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.globalCompositeOperation = blendOf(n.fill.blend);
    g.drawImage(c, 0, 0);
    g.restore();
    release(c);
  };

  const drawShape = (g, n, m) => {
    const b = (n.fill && n.fill.blend) || (n.stroke && n.stroke.blend);
    if (customBlend(b)) {
      // A fill or stroke in a mode Canvas lacks: painted alone, then blended onto what the layer holds so far.
      const c = acquire();
      drawShape(c.getContext('2d'), { ...n, fill: n.fill && { ...n.fill, blend: 'normal' }, stroke: n.stroke && { ...n.stroke, blend: 'normal' } }, m);
      blendPixels(g, c, b, 1);
      release(c);
      return;
    }
    setM(g, m);
    const p = n.trim ? trimmed(n.paths, n.trim) : pathOf(n.paths);
    if (n.fill && n.merge) {
      mergedFill(g, n, m);
    } else if (n.fill) {
      g.globalCompositeOperation = blendOf(n.fill.blend);
      g.fillStyle = n.fill.gradient ? gradient(g, n.fill.gradient, n.fill.opacity, m) : css(n.fill.color, n.fill.opacity);
      g.fill(p, n.fill.rule === 'evenodd' ? 'evenodd' : 'nonzero');
    }
    if (n.stroke && n.stroke.width > 0) {
      const s = n.stroke;
      g.globalCompositeOperation = blendOf(s.blend);
      g.strokeStyle = s.gradient ? gradient(g, s.gradient, s.opacity, m) : css(s.color, s.opacity);
      g.lineWidth = s.width;
      g.lineCap = s.cap || 'butt';
      g.lineJoin = s.join || 'miter';
      g.miterLimit = s.miter_limit || 4;
      g.setLineDash(s.dashes || []);
      g.lineDashOffset = s.dash_offset || 0;
      g.stroke(p);
      g.setLineDash([]);
    }
    g.globalCompositeOperation = 'source-over';
  };

${DRAW_TEXT_SCRIPT}

  // ---- groups ----
  const maskCanvas = (n, m) => {
    const acc = acquire();
    const a = acc.getContext('2d');
    const first = n.masks.find((k) => k.mode !== 'none');
    if (first && (first.mode === 'subtract' || first.mode === 'intersect')) { a.fillStyle = '#fff'; a.fillRect(0, 0, W, H); }
    for (const k of n.masks) {
      if (k.mode === 'none') continue;
      let c = acquire();
      const g = c.getContext('2d');
      const p = pathOf([k.path]);
      setM(g, m);
      g.fillStyle = '#fff';
      g.strokeStyle = '#fff';
      g.lineJoin = 'round';
      g.fill(p);
      if (k.expansion) {
        g.lineWidth = Math.abs(k.expansion) * 2;
        if (k.expansion < 0) g.globalCompositeOperation = 'destination-out';
        g.stroke(p);
      }
      // feather: a Gaussian across the (expanded) edge, each axis its own (the layer's axes taken to the output's)
      const sx = ${MASK_FEATHER_SIGMA} * k.feather[0] * Math.hypot(m[0], m[1]);
      const sy = ${MASK_FEATHER_SIGMA} * k.feather[1] * Math.hypot(m[2], m[3]);
      if (sx > 0.05 || sy > 0.05) {
        const b = acquire();
        const bg = b.getContext('2d');
        bg.filter = window.__bmsEffects.blurFilter(sx, sy);
        bg.drawImage(c, 0, 0);
        bg.filter = 'none';
        release(c);
        c = b;
      }
      // inverted: one minus the mask (so a feather does not darken the surface's own edges)
      if (k.inverted) {
        const v = acquire();
        const vg = v.getContext('2d');
        vg.fillStyle = '#fff';
        vg.fillRect(0, 0, W, H);
        vg.globalCompositeOperation = 'destination-out';
        vg.drawImage(c, 0, 0);
        vg.globalCompositeOperation = 'source-over';
        release(c);
        c = v;
      }
      a.globalAlpha = k.opacity;
      a.globalCompositeOperation =
        k.mode === 'subtract' ? 'destination-out' : k.mode === 'intersect' || k.mode === 'darken' ? 'destination-in' : k.mode === 'difference' ? 'xor' : 'source-over';
      if (a.globalCompositeOperation === 'destination-in' && k.opacity < 1) {
        // Intersect at partial opacity keeps (1 - opacity) of what lies outside the mask.
        const keep = acquire();
        const kg = keep.getContext('2d');
        kg.globalAlpha = 1 - k.opacity;
        kg.fillStyle = '#fff';
        kg.fillRect(0, 0, W, H);
        kg.globalAlpha = 1;
        kg.globalCompositeOperation = 'lighter';
        kg.globalAlpha = k.opacity;
        kg.drawImage(c, 0, 0);
        a.globalAlpha = 1;
        a.drawImage(keep, 0, 0);
        release(keep);
      } else a.drawImage(c, 0, 0);
      a.globalAlpha = 1;
      a.globalCompositeOperation = 'source-over';
      release(c);
    }
    return acc;
  };

  const lumaFilter = 'url(#luma)';
  const applyMatte = (target, matte, m) => {
    const c = acquire();
    drawNode(c.getContext('2d'), matte.node, m);
    let alphaSource = c;
    if (matte.mode === 'luma' || matte.mode === 'luma-inverted') {
      // Luminance of the matte over black becomes alpha (an SVG feColorMatrix luminanceToAlpha, in sRGB).
      const flat = acquire();
      const fg = flat.getContext('2d');
      fg.fillStyle = '#000';
      fg.fillRect(0, 0, W, H);
      fg.drawImage(c, 0, 0);
      const l = acquire();
      const lg = l.getContext('2d');
      lg.filter = lumaFilter;
      lg.drawImage(flat, 0, 0);
      lg.filter = 'none';
      release(flat);
      release(c);
      alphaSource = l;
    }
    const g = target.getContext('2d');
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.globalCompositeOperation = matte.mode.endsWith('inverted') ? 'destination-out' : 'destination-in';
    g.drawImage(alphaSource, 0, 0);
    g.globalCompositeOperation = 'source-over';
    release(alphaSource);
  };

${DRAW_3D_SCRIPT}
${DRAW_MOTION_BLUR_SCRIPT}
  // A group's children within its clip (or the average of its motion blur samples); its masks on the surface they
  // were drawn on.
  const drawChildren = (tg, n, m) => {
    if (n.motionBlur) return drawSamples(tg, n, m);
    tg.save();
    if (n.clip) {
      setM(tg, m);
      tg.beginPath();
      tg.rect(0, 0, n.clip.width, n.clip.height);
      tg.clip();
    }
    for (const child of n.children) drawNode(tg, child, m);
    tg.restore();
  };
  const applyMasks = (tg, n, m) => {
    if (!n.masks || !n.masks.some((k) => k.mode !== 'none')) return;
    const mask = maskCanvas(n, m);
    tg.setTransform(1, 0, 0, 1, 0, 0);
    tg.globalCompositeOperation = 'destination-in';
    tg.drawImage(mask, 0, 0);
    tg.globalCompositeOperation = 'source-over';
    release(mask);
  };
  // What effects may use besides their surface: more surfaces, and other layers drawn in the parent's coordinates.
  const effectTools = (parent) => ({ acquire, release, W, H, draw: (node) => { const c = acquire(); drawNode(c.getContext('2d'), node, parent); return c; } });
${DRAW_ADJUST_SCRIPT}
  const drawGroup = (g, n, parent) => {
    if (n.warp || n.intersect) return drawWarped(g, n, parent);
    if (n.adjustment) return drawAdjustment(g, n, parent);
    const m = mul(parent, n.matrix);
    // a group holding an adjustment layer draws on a surface of its own: the adjustment works on its layers only
    const own = n.opacity < 1 || (n.blend && n.blend !== 'normal') || (n.masks && n.masks.length) || n.matte || n.effects || n.styles || n.isolate || n.children.some((c) => c.adjustment);
    const target = own ? acquire() : null;
    const tg = own ? target.getContext('2d') : g;
    drawChildren(tg, n, m);
    if (!own) return;
    applyMasks(tg, n, m);
    // Effects after the masks, then layer styles (draw-effects.ts)
    const tools = effectTools(parent);
    if (n.effects) window.__bmsEffects.apply(target, n, m, tools);
    if (n.styles) window.__bmsEffects.styles(target, n, parent, tools);
    if (n.matte) applyMatte(target, n.matte, parent);
    if (customBlend(n.blend)) blendPixels(g, target, n.blend, Math.max(0, Math.min(1, n.opacity)));
    else {
      g.save();
      g.setTransform(1, 0, 0, 1, 0, 0);
      g.globalAlpha = Math.max(0, Math.min(1, n.opacity));
      g.globalCompositeOperation = blendOf(n.blend);
      g.drawImage(target, 0, 0);
      g.restore();
    }
    release(target);
  };

  const drawNode = (g, n, m) => {
    if (n.kind === 'group') drawGroup(g, n, m);
    else if (n.kind === 'solid') { setM(g, m); g.fillStyle = css(n.color); g.fillRect(0, 0, n.width, n.height); }
    else if (n.kind === 'footage') drawFootage(g, n, m);
    else if (n.kind === 'shape') drawShape(g, n, m);
    else if (n.kind === 'text') drawText(g, n, m);
  };

  const sources = (n, acc) => {
    if (n.kind === 'footage') {
      const source = sourceOf(n);
      if (source.src) acc.set(source.src, source.still);
    }
    if (n.kind === 'group') {
      for (const c of n.children) sources(c, acc);
      if (n.matte) sources(n.matte.node, acc);
    }
    return acc;
  };

  const draw = (list) => {
    out.setTransform(1, 0, 0, 1, 0, 0);
    out.globalAlpha = 1;
    out.globalCompositeOperation = 'source-over';
    out.clearRect(0, 0, W, H);
    if (!P.transparent) { out.fillStyle = css(P.background.concat([1])); out.fillRect(0, 0, W, H); }
    const f = P.fit;
    drawGroup(out, list.root, [f[0], 0, 0, f[0], f[1], f[2]]);
  };

  // ---- frames on the virtual clock ----
  const chunks = new Map();
  const chunk = (k) => {
    let p = chunks.get(k);
    if (!p) {
      p = P.lists ? Promise.resolve(P.lists) : fetch(P.chunkUrl + k + '.json').then((r) => {
        if (!r.ok) throw new Error('display lists ' + k + ': ' + r.status);
        return r.json();
      });
      chunks.set(k, p);
    }
    return p;
  };
  const listAt = (index) => chunk(Math.floor(index / P.chunk)).then((lists) => lists[index % P.chunk]);
  const prepare = (index) =>
    listAt(index).then((list) => {
      const urls = sources(list.root, new Map());
      return Promise.all([...urls].map(([u, still]) => picture(u, still).ready)).then(() => ({ list, urls }));
    });
  let shown = -1;
  const show = (f) => {
    const index = P.frames[Math.min(f, P.frames.length - 1)];
    if (index === shown) return;
    shown = index;
    const drawn = Promise.all([prepare(index), fontsReady]).then(([ready]) => {
      draw(ready.list);
      // Pictures no later frame of this list will ask for again are let go (video frames come and go).
      for (const [u, p] of pictures) if (!ready.urls.has(u) && !p.still) pictures.delete(u);
      for (const k of chunks.keys()) if (k < Math.floor(index / P.chunk)) chunks.delete(k);
    });
    const next = P.frames[Math.min(f + 1, P.frames.length - 1)];
    if (next !== index) prepare(next).catch(() => undefined);
    window.__bmsClock.waitFor(drawn);
  };
  const tick = (now) => {
    // Each frame is a function of its display list alone: frames a range only steps through need no drawing.
    if (window.__bmsClock.willDraw()) show(Math.max(0, Math.round((now * P.fps) / 1000)));
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})();
`;
