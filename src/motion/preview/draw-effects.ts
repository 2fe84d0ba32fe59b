import { MASK_FEATHER_SIGMA } from '../scene/display.js';
import { contourTable, GAUSSIAN_CONTOUR } from './contours.js';

/**
 * The preview page's effects and layer styles: plain browser JavaScript, run before the drawer (draw-script.ts), that
 * sets `window.__bmsEffects = {apply, styles, blurFilter}` (blurFilter(sx, sy): a canvas filter blurring each axis by
 * its own sigma, which masks' feather uses too). The drawer calls them on a layer's own surface (an offscreen canvas of
 * the output size, device pixels) after its masks: `apply(canvas, group, m, tools)` runs the group's effects in order,
 * `styles(canvas, group, fit, tools)` its layer styles. Effect parameters are in the layer's coordinates (m takes them
 * to the output); styles are in composition coordinates (`fit` takes them to the output), as After Effects draws
 * styles after the layer's transform.
 *
 * Blurs use the canvas `filter` (Skia's Gaussian: sigma = 0.3 x After Effects' blurriness, the factor lottie-web and
 * skottie found against After Effects); colour effects work on the pixels (getImageData over the layer's bounding box,
 * straight colour as After Effects corrects it). Nothing here reads a clock or a random source: the same list gives
 * the same pixels.
 */
export const EFFECTS_SCRIPT = String.raw`
(() => {
  const BLUR_SIGMA = 0.3;
  // After Effects' feather width to a Gaussian's sigma, as masks' feather (skottie's factor: "close enough to AE")
  const FEATHER_SIGMA = ${MASK_FEATHER_SIGMA};
  const SATIN_CONTOUR = ${JSON.stringify(contourTable(GAUSSIAN_CONTOUR))};
  const clamp = (x, a, b) => Math.max(a, Math.min(b, x));
  const num = (v, d) => (typeof v === 'number' && isFinite(v) ? v : Array.isArray(v) ? v[0] : d);
  const col = (v, d) => (Array.isArray(v) && v.length >= 3 ? v : d);
  const css = (c, a) => 'rgba(' + [0, 1, 2].map((k) => Math.round(clamp(c[k], 0, 1) * 255)).join(',') + ',' + clamp(a, 0, 1) + ')';
  const scaleOf = (m) => Math.sqrt(Math.abs(m[0] * m[3] - m[1] * m[2])) || 1;
  const map = (m, p) => [m[0] * p[0] + m[2] * p[1] + m[4], m[1] * p[0] + m[3] * p[1] + m[5]];
  const vec = (m, v) => [m[0] * v[0] + m[2] * v[1], m[1] * v[0] + m[3] * v[1]];
  const luma = (r, g, b) => 0.299 * r + 0.587 * g + 0.114 * b;
  const invert = (m) => {
    const d = m[0] * m[3] - m[1] * m[2] || 1;
    return [m[3] / d, -m[1] / d, -m[2] / d, m[0] / d, (m[2] * m[5] - m[3] * m[4]) / d, (m[1] * m[4] - m[0] * m[5]) / d];
  };

  // ---- surfaces ----
  const ctxOf = (c) => c.getContext('2d', { willReadFrequently: true });
  const copy = (T, c) => {
    const d = T.acquire();
    d.getContext('2d').drawImage(c, 0, 0);
    return d;
  };
  const replace = (c, src) => {
    const g = c.getContext('2d');
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.globalAlpha = 1;
    g.globalCompositeOperation = 'copy';
    g.drawImage(src, 0, 0);
    g.globalCompositeOperation = 'source-over';
  };
  // A blurred copy: separate sigmas through an SVG feGaussianBlur made once per pair (the canvas filter string only
  // blurs both ways alike).
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('width', '0');
  svg.setAttribute('height', '0');
  svg.style.position = 'absolute';
  document.body.appendChild(svg);
  const filters = new Map();
  const blurFilter = (sx, sy) => {
    if (sx === sy) return 'blur(' + sx + 'px)';
    const key = sx.toFixed(3) + ',' + sy.toFixed(3);
    let id = filters.get(key);
    if (!id) {
      id = 'bmsblur' + filters.size;
      const f = document.createElementNS('http://www.w3.org/2000/svg', 'filter');
      f.setAttribute('id', id);
      f.setAttribute('color-interpolation-filters', 'sRGB');
      f.setAttribute('x', '-50%'); f.setAttribute('y', '-50%'); f.setAttribute('width', '200%'); f.setAttribute('height', '200%');
      const b = document.createElementNS('http://www.w3.org/2000/svg', 'feGaussianBlur');
      b.setAttribute('stdDeviation', sx + ' ' + sy);
      f.appendChild(b);
      svg.appendChild(f);
      filters.set(key, id);
    }
    return 'url(#' + id + ')';
  };
  const blurred = (T, c, sx, sy) => {
    const d = T.acquire();
    const g = d.getContext('2d');
    if (sx > 0.05 || sy > 0.05) g.filter = blurFilter(Math.max(0, sx), Math.max(0, sy));
    g.drawImage(c, 0, 0);
    g.filter = 'none';
    return d;
  };
  // The layer's rectangle on the output, as a path (effects that stop at the layer's edges).
  const boundsPath = (g, n, m) => {
    const b = n.layerSize || { width: 0, height: 0 };
    const q = [[0, 0], [b.width, 0], [b.width, b.height], [0, b.height]].map((p) => map(m, p));
    g.beginPath();
    g.moveTo(q[0][0], q[0][1]);
    for (let k = 1; k < 4; k++) g.lineTo(q[k][0], q[k][1]);
    g.closePath();
  };
  const clipToBounds = (c, n, m) => {
    const g = c.getContext('2d');
    g.save();
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.globalCompositeOperation = 'destination-in';
    boundsPath(g, n, m);
    g.fillStyle = '#fff';
    g.fill();
    g.restore();
  };
  // Pixels of the layer's bounding box on the output (the whole surface when it has no bounds).
  const box = (T, n, m) => {
    const b = n.layerSize;
    if (!b) return [0, 0, T.W, T.H];
    const q = [[0, 0], [b.width, 0], [b.width, b.height], [0, b.height]].map((p) => map(m, p));
    const x0 = clamp(Math.floor(Math.min(...q.map((p) => p[0]))), 0, T.W), x1 = clamp(Math.ceil(Math.max(...q.map((p) => p[0]))), 0, T.W);
    const y0 = clamp(Math.floor(Math.min(...q.map((p) => p[1]))), 0, T.H), y1 = clamp(Math.ceil(Math.max(...q.map((p) => p[1]))), 0, T.H);
    return [x0, y0, x1 - x0, y1 - y0];
  };
  // Runs f(r, g, b, a, x, y) -> [r, g, b, a] (0..1, straight colour) over the box; f may return null to keep a pixel.
  const perPixel = (T, c, n, m, f, all) => {
    const [x0, y0, w, h] = all ? [0, 0, T.W, T.H] : box(T, n, m);
    if (w <= 0 || h <= 0) return;
    const g = ctxOf(c);
    const img = g.getImageData(x0, y0, w, h);
    const d = img.data;
    for (let y = 0, i = 0; y < h; y++) {
      for (let x = 0; x < w; x++, i += 4) {
        if (!all && d[i + 3] === 0) continue;
        const o = f(d[i] / 255, d[i + 1] / 255, d[i + 2] / 255, d[i + 3] / 255, x0 + x, y0 + y);
        if (!o) continue;
        d[i] = Math.round(clamp(o[0], 0, 1) * 255);
        d[i + 1] = Math.round(clamp(o[1], 0, 1) * 255);
        d[i + 2] = Math.round(clamp(o[2], 0, 1) * 255);
        d[i + 3] = Math.round(clamp(o[3], 0, 1) * 255);
      }
    }
    g.putImageData(img, x0, y0);
  };
  const mix = (a, b, t) => a + (b - a) * t;
  const rgbToHsl = (r, g, b) => {
    const max = Math.max(r, g, b), min = Math.min(r, g, b), l = (max + min) / 2, d = max - min;
    if (d === 0) return [0, 0, l];
    const s = l > 0.5 ? d / (2 - max - min) : d / (max + min);
    let h = max === r ? (g - b) / d + (g < b ? 6 : 0) : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
    return [h / 6, s, l];
  };
  const hue2 = (p, q, t) => {
    t -= Math.floor(t);
    if (t < 1 / 6) return p + (q - p) * 6 * t;
    if (t < 1 / 2) return q;
    if (t < 2 / 3) return p + (q - p) * (2 / 3 - t) * 6;
    return p;
  };
  const hslToRgb = (h, s, l) => {
    if (s <= 0) return [l, l, l];
    const q = l < 0.5 ? l * (1 + s) : l + s - l * s, p = 2 * l - q;
    return [hue2(p, q, h + 1 / 3), hue2(p, q, h), hue2(p, q, h - 1 / 3)];
  };
  const toLinear = (v) => (v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4));
  const toSrgb = (v) => (v <= 0.0031308 ? v * 12.92 : 1.055 * Math.pow(Math.max(0, v), 1 / 2.4) - 0.055);

  // ---- value noise (Fractal Noise, Turbulent Displace): deterministic, seeded by the effect's random seed ----
  const hash = (x, y, z, seed) => {
    let h = (x * 374761393 + y * 668265263 + z * 2147483647 + seed * 144665) | 0;
    h = Math.imul(h ^ (h >>> 13), 1274126177);
    return ((h ^ (h >>> 16)) >>> 0) / 4294967295;
  };
  const fade = (t) => t * t * t * (t * (t * 6 - 15) + 10);
  const noise3 = (x, y, z, seed) => {
    const xi = Math.floor(x), yi = Math.floor(y), zi = Math.floor(z);
    const fx = fade(x - xi), fy = fade(y - yi), fz = fade(z - zi);
    const v = (a, b, c) => hash(xi + a, yi + b, zi + c, seed);
    const l = (a, b, t) => a + (b - a) * t;
    return l(
      l(l(v(0, 0, 0), v(1, 0, 0), fx), l(v(0, 1, 0), v(1, 1, 0), fx), fy),
      l(l(v(0, 0, 1), v(1, 0, 1), fx), l(v(0, 1, 1), v(1, 1, 1), fx), fy),
      fz,
    );
  };
  const fractal = (x, y, z, octaves, sub, subScale, seed, turbulent) => {
    let sum = 0, amp = 1, norm = 0, f = 1;
    const whole = Math.max(1, Math.floor(octaves)), part = octaves - whole;
    for (let k = 0; k < whole + (part > 0 ? 1 : 0); k++) {
      const w = k === whole ? part : 1;
      let v = noise3(x * f, y * f, z + k * 17.3, seed + k);
      if (turbulent) v = Math.abs(v * 2 - 1);
      sum += v * amp * w;
      norm += amp * w;
      amp *= sub;
      f /= subScale;
    }
    return norm ? sum / norm : 0;
  };

  // ---- effects: (canvas, effect, group, m, tools) ----
  const E = {};
  const blurBy = (c, n, m, T, sigma, dims, repeat) => {
    const s = sigma * scaleOf(m);
    if (s <= 0.05) return;
    const sx = dims === 3 ? 0 : s, sy = dims === 2 ? 0 : s;
    const b = blurred(T, c, sx, sy);
    replace(c, b);
    T.release(b);
    if (repeat && n.layerSize) clipToBounds(c, n, m);
  };
  E['gaussian-blur'] = (c, p, n, m, T) =>
    blurBy(c, n, m, T, num(p.Blurriness, 0) * BLUR_SIGMA, num(p['Blur Dimensions'], 1), num(p['Repeat Edge Pixels'], 0) === 1);
  // Box blurs repeated converge on a Gaussian: n passes of radius r have the variance of n (2r+1)^2 - 1) / 12.
  E['box-blur'] = (c, p, n, m, T) => {
    const r = num(p['Blur Radius'], 0), it = Math.max(1, num(p.Iterations, 3));
    blurBy(c, n, m, T, Math.sqrt((it * ((2 * r + 1) * (2 * r + 1) - 1)) / 12), num(p['Blur Dimensions'], 1), num(p['Repeat Edge Pixels'], 0) === 1);
  };
  // Directional: copies along the direction (a bearing, 0 = up) over the blur length either side, averaged.
  E['directional-blur'] = (c, p, n, m, T) => {
    const len = num(p['Blur Length'], 0);
    if (len <= 0) return;
    const a = (num(p.Direction, 0) * Math.PI) / 180;
    const d = vec(m, [Math.sin(a) * len, -Math.cos(a) * len]);
    const steps = Math.min(64, Math.max(2, Math.ceil(Math.hypot(d[0], d[1]))));
    const src = copy(T, c), g = c.getContext('2d');
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.clearRect(0, 0, T.W, T.H);
    g.globalCompositeOperation = 'lighter';
    g.globalAlpha = 1 / (steps + 1);
    for (let k = 0; k <= steps; k++) {
      const t = k / steps - 0.5;
      g.drawImage(src, d[0] * t, d[1] * t);
    }
    g.globalAlpha = 1;
    g.globalCompositeOperation = 'source-over';
    T.release(src);
  };
  // Radial: spin turns copies around the centre by up to Amount degrees; zoom scales them about it.
  E['radial-blur'] = (c, p, n, m, T) => {
    const amount = num(p.Amount, 10);
    if (amount <= 0) return;
    const b = n.layerSize || { width: 0, height: 0 };
    const ctr = map(m, Array.isArray(p.Center) ? p.Center : [b.width / 2, b.height / 2]);
    const zoom = num(p.Type, 1) === 2, steps = 32;
    const src = copy(T, c), g = c.getContext('2d');
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.clearRect(0, 0, T.W, T.H);
    g.globalCompositeOperation = 'lighter';
    g.globalAlpha = 1 / (steps + 1);
    for (let k = 0; k <= steps; k++) {
      const t = k / steps - 0.5;
      g.setTransform(1, 0, 0, 1, ctr[0], ctr[1]);
      if (zoom) { const s = 1 + (t * amount) / 100; g.scale(s, s); } else g.rotate((t * amount * Math.PI) / 180);
      g.drawImage(src, -ctr[0], -ctr[1]);
    }
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.globalAlpha = 1;
    g.globalCompositeOperation = 'source-over';
    T.release(src);
  };
  // Drop Shadow: the layer's alpha in the shadow colour, offset along the direction (0 = up, clockwise), blurred by
  // the softness, under the layer (opacity is stored 0..255, as bodymovin exports it).
  const shadowOf = (T, c, color, alpha, offset, sigma) => {
    const s = T.acquire(), g = s.getContext('2d');
    if (sigma > 0.05) g.filter = 'blur(' + sigma + 'px)';
    g.drawImage(c, offset[0], offset[1]);
    g.filter = 'none';
    g.globalCompositeOperation = 'source-in';
    g.fillStyle = css(color, alpha);
    g.fillRect(0, 0, T.W, T.H);
    g.globalCompositeOperation = 'source-over';
    return s;
  };
  E['drop-shadow'] = (c, p, n, m, T) => {
    const a = (num(p.Direction, 135) * Math.PI) / 180, dist = num(p.Distance, 5);
    const off = vec(m, [Math.sin(a) * dist, -Math.cos(a) * dist]);
    const s = shadowOf(T, c, col(p['Shadow Color'], [0, 0, 0, 1]), num(p.Opacity, 127.5) / 255, off, num(p.Softness, 0) * BLUR_SIGMA * scaleOf(m));
    const g = c.getContext('2d');
    g.setTransform(1, 0, 0, 1, 0, 0);
    if (num(p['Shadow Only'], 0) === 1) replace(c, s);
    else { g.globalCompositeOperation = 'destination-over'; g.drawImage(s, 0, 0); g.globalCompositeOperation = 'source-over'; }
    T.release(s);
  };
  // Glow: pixels brighter than the threshold, blurred by the radius and added (screen) over the layer.
  E.glow = (c, p, n, m, T) => {
    const th = num(p['Glow Threshold'], 153) / 255, intensity = num(p['Glow Intensity'], 1);
    const bright = copy(T, c);
    const useA = num(p['Glow Colors'], 1) === 2, ca = col(p['Color A'], [1, 1, 1, 1]), cb = col(p['Color B'], [0, 0, 0, 1]);
    perPixel(T, bright, n, m, (r, g, b, a) => {
      const l = num(p['Glow Based On'], 2) === 1 ? a : luma(r, g, b);
      if (l < th) return [0, 0, 0, 0];
      if (useA) { const t = clamp((l - th) / Math.max(1e-6, 1 - th), 0, 1); return [mix(cb[0], ca[0], t), mix(cb[1], ca[1], t), mix(cb[2], ca[2], t), a]; }
      return null;
    });
    const s = num(p['Glow Radius'], 10) * BLUR_SIGMA * scaleOf(m), dims = num(p['Glow Dimensions'], 1);
    const glow = blurred(T, bright, dims === 3 ? 0 : s, dims === 2 ? 0 : s);
    T.release(bright);
    const g = c.getContext('2d');
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.globalCompositeOperation = 'lighter';
    for (let k = intensity; k > 0; k -= 1) { g.globalAlpha = Math.min(1, k); g.drawImage(glow, 0, 0); }
    g.globalAlpha = 1;
    g.globalCompositeOperation = 'source-over';
    T.release(glow);
  };
  // Fill: the layer's alpha filled with the colour at the effect's opacity (stored 0..1); masks are not read.
  E.fill = (c, p, n, m, T) => {
    const color = col(p.Color, [1, 0, 0, 1]), o = num(p.Opacity, 1);
    perPixel(T, c, n, m, (r, g, b, a) => [mix(r, color[0], o), mix(g, color[1], o), mix(b, color[2], o), a]);
  };
  E.tint = (c, p, n, m, T) => {
    const k = col(p['Map Black To'], [0, 0, 0, 1]), w = col(p['Map White To'], [1, 1, 1, 1]), t = num(p['Amount to Tint'], 100) / 100;
    perPixel(T, c, n, m, (r, g, b, a) => {
      const l = luma(r, g, b);
      return [mix(r, mix(k[0], w[0], l), t), mix(g, mix(k[1], w[1], l), t), mix(b, mix(k[2], w[2], l), t), a];
    });
  };
  E.tritone = (c, p, n, m, T) => {
    const hi = col(p.Highlights, [1, 1, 1, 1]), mid = col(p.Midtones, [0.5, 0.4, 0.3, 1]), sh = col(p.Shadows, [0, 0, 0, 1]);
    const keep = num(p['Blend With Original'], 0) / 100;
    perPixel(T, c, n, m, (r, g, b, a) => {
      const l = luma(r, g, b);
      const q = l < 0.5 ? [sh, mid, l * 2] : [mid, hi, l * 2 - 1];
      return [0, 1, 2].map((k) => mix(mix(q[0][k], q[1][k], q[2]), [r, g, b][k], keep)).concat([a]);
    });
  };
  // Levels: each chosen channel from [input black, input white] to [output black, output white] through gamma
  // (stored 0..1; channel 1 RGB, 2 red, 3 green, 4 blue, 5 alpha).
  E.levels = (c, p, n, m, T) => {
    const ib = num(p['Input Black'], 0), iw = num(p['Input White'], 1), gm = Math.max(1e-3, num(p.Gamma, 1));
    const ob = num(p['Output Black'], 0), ow = num(p['Output White'], 1), ch = num(p['Channel:'], 1);
    const lut = new Float32Array(256);
    for (let i = 0; i < 256; i++) {
      const t = clamp((i / 255 - ib) / (iw - ib || 1e-6), 0, 1);
      lut[i] = ob + (ow - ob) * Math.pow(t, 1 / gm);
    }
    const f = (v) => lut[Math.round(v * 255)];
    perPixel(T, c, n, m, (r, g, b, a) => [
      ch === 1 || ch === 2 ? f(r) : r,
      ch === 1 || ch === 3 ? f(g) : g,
      ch === 1 || ch === 4 ? f(b) : b,
      ch === 5 ? f(a) : a,
    ]);
  };
  E['hue-saturation'] = (c, p, n, m, T) => {
    const colorize = num(p.Colorize, 0) === 1;
    const dh = (colorize ? num(p['Colorize Hue'], 0) : num(p['Master Hue'], 0)) / 360;
    const ds = (colorize ? num(p['Colorize Saturation'], 25) : num(p['Master Saturation'], 0)) / 100;
    const dl = (colorize ? num(p['Colorize Lightness'], 0) : num(p['Master Lightness'], 0)) / 100;
    perPixel(T, c, n, m, (r, g, b, a) => {
      let [h, s, l] = rgbToHsl(r, g, b);
      if (colorize) { h = dh; s = ds; } else { h += dh; s = clamp(s * (1 + ds), 0, 1); }
      l = dl < 0 ? l * (1 + dl) : l + (1 - l) * dl;
      return hslToRgb(h, s, l).concat([a]);
    });
  };
  E['brightness-contrast'] = (c, p, n, m, T) => {
    const br = num(p.Brightness, 0) / 100, ct = num(p.Contrast, 0) / 100;
    const k = ct >= 0 ? 1 / Math.max(1e-3, 1 - ct) : 1 + ct;
    perPixel(T, c, n, m, (r, g, b, a) => [r, g, b].map((v) => (v + br - 0.5) * k + 0.5).concat([a]));
  };
  // Exposure: in linear light, times 2^exposure plus the offset, then the gamma correction.
  E.exposure = (c, p, n, m, T) => {
    const e = Math.pow(2, num(p.Exposure, 0)), o = num(p.Offset, 0), gm = Math.max(1e-3, num(p['Gamma Correction'], 1));
    perPixel(T, c, n, m, (r, g, b, a) => [r, g, b].map((v) => toSrgb(Math.pow(Math.max(0, toLinear(v) * e + o), 1 / gm))).concat([a]));
  };
  E.invert = (c, p, n, m, T) => {
    const ch = num(p.Channel, 1), keep = num(p['Blend With Original'], 0) / 100;
    perPixel(T, c, n, m, (r, g, b, a) => {
      let o;
      if (ch === 1) o = [1 - r, 1 - g, 1 - b, a];
      else if (ch === 17) o = [r, g, b, 1 - a];
      else if (ch >= 2 && ch <= 4) { o = [r, g, b, a]; o[ch - 2] = 1 - o[ch - 2]; }
      else if (ch === 5) { const [h, s, l] = rgbToHsl(r, g, b); o = hslToRgb(h + 0.5, s, l).concat([a]); }
      else o = [1 - r, 1 - g, 1 - b, a];
      return [0, 1, 2].map((k) => mix(o[k], [r, g, b][k], keep)).concat([o[3]]);
    });
  };
  // Change To Color: pixels near the From colour (hue, lightness, saturation tolerances, softness) move to the To
  // colour's hue (and lightness, saturation by the Change setting).
  E['change-to-color'] = (c, p, n, m, T) => {
    const from = rgbToHsl(...col(p.From, [1, 0, 0, 1]).slice(0, 3)), to = rgbToHsl(...col(p.To, [0, 1, 0, 1]).slice(0, 3));
    const change = num(p.Change, 1), tolH = num(p.Hue, 0.05), tolL = num(p.Lightness, 0.5), tolS = num(p.Saturation, 0.5);
    const soft = num(p.Softness, 0.5);
    perPixel(T, c, n, m, (r, g, b, a) => {
      const [h, s, l] = rgbToHsl(r, g, b);
      const dh = Math.min(Math.abs(h - from[0]), 1 - Math.abs(h - from[0]));
      const d = Math.max(dh / Math.max(tolH, 1e-6), Math.abs(l - from[2]) / Math.max(tolL, 1e-6), Math.abs(s - from[1]) / Math.max(tolS, 1e-6));
      const w = d <= 1 ? 1 : soft > 0 ? clamp(1 - (d - 1) / (soft * 2), 0, 1) : 0;
      if (w <= 0) return null;
      const nh = h + ((((to[0] - from[0]) % 1) + 1.5) % 1 - 0.5) * w;
      const nl = change === 2 || change === 4 ? l + (to[2] - from[2]) * w : l;
      const ns = change === 3 || change === 4 ? s + (to[1] - from[1]) * w : s;
      return hslToRgb(nh, clamp(ns, 0, 1), clamp(nl, 0, 1)).concat([a]);
    });
  };
  // Gradient Ramp replaces the layer's pixels inside its bounds with the ramp (blended with the original).
  E['gradient-ramp'] = (c, p, n, m, T) => {
    const b = n.layerSize || { width: T.W, height: T.H };
    const s0 = map(m, Array.isArray(p['Start of Ramp']) ? p['Start of Ramp'] : [b.width / 2, 0]);
    const s1 = map(m, Array.isArray(p['End of Ramp']) ? p['End of Ramp'] : [b.width / 2, b.height]);
    const c0 = col(p['Start Color'], [0, 0, 0, 1]), c1 = col(p['End Color'], [1, 1, 1, 1]);
    const radial = num(p['Ramp Shape'], 1) === 2, keep = num(p['Blend With Original'], 0) / 100;
    const dx = s1[0] - s0[0], dy = s1[1] - s0[1], L2 = dx * dx + dy * dy || 1;
    perPixel(T, c, n, m, (r, g, bl, a, x, y) => {
      const t = radial ? Math.hypot(x + 0.5 - s0[0], y + 0.5 - s0[1]) / Math.sqrt(L2) : ((x + 0.5 - s0[0]) * dx + (y + 0.5 - s0[1]) * dy) / L2;
      const k = clamp(t, 0, 1);
      return [0, 1, 2].map((j) => mix(mix(c0[j], c1[j], k), [r, g, bl][j], keep)).concat([1]);
    }, true);
    clipToBounds(c, n, m);
  };
  // 4-Colour Gradient: colours weighted by inverse distance to their points (Blend sets how soft), over the layer.
  E['four-color-gradient'] = (c, p, n, m, T) => {
    const b = n.layerSize || { width: T.W, height: T.H };
    const pts = [1, 2, 3, 4].map((k, i) => map(m, Array.isArray(p['Point ' + k]) ? p['Point ' + k] : [[0.1, 0.1], [0.9, 0.1], [0.1, 0.9], [0.9, 0.9]][i].map((f, j) => f * (j ? b.height : b.width))));
    const cols = [1, 2, 3, 4].map((k) => col(p['Color ' + k], [[1, 1, 0, 1], [0, 1, 0, 1], [1, 0, 1, 1], [0, 0, 1, 1]][k - 1]));
    const power = 2 + 100 / Math.max(1, num(p.Blend, 100)), o = num(p.Opacity, 100) / 100;
    perPixel(T, c, n, m, (r, g, bl, a, x, y) => {
      let wsum = 0; const acc = [0, 0, 0];
      for (let k = 0; k < 4; k++) {
        const w = 1 / Math.pow(Math.hypot(x + 0.5 - pts[k][0], y + 0.5 - pts[k][1]) + 1e-3, power);
        wsum += w; for (let j = 0; j < 3; j++) acc[j] += cols[k][j] * w;
      }
      return [0, 1, 2].map((j) => mix([r, g, bl][j], acc[j] / wsum, o)).concat([a]);
    });
  };
  // Transitions: the part of the layer still shown keeps its alpha (feather: a soft edge of that many pixels).
  const wipe = (c, n, m, T, shown) => perPixel(T, c, n, m, (r, g, b, a, x, y) => {
    const k = clamp(shown(x + 0.5, y + 0.5), 0, 1);
    return k >= 1 ? null : [r, g, b, a * k];
  });
  E['linear-wipe'] = (c, p, n, m, T) => {
    const done = num(p['Transition Completion'], 0) / 100, f = Math.max(1e-3, num(p.Feather, 0) * scaleOf(m));
    if (done <= 0) return;
    const b = n.layerSize || { width: T.W, height: T.H };
    const a = (num(p['Wipe Angle'], 90) * Math.PI) / 180;
    // the wipe moves along the angle's direction (0 = up, 90 = left to right): the wiped part is behind the front
    const dir = vec(m, [Math.sin(a), -Math.cos(a)]), dl = Math.hypot(dir[0], dir[1]) || 1;
    const u = [dir[0] / dl, dir[1] / dl];
    const q = [[0, 0], [b.width, 0], [b.width, b.height], [0, b.height]].map((pt) => map(m, pt));
    const proj = q.map((pt) => pt[0] * u[0] + pt[1] * u[1]);
    const lo = Math.min(...proj) - f, hi = Math.max(...proj);
    const front = lo + (hi - lo + f) * done;
    wipe(c, n, m, T, (x, y) => (x * u[0] + y * u[1] - front) / f + 0.5);
  };
  E['radial-wipe'] = (c, p, n, m, T) => {
    const done = num(p['Transition Completion'], 0) / 100;
    if (done <= 0) return;
    const b = n.layerSize || { width: T.W, height: T.H };
    const ctr = map(m, Array.isArray(p['Wipe Center']) ? p['Wipe Center'] : [b.width / 2, b.height / 2]);
    const start = num(p['Start Angle'], 0), mode = num(p.Wipe, 1), f = num(p.Feather, 0) * scaleOf(m);
    const rot = (Math.atan2(m[1], m[0]) * 180) / Math.PI;
    wipe(c, n, m, T, (x, y) => {
      // clockwise bearing from the start angle (0 = up)
      let ang = (Math.atan2(x - ctr[0], -(y - ctr[1])) * 180) / Math.PI - start - rot;
      ang = ((ang % 360) + 360) % 360;
      let t = mode === 2 ? 360 - ang : mode === 3 ? Math.min(ang, 360 - ang) * 2 : ang;
      const edge = 360 * done;
      const soft = f > 0 ? (f / Math.max(1, Math.hypot(x - ctr[0], y - ctr[1]))) * (180 / Math.PI) : 1e-3;
      return (t - edge) / soft + 0.5;
    });
  };
  E['venetian-blinds'] = (c, p, n, m, T) => {
    const done = num(p['Transition Completion'], 0) / 100, w = Math.max(1, num(p.Width, 10));
    if (done <= 0) return;
    const a = (num(p.Direction, 0) * Math.PI) / 180, f = num(p.Feather, 0);
    const inv = invert(m);
    wipe(c, n, m, T, (x, y) => {
      const l = map(inv, [x, y]);
      const s = l[0] * Math.cos(a) + l[1] * Math.sin(a);
      const pos = ((s % w) + w) % w;
      return f > 0 ? (pos - w * done) / f + 0.5 : pos >= w * done ? 1 : 0;
    });
  };
  // Transform: the layer redrawn through another transform in its own coordinates (anchor, position, scale, skew,
  // rotation) at an opacity (percent).
  E.transform = (c, p, n, m, T) => {
    const b = n.layerSize || { width: 0, height: 0 };
    const ap = Array.isArray(p['Anchor Point']) ? p['Anchor Point'] : [b.width / 2, b.height / 2];
    const pos = Array.isArray(p.Position) ? p.Position : ap;
    const uni = num(p['Uniform Scale'], 1) === 1;
    const sy = (uni ? num(p.Scale, 100) : num(p['Scale Height'], 100)) / 100, sx = (uni ? num(p.Scale, 100) : num(p['Scale Width'], 100)) / 100;
    const r = (num(p.Rotation, 0) * Math.PI) / 180, sk = (num(p.Skew, 0) * Math.PI) / 180, ska = (num(p['Skew Axis'], 0) * Math.PI) / 180;
    const src = copy(T, c), g = c.getContext('2d');
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.clearRect(0, 0, T.W, T.H);
    // layer -> output: m * T(pos) * R * Skew * S * T(-anchor) * inverse(m)
    const inv = invert(m);
    g.setTransform(m[0], m[1], m[2], m[3], m[4], m[5]);
    g.translate(pos[0], pos[1]);
    g.rotate(r);
    if (sk) { g.rotate(ska); g.transform(1, 0, -Math.tan(sk), 1, 0, 0); g.rotate(-ska); }
    g.scale(sx, sy);
    g.translate(-ap[0], -ap[1]);
    g.transform(inv[0], inv[1], inv[2], inv[3], inv[4], inv[5]);
    g.globalAlpha = clamp(num(p.Opacity, 100) / 100, 0, 1);
    g.drawImage(src, 0, 0);
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.globalAlpha = 1;
    T.release(src);
  };
  // Motion Tile: the layer's rectangle repeated around itself (tile size in percent), over an output of the given
  // percent of the layer, mirrored when asked.
  E['motion-tile'] = (c, p, n, m, T) => {
    const b = n.layerSize;
    if (!b) return;
    const tw = (b.width * num(p['Tile Width'], 100)) / 100, th = (b.height * num(p['Tile Height'], 100)) / 100;
    const ow = (b.width * num(p['Output Width'], 100)) / 100, oh = (b.height * num(p['Output Height'], 100)) / 100;
    const ctr = Array.isArray(p['Tile Center']) ? p['Tile Center'] : [b.width / 2, b.height / 2];
    const mirror = num(p['Mirror Edges'], 0) === 1;
    if (tw < 1 || th < 1) return;
    const inv = invert(m);
    // the layer's own pixels as one tile (in layer coordinates)
    const tile = T.acquire(), tg = tile.getContext('2d');
    tg.setTransform(inv[0], inv[1], inv[2], inv[3], inv[4], inv[5]);
    tg.drawImage(c, 0, 0);
    const g = c.getContext('2d');
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.clearRect(0, 0, T.W, T.H);
    const x0 = (b.width - ow) / 2, y0 = (b.height - oh) / 2;
    g.setTransform(m[0], m[1], m[2], m[3], m[4], m[5]);
    // the clip must not outlive the effect: surfaces are pooled
    g.save();
    g.beginPath(); g.rect(x0, y0, ow, oh); g.clip();
    const ox = ctr[0] - tw / 2, oy = ctr[1] - th / 2;
    for (let i = Math.floor((x0 - ox) / tw) - 1; ox + i * tw < x0 + ow; i++) {
      for (let j = Math.floor((y0 - oy) / th) - 1; oy + j * th < y0 + oh; j++) {
        g.save();
        g.translate(ox + i * tw + (mirror && i % 2 ? tw : 0), oy + j * th + (mirror && j % 2 ? th : 0));
        g.scale(mirror && i % 2 ? -1 : 1, mirror && j % 2 ? -1 : 1);
        g.drawImage(tile, 0, 0, b.width, b.height, 0, 0, tw, th);
        g.restore();
      }
    }
    g.restore();
    g.setTransform(1, 0, 0, 1, 0, 0);
    T.release(tile);
  };
  // Wave Warp: each pixel moved perpendicular to the wave's direction by a sine (or other shape) of its position.
  E['wave-warp'] = (c, p, n, m, T, fx) => {
    const hgt = num(p['Wave Height'], 10) * scaleOf(m), wid = Math.max(1, num(p['Wave Width'], 40) * scaleOf(m));
    if (!hgt) return;
    const a = (num(p.Direction, 90) * Math.PI) / 180, type = num(p['Wave Type'], 1);
    const phase = num(p.Phase, 0) / 360 + num(p['Wave Speed'], 1) * (fx.time || 0);
    const dir = [Math.sin(a), -Math.cos(a)], perp = [-dir[1], dir[0]];
    const shape = (t) => {
      const f = t - Math.floor(t);
      if (type === 2) return f < 0.5 ? 1 : -1;
      if (type === 3) return 1 - 4 * Math.abs(f - 0.5);
      if (type === 4) return 2 * f - 1;
      return Math.sin(2 * Math.PI * t);
    };
    const src = ctxOf(c).getImageData(0, 0, T.W, T.H).data;
    perPixel(T, c, n, m, (r, g, b, al, x, y) => {
      const s = (x * dir[0] + y * dir[1]) / wid + phase;
      const d = shape(s) * hgt;
      const sx = Math.round(x - perp[0] * d), sy = Math.round(y - perp[1] * d);
      if (sx < 0 || sy < 0 || sx >= T.W || sy >= T.H) return [0, 0, 0, 0];
      const i = (sy * T.W + sx) * 4;
      return [src[i] / 255, src[i + 1] / 255, src[i + 2] / 255, src[i + 3] / 255];
    }, true);
  };
  E['fractal-noise'] = (c, p, n, m, T) => {
    const inv = invert(m);
    const uni = num(p['Uniform Scaling'], 1) === 1;
    const sx = Math.max(1, uni ? num(p.Scale, 100) : num(p['Scale Width'], 100)), sy = Math.max(1, uni ? num(p.Scale, 100) : num(p['Scale Height'], 100));
    const rot = (num(p.Rotation, 0) * Math.PI) / 180, cr = Math.cos(rot), sr = Math.sin(rot);
    const off = Array.isArray(p['Offset Turbulence']) ? p['Offset Turbulence'] : [0, 0];
    const cx = num(p.Contrast, 100) / 100, br = num(p.Brightness, 0) / 100, ev = num(p.Evolution, 0) / 360;
    const octaves = clamp(num(p.Complexity, 6), 1, 20), sub = num(p['Sub Influence (%)'], 70) / 100, subS = Math.max(1.01, 100 / Math.max(1, num(p['Sub Scaling'], 56)));
    const seed = num(p['Random Seed'], 0) | 0, turb = num(p['Fractal Type'], 1) !== 1, inverted = num(p.Invert, 0) === 1;
    const o = clamp(num(p.Opacity, 100) / 100, 0, 1);
    perPixel(T, c, n, m, (r, g, b, a, x, y) => {
      const l = map(inv, [x + 0.5, y + 0.5]);
      const u = l[0] - off[0], v = l[1] - off[1];
      let val = fractal((u * cr + v * sr) / sx, (-u * sr + v * cr) / sy, ev, octaves, sub, subS, seed, turb);
      val = clamp((val - 0.5) * cx + 0.5 + br, 0, 1);
      if (inverted) val = 1 - val;
      return [mix(r, val, o), mix(g, val, o), mix(b, val, o), a];
    });
  };
  E['turbulent-displace'] = (c, p, n, m, T) => {
    const amt = num(p.Amount, 50) * scaleOf(m), size = Math.max(1, num(p.Size, 100) * scaleOf(m));
    const octaves = clamp(num(p.Complexity, 1), 1, 10), ev = num(p.Evolution, 0) / 360, seed = num(p['Random Seed'], 0) | 0;
    const src = ctxOf(c).getImageData(0, 0, T.W, T.H).data;
    perPixel(T, c, n, m, (r, g, b, a, x, y) => {
      const dx = (fractal(x / size, y / size, ev, octaves, 0.5, 2, seed, false) - 0.5) * 2 * amt;
      const dy = (fractal(x / size, y / size, ev + 7.1, octaves, 0.5, 2, seed + 1, false) - 0.5) * 2 * amt;
      const sx = Math.round(x + dx), sy = Math.round(y + dy);
      if (sx < 0 || sy < 0 || sx >= T.W || sy >= T.H) return [0, 0, 0, 0];
      const i = (sy * T.W + sx) * 4;
      return [src[i] / 255, src[i + 1] / 255, src[i + 2] / 255, src[i + 3] / 255];
    }, true);
  };
  // CC Light Sweep: a band of light across the layer (its centre, direction, width), added where the layer is.
  E['light-sweep'] = (c, p, n, m, T) => {
    const b = n.layerSize || { width: T.W, height: T.H };
    const ctr = map(m, Array.isArray(p.Center) ? p.Center : [b.width / 2, b.height / 2]);
    const a = (num(p.Direction, 35) * Math.PI) / 180, w = Math.max(1, num(p.Width, 50) * scaleOf(m));
    const k = num(p['Sweep Intensity'], 50) / 100, lc = col(p['Light Color'], [1, 1, 1, 1]), shape = num(p.Shape, 2);
    const u = [Math.cos(a), Math.sin(a)];
    perPixel(T, c, n, m, (r, g, bl, al, x, y) => {
      const d = Math.abs((x - ctr[0]) * u[0] + (y - ctr[1]) * u[1]) / w;
      if (d >= 1) return null;
      const i = k * (shape === 1 ? 1 - d : shape === 3 ? 1 : Math.cos((d * Math.PI) / 2));
      return [r + lc[0] * i, g + lc[1] * i, bl + lc[2] * i, al];
    });
  };

  // A channel of a pixel as Displacement Map and Set Matte choose it (1 red, 2 green, 3 blue, 4 alpha, 5 luminance,
  // 6 hue, 7 lightness, 8 saturation, 9 full, 10 half, 11 off).
  const channel = (d, i, k) => {
    const r = d[i] / 255, g = d[i + 1] / 255, b = d[i + 2] / 255, a = d[i + 3] / 255;
    if (k === 1) return r;
    if (k === 2) return g;
    if (k === 3) return b;
    if (k === 4) return a;
    if (k === 5) return luma(r, g, b);
    if (k >= 6 && k <= 8) return rgbToHsl(r, g, b)[k === 6 ? 0 : k === 7 ? 2 : 1];
    if (k === 9) return 1;
    if (k === 10) return 0.75;
    return 0.5;
  };
  const layerPixels = (T, fx, name) => {
    const node = fx.layers && fx.layers[name];
    if (!node) return null;
    const c = T.draw(node);
    const d = ctxOf(c).getImageData(0, 0, T.W, T.H).data;
    T.release(c);
    return d;
  };
  // Displacement Map: each pixel takes the layer's pixel (value - 0.5) x 2 x max further along each axis, the value
  // read from the map layer's chosen channel there; without a map layer the layer displaces itself.
  E['displacement-map'] = (c, p, n, m, T, fx) => {
    const src = ctxOf(c).getImageData(0, 0, T.W, T.H).data;
    const map = layerPixels(T, fx, 'Displacement Map Layer') || src;
    const kx = num(p['Use For Horizontal Displacement'], 1), ky = num(p['Use For Vertical Displacement'], 2);
    const mx = num(p['Max Horizontal Displacement'], 5) * scaleOf(m), my = num(p['Max Vertical Displacement'], 5) * scaleOf(m);
    perPixel(T, c, n, m, (r, g, b, a, x, y) => {
      const i = (y * T.W + x) * 4;
      const sx = Math.round(x + (channel(map, i, kx) - 0.5) * 2 * mx), sy = Math.round(y + (channel(map, i, ky) - 0.5) * 2 * my);
      if (sx < 0 || sy < 0 || sx >= T.W || sy >= T.H) return [0, 0, 0, 0];
      const j = (sy * T.W + sx) * 4;
      return [src[j] / 255, src[j + 1] / 255, src[j + 2] / 255, src[j + 3] / 255];
    }, true);
  };
  // Set Matte: the layer's alpha times the other layer's chosen channel (inverted when asked), or replaced by it.
  E['set-matte'] = (c, p, n, m, T, fx) => {
    const matte = layerPixels(T, fx, 'Take Matte From Layer');
    if (!matte) return;
    const k = num(p['Use For Matte'], 4), inv = num(p['Invert Matte'], 0) === 1, keep = num(p['Composite Matte with Original'], 1) === 1;
    perPixel(T, c, n, m, (r, g, b, a, x, y) => {
      let v = channel(matte, (y * T.W + x) * 4, k);
      if (inv) v = 1 - v;
      return [r, g, b, keep ? a * v : v];
    }, true);
  };

  // Roto Brush's "Fine-tune Roto Brush Matte" step on the stored matte (its own pixels; k matte pixels per layer
  // pixel), in the order of its controls, as Adobe documents them for Photoshop's Refine Edge, which After Effects'
  // shares: Feather "blurs the transition" over a width of Feather layer pixels straddling the edge (a Gaussian of
  // sigma 0.38 x Feather, the factor skottie found for After Effects' feather widths); Contrast makes soft
  // transitions "more abrupt" (a slope of
  // 1 / (1 - Contrast) about 50 %, a hard edge at 100 %); Shift Edge moves the soft edge outward (positive: the
  // levels above 0 reach full at 1 - Shift) or inward (negative: the levels below -Shift become 0). The blur sees the
  // matte's border pixels repeated past its edges, so a subject cut by the frame keeps its edge there.
  const fineTuneMatte = (mc, p, k) => {
    const g = mc.getContext('2d', { willReadFrequently: true });
    // Feather's slider ends at 100 in After Effects; a file that says more would pad the matte past any canvas size
    const sigma = clamp(num(p['Feather'], 0), 0, 100) * k * FEATHER_SIGMA;
    if (sigma > 0.05) {
      const w = mc.width, h = mc.height, r = Math.ceil(3 * sigma);
      const pad = document.createElement('canvas');
      pad.width = w + 2 * r; pad.height = h + 2 * r;
      const pg = pad.getContext('2d');
      pg.imageSmoothingEnabled = false;
      pg.drawImage(mc, r, r);
      // [source x, width, destination x, width] across, the same down: edges and corners stretched outward
      const spans = (n) => [[0, 1, 0, r], [0, n, r, n], [n - 1, 1, r + n, r]];
      for (const [sx, sw, dx, dw] of spans(w))
        for (const [sy, sh, dy, dh] of spans(h))
          if (sw === 1 || sh === 1) pg.drawImage(mc, sx, sy, sw, sh, dx, dy, dw, dh);
      g.clearRect(0, 0, w, h);
      g.filter = 'blur(' + sigma + 'px)';
      g.drawImage(pad, -r, -r);
      g.filter = 'none';
    }
    const contrast = clamp(num(p['Contrast'], 0), 0, 100) / 100, shift = clamp(num(p['Shift Edge'], 0), -100, 100) / 100;
    if (!contrast && !shift) return;
    const img = g.getImageData(0, 0, mc.width, mc.height), d = img.data;
    const lut = new Uint8ClampedArray(256);
    for (let v = 0; v < 256; v++) {
      let a = v / 255;
      a = contrast >= 1 ? (a >= 0.5 ? 1 : 0) : 0.5 + (a - 0.5) / (1 - contrast);
      a = clamp(a, 0, 1);
      if (shift > 0) a = shift >= 1 ? (a > 0 ? 1 : 0) : a / (1 - shift);
      else if (shift < 0) a = shift <= -1 ? (a >= 1 ? 1 : 0) : (a + shift) / (1 + shift);
      lut[v] = Math.round(clamp(a, 0, 1) * 255);
    }
    for (let i = 3; i < d.length; i += 4) d[i] = lut[d[i]];
    g.putImageData(img, 0, 0);
  };
  // Roto Brush: After Effects' stored matte of this frame (inverted when asked) becomes the layer's alpha, stretched
  // from its size over the layer's rectangle; without a matte for this frame the layer stays whole.
  E['roto-brush'] = (c, p, n, m, T, fx) => {
    const mt = fx.matte, b = n.layerSize;
    if (!mt || !b) return;
    const bin = atob(mt.alpha), inv = num(p['Invert Foreground/Background'], 0) === 1;
    const img = new ImageData(mt.width, mt.height);
    for (let i = 0; i < bin.length; i++) img.data[i * 4 + 3] = inv ? 255 - bin.charCodeAt(i) : bin.charCodeAt(i);
    const mc = document.createElement('canvas');
    mc.width = mt.width; mc.height = mt.height;
    const mg = mc.getContext('2d', { willReadFrequently: true });
    mg.putImageData(img, 0, 0);
    if (num(p['Fine-tune Roto Brush Matte'], 0) === 1) fineTuneMatte(mc, p, mt.width / b.width);
    const g = c.getContext('2d');
    g.save();
    g.setTransform(m[0], m[1], m[2], m[3], m[4], m[5]);
    g.globalAlpha = 1;
    g.globalCompositeOperation = 'destination-in';
    g.drawImage(mc, 0, 0, b.width, b.height);
    g.restore();
  };

  const apply = (c, n, m, T) => {
    for (const fx of n.effects) {
      const f = E[fx.kind];
      if (f) f(c, fx.params, n, m, T, fx);
    }
  };

  // ---- layer styles (composition coordinates: fit is the composition's matrix to the output) ----
  const S = {};
  const sp = (p, k, d) => num(p[k], d);
  // Everything but the layer, opaque: what inner shadows and glows are cast from.
  const outsideOf = (T, c) => {
    const outside = T.acquire(), og = outside.getContext('2d');
    og.fillStyle = '#000';
    og.fillRect(0, 0, T.W, T.H);
    og.globalCompositeOperation = 'destination-out';
    og.drawImage(c, 0, 0);
    return outside;
  };
  const styleShadow = (c, p, fit, T, inner) => {
    // the angle is where the light comes from (counter-clockwise from the right): the shadow falls the other way
    const a = (sp(p, 'localLightingAngle', 120) * Math.PI) / 180, dist = sp(p, 'distance', 5);
    const off = vec(fit, [-Math.cos(a) * dist, Math.sin(a) * dist]);
    const size = sp(p, 'blur', 5) * scaleOf(fit) * 0.5, color = col(p.color, [0, 0, 0, 1]), o = sp(p, 'opacity', 75) / 100;
    if (!inner) return shadowOf(T, c, color, o, off, size);
    // inner: the shadow of everything outside the layer, kept inside it
    const outside = outsideOf(T, c);
    const s = shadowOf(T, outside, color, o, off, size);
    T.release(outside);
    const g = s.getContext('2d');
    g.globalCompositeOperation = 'destination-in'; g.drawImage(c, 0, 0); g.globalCompositeOperation = 'source-over';
    return s;
  };
  const under = (c, s, T, blend) => {
    const g = c.getContext('2d');
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.globalCompositeOperation = 'destination-over';
    g.drawImage(s, 0, 0);
    g.globalCompositeOperation = 'source-over';
    T.release(s);
  };
  const over = (c, s, T, op) => {
    const g = c.getContext('2d');
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.globalCompositeOperation = op || 'source-atop';
    g.drawImage(s, 0, 0);
    g.globalCompositeOperation = 'source-over';
    T.release(s);
  };
  S.dropShadow = (c, p, fit, T) => under(c, styleShadow(c, p, fit, T, false), T);
  S.innerShadow = (c, p, fit, T) => over(c, styleShadow(c, p, fit, T, true), T, 'source-atop');
  S.outerGlow = (c, p, fit, T) => {
    const s = shadowOf(T, c, col(p.color, [1, 1, 0.745, 1]), sp(p, 'opacity', 75) / 100, [0, 0], sp(p, 'blur', 5) * scaleOf(fit) * 0.5);
    under(c, s, T);
  };
  S.innerGlow = (c, p, fit, T) => {
    const outside = outsideOf(T, c);
    const s = shadowOf(T, outside, col(p.color, [1, 1, 0.745, 1]), sp(p, 'opacity', 75) / 100, [0, 0], sp(p, 'blur', 5) * scaleOf(fit) * 0.5);
    T.release(outside);
    over(c, s, T, 'source-atop');
  };
  S.solidFill = (c, p, fit, T) => {
    const s = T.acquire(), g = s.getContext('2d');
    g.fillStyle = css(col(p.color, [1, 0, 0, 1]), sp(p, 'opacity', 100) / 100);
    g.fillRect(0, 0, T.W, T.H);
    over(c, s, T, 'source-atop');
  };
  S.gradientFill = (c, p, fit, T, st) => {
    const s = T.acquire(), g = s.getContext('2d');
    const a = (sp(p, 'angle', 90) * Math.PI) / 180, b = [0, 0, T.W, T.H];
    const cx = b[0] + b[2] / 2, cy = b[1] + b[3] / 2, r = (Math.hypot(b[2], b[3]) / 2) * (sp(p, 'scale', 100) / 100);
    const gr = g.createLinearGradient(cx - Math.cos(a) * r, cy + Math.sin(a) * r, cx + Math.cos(a) * r, cy - Math.sin(a) * r);
    const stops = st && st.length ? st : [{ offset: 0, color: [0, 0, 0, 1] }, { offset: 1, color: [1, 1, 1, 1] }];
    for (const k of stops) gr.addColorStop(clamp(k.offset, 0, 1), css(k.color, 1));
    g.globalAlpha = sp(p, 'opacity', 100) / 100;
    g.fillStyle = gr;
    g.fillRect(0, 0, T.W, T.H);
    over(c, s, T, 'source-atop');
  };
  // Stroke: the layer's outline of the given size outside (1), inside (2) or centred (3) on its edge.
  S.frameFX = (c, p, fit, T) => {
    const size = Math.max(0, sp(p, 'size', 3) * scaleOf(fit)), pos = sp(p, 'style', 1), color = col(p.color, [1, 0, 0, 1]);
    if (!size) return;
    const grow = T.acquire(), g = grow.getContext('2d');
    const steps = Math.max(8, Math.ceil(size * 4));
    const reach = pos === 3 ? size / 2 : size;
    for (let k = 0; k < steps; k++) {
      const a = (k / steps) * Math.PI * 2;
      g.drawImage(c, Math.cos(a) * reach, Math.sin(a) * reach);
    }
    g.globalCompositeOperation = 'source-in';
    g.fillStyle = css(color, sp(p, 'opacity', 100) / 100);
    g.fillRect(0, 0, T.W, T.H);
    g.globalCompositeOperation = 'source-over';
    if (pos === 2) {
      const inner = T.acquire(), ig = inner.getContext('2d');
      ig.fillStyle = css(color, sp(p, 'opacity', 100) / 100);
      ig.fillRect(0, 0, T.W, T.H);
      ig.globalCompositeOperation = 'destination-out';
      for (let k = 0; k < steps; k++) {
        const a = (k / steps) * Math.PI * 2;
        ig.drawImage(c, Math.cos(a) * size, Math.sin(a) * size);
      }
      ig.globalCompositeOperation = 'destination-in';
      ig.drawImage(c, 0, 0);
      T.release(grow);
      over(c, inner, T, 'source-atop');
      return;
    }
    under(c, grow, T);
  };
  // A layer's alpha blurred by sigma s (device pixels), 0..1 per pixel.
  const blurredAlpha = (T, c, s) => {
    const b = blurred(T, c, s, s), d = ctxOf(b).getImageData(0, 0, T.W, T.H).data;
    T.release(b);
    const a = new Float32Array(T.W * T.H);
    for (let i = 0; i < a.length; i++) a[i] = d[i * 4 + 3] / 255;
    return a;
  };
  // A colour surface whose alpha is amount x opacity per pixel.
  const shadeOf = (T, amount, color, opacity) => {
    const s = T.acquire(), img = new ImageData(T.W, T.H), d = img.data;
    const r = Math.round(clamp(color[0], 0, 1) * 255), g = Math.round(clamp(color[1], 0, 1) * 255), b = Math.round(clamp(color[2], 0, 1) * 255);
    for (let i = 0; i < amount.length; i++) {
      d[i * 4] = r; d[i * 4 + 1] = g; d[i * 4 + 2] = b;
      d[i * 4 + 3] = Math.round(clamp(amount[i], 0, 1) * opacity * 255);
    }
    s.getContext('2d').putImageData(img, 0, 0);
    return s;
  };
  // A shading surface on the layer: inside it blended (screen, multiply) with the layer's colour; outside it (outer
  // bevel, emboss, pillow emboss) under the layer, where the layers below would be.
  const shadeOnto = (c, s, T, op) => {
    const outside = copy(T, s), og = outside.getContext('2d');
    og.globalCompositeOperation = 'destination-out'; og.drawImage(c, 0, 0);
    const sg = s.getContext('2d');
    sg.globalCompositeOperation = 'destination-in'; sg.drawImage(c, 0, 0); sg.globalCompositeOperation = 'source-over';
    over(c, s, T, op);
    under(c, outside, T);
  };
  // Bevel and Emboss (Photoshop's and After Effects' layer style): a height map from the layer's alpha blurred by half
  // the size (technique smooth), its ramp inside the edge (inner bevel), outside it (outer bevel), across it (emboss)
  // or down into it from both sides (pillow emboss); direction down turns it over; depth scales its slopes. Each
  // pixel's normal lit from the angle and altitude gives a highlight where it faces the light more than flat ground
  // does and a shadow where less, softened by Soften, in the highlight (screen) and shadow (multiply) colours.
  S.bevelEmboss = (c, p, fit, T) => {
    const k = scaleOf(fit), size = Math.max(0, sp(p, 'blur', 5)) * k;
    if (!size) return;
    const style = sp(p, 'bevelStyle', 2), sign = sp(p, 'bevelDirection', 1) === 2 ? -1 : 1;
    const slope = (sp(p, 'strengthRatio', 100) / 100) * size * sign;
    const v = blurredAlpha(T, c, size / 2), W = T.W, H = T.H, h = new Float32Array(W * H);
    for (let i = 0; i < h.length; i++) {
      const x = v[i];
      h[i] = style === 1 ? Math.min(1, 2 * x) : style === 3 ? x : style === 4 ? Math.abs(2 * x - 1) : Math.max(0, 2 * x - 1);
    }
    const a = (sp(p, 'localLightingAngle', 120) * Math.PI) / 180, e = (sp(p, 'localLightingAltitude', 30) * Math.PI) / 180;
    const L = [Math.cos(e) * Math.cos(a), -Math.cos(e) * Math.sin(a), Math.sin(e)], flat = L[2];
    const hi = new Float32Array(W * H), lo = new Float32Array(W * H);
    for (let y = 1; y < H - 1; y++)
      for (let x = 1; x < W - 1; x++) {
        const i = y * W + x;
        const nx = (-(h[i + 1] - h[i - 1]) / 2) * slope, ny = (-(h[i + W] - h[i - W]) / 2) * slope;
        const shade = (nx * L[0] + ny * L[1] + L[2]) / Math.sqrt(nx * nx + ny * ny + 1);
        if (shade > flat) hi[i] = (shade - flat) / (1 - flat || 1);
        else lo[i] = (flat - shade) / (1 + flat);
      }
    const soften = sp(p, 'softness', 0) * k * 0.5;
    const layer = (amount, color, o, op) => {
      let s = shadeOf(T, amount, color, o);
      if (soften > 0.05) { const b = blurred(T, s, soften, soften); T.release(s); s = b; }
      shadeOnto(c, s, T, op);
    };
    layer(lo, col(p.shadowColor, [0, 0, 0, 1]), sp(p, 'shadowOpacity', 75) / 100, 'multiply');
    layer(hi, col(p.highlightColor, [1, 1, 1, 1]), sp(p, 'highlightOpacity', 75) / 100, 'screen');
  };
  // Satin: the layer's alpha moved distance along the angle both ways, each blurred by half the size and mapped
  // through Photoshop's default satin contour ("Gaussian", contours.ts; After Effects shows no contour), the order
  // Krita's Photoshop-compatible satin uses; their difference (inverted when asked) is the satin's coverage inside the
  // layer, in its colour multiplied on.
  S.chromeFX = (c, p, fit, T) => {
    const a = (sp(p, 'localLightingAngle', 19) * Math.PI) / 180, dist = sp(p, 'distance', 11);
    const off = vec(fit, [Math.cos(a) * dist, -Math.sin(a) * dist]), s = sp(p, 'blur', 14) * scaleOf(fit) * 0.5;
    const moved = (sx) => {
      const m = T.acquire(), g = m.getContext('2d');
      g.drawImage(c, sx * off[0], sx * off[1]);
      const v = blurredAlpha(T, m, s);
      T.release(m);
      for (let i = 0; i < v.length; i++) v[i] = SATIN_CONTOUR[Math.round(v[i] * 255)] / 255;
      return v;
    };
    const p1 = moved(1), p2 = moved(-1), inv = sp(p, 'invert', 1) === 1;
    for (let i = 0; i < p1.length; i++) p1[i] = inv ? 1 - Math.abs(p1[i] - p2[i]) : Math.abs(p1[i] - p2[i]);
    const sh = shadeOf(T, p1, col(p.color, [0, 0, 0, 1]), sp(p, 'opacity', 50) / 100);
    const g = sh.getContext('2d');
    g.globalCompositeOperation = 'destination-in'; g.drawImage(c, 0, 0);
    over(c, sh, T, 'multiply');
  };
  const styles = (c, n, fit, T) => {
    for (const s of n.styles) {
      const f = S[s.kind];
      if (f) f(c, s.params, fit, T, s.stops);
    }
  };

  window.__bmsEffects = { apply, styles, blurFilter };
})();
`;
