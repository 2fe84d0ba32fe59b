/**
 * The drawer's 3D layers (plain browser JavaScript, spliced into draw-script.ts's closure, where `W`, `H`, `acquire`,
 * `release`, `drawGroup`, `applyMatte` and `blendOf` are defined). A group with a `warp` (display.ts) is drawn flat
 * into its own surface at the resolution its placement needs, then mapped onto the output pixel by pixel through the
 * inverse of its homography with bilinear sampling of premultiplied colour (Canvas 2D has no perspective; this is
 * exact and the same bytes every run). Pixels whose point lies behind the camera (depth below 1 px) stay empty.
 */
export const DRAW_3D_SCRIPT = String.raw`
  // 3x3 homographies, row-major
  const mul3 = (a, b) => {
    const o = new Array(9);
    for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) o[r * 3 + c] = a[r * 3] * b[c] + a[r * 3 + 1] * b[3 + c] + a[r * 3 + 2] * b[6 + c];
    return o;
  };
  const inv3 = (m) => {
    const [a, b, c, d, e, f, g, h, i] = m;
    const A = e * i - f * h, B = -(d * i - f * g), C = d * h - e * g;
    const det = a * A + b * B + c * C;
    if (!det || !isFinite(det)) return null;
    return [A / det, -(b * i - c * h) / det, (b * f - c * e) / det, B / det, (a * i - c * g) / det, -(a * f - c * d) / det, C / det, -(a * h - b * g) / det, (a * e - b * d) / det];
  };
  const NEAR = 1;
  // A placed layer drawn flat, then mapped onto the output: {x0, y0, img (unpremultiplied, its rectangle), M}, or null.
  const warpLayer = (n, parent) => {
    const M = mul3([parent[0], parent[2], parent[4], parent[1], parent[3], parent[5], 0, 0, 1], n.warp);
    const b = n.bounds;
    const bw = b[2] - b[0], bh = b[3] - b[1];
    if (!(bw > 0 && bh > 0)) return null;
    // The resolution: the largest scale the placement gives the layer at its corners in front of the camera.
    const corners = [[b[0], b[1]], [b[2], b[1]], [b[2], b[3]], [b[0], b[3]]];
    let scale = 0, behind = false;
    const pts = [];
    for (const [x, y] of corners) {
      const w = M[6] * x + M[7] * y + M[8];
      if (w < NEAR) { behind = true; continue; }
      const X = (M[0] * x + M[1] * y + M[2]) / w, Y = (M[3] * x + M[4] * y + M[5]) / w;
      pts.push([X, Y]);
      const jx = Math.hypot((M[0] - X * M[6]) / w, (M[3] - Y * M[6]) / w);
      const jy = Math.hypot((M[1] - X * M[7]) / w, (M[4] - Y * M[7]) / w);
      scale = Math.max(scale, jx, jy);
    }
    if (!pts.length) return null;
    // The flat surface is one of the pooled output-sized canvases, so the scale is capped to fit the layer in it.
    const s = Math.max(1e-3, Math.min(scale || 1, 4, W / bw, H / bh));
    const sw = Math.max(1, Math.ceil(bw * s)), sh = Math.max(1, Math.ceil(bh * s));
    // The output rectangle it can reach: its projected corners, or everything when part of it is behind the camera.
    let x0 = 0, y0 = 0, x1 = W, y1 = H;
    if (!behind) {
      x0 = Math.max(0, Math.floor(Math.min(...pts.map((p) => p[0]))));
      y0 = Math.max(0, Math.floor(Math.min(...pts.map((p) => p[1]))));
      x1 = Math.min(W, Math.ceil(Math.max(...pts.map((p) => p[0]))));
      y1 = Math.min(H, Math.ceil(Math.max(...pts.map((p) => p[1]))));
    }
    const inv = inv3(M);
    if (!inv || x1 <= x0 || y1 <= y0) return null;
    const flat = acquire();
    const fg = flat.getContext('2d');
    drawGroup(fg, { kind: 'group', matrix: [1, 0, 0, 1, 0, 0], opacity: 1, blend: 'normal', clip: n.clip, masks: n.masks, children: n.children }, [s, 0, 0, s, -b[0] * s, -b[1] * s]);
    const src = fg.getImageData(0, 0, sw, sh).data;
    release(flat);
    const ow = x1 - x0, oh = y1 - y0;
    const img = new ImageData(ow, oh);
    const dst = img.data;
    // U, V and Q move by constant steps along a row (the inverse is a homography). Q is 1/depth of the layer's point
    // under the pixel (inv maps (X, Y, 1) to (u, v, 1)/depth): a point nearer than NEAR, or behind, is not drawn.
    const [i0, i3, i6] = [inv[0], inv[3], inv[6]];
    const [bx, by] = b;
    const farQ = 1 / NEAR;
    const sw1 = sw - 1, sh1 = sh - 1;
    for (let j = 0; j < oh; j++) {
      const py = y0 + j + 0.5, px0 = x0 + 0.5;
      let U = inv[0] * px0 + inv[1] * py + inv[2], V = inv[3] * px0 + inv[4] * py + inv[5], Q = inv[6] * px0 + inv[7] * py + inv[8];
      let o = j * ow * 4;
      for (let i = 0; i < ow; i++, U += i0, V += i3, Q += i6, o += 4) {
        if (!(Q > 0 && Q <= farQ)) continue;
        const iq = 1 / Q;
        const sx = (U * iq - bx) * s - 0.5, sy = (V * iq - by) * s - 0.5;
        if (sx <= -1 || sy <= -1 || sx >= sw || sy >= sh) continue;
        const ix = Math.floor(sx), iy = Math.floor(sy);
        const ax = sx - ix, ay = sy - iy;
        let r = 0, gg = 0, bb = 0, a = 0;
        if (ix >= 0 && iy >= 0 && ix < sw1 && iy < sh1) {
          // all four texels inside: no bounds checks
          const o0 = (iy * sw + ix) * 4, o1 = o0 + sw * 4;
          const w00 = (1 - ax) * (1 - ay) * src[o0 + 3], w01 = ax * (1 - ay) * src[o0 + 7];
          const w10 = (1 - ax) * ay * src[o1 + 3], w11 = ax * ay * src[o1 + 7];
          a = w00 + w01 + w10 + w11;
          if (a <= 0) continue;
          r = src[o0] * w00 + src[o0 + 4] * w01 + src[o1] * w10 + src[o1 + 4] * w11;
          gg = src[o0 + 1] * w00 + src[o0 + 5] * w01 + src[o1 + 1] * w10 + src[o1 + 5] * w11;
          bb = src[o0 + 2] * w00 + src[o0 + 6] * w01 + src[o1 + 2] * w10 + src[o1 + 6] * w11;
        } else {
          for (let k = 0; k < 4; k++) {
            const cx = ix + (k & 1), cy = iy + (k >> 1);
            if (cx < 0 || cy < 0 || cx >= sw || cy >= sh) continue;
            const t = (cy * sw + cx) * 4;
            const al = src[t + 3] * ((k & 1) ? ax : 1 - ax) * ((k >> 1) ? ay : 1 - ay);
            r += src[t] * al; gg += src[t + 1] * al; bb += src[t + 2] * al; a += al;
          }
          if (a <= 0) continue;
        }
        dst[o] = r / a; dst[o + 1] = gg / a; dst[o + 2] = bb / a; dst[o + 3] = a;
      }
    }
    if (!n.matte) return { x0, y0, img, M };
    // A matte is applied in output pixels, as for a flat layer.
    const c = acquire();
    c.getContext('2d').putImageData(img, x0, y0);
    applyMatte(c, n.matte, parent);
    const matted = c.getContext('2d').getImageData(x0, y0, ow, oh);
    release(c);
    return { x0, y0, img: matted, M };
  };
  const composite = (g, canvas, opacity, blend) => {
    g.save();
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.globalAlpha = Math.max(0, Math.min(1, opacity));
    g.globalCompositeOperation = blendOf(blend);
    g.drawImage(canvas, 0, 0);
    g.restore();
  };
  const drawWarped = (g, n, parent) => {
    if (n.intersect) return drawCrossing(g, n, parent);
    const w = warpLayer(n, parent);
    if (!w) return;
    const target = acquire();
    target.getContext('2d').putImageData(w.img, w.x0, w.y0);
    composite(g, target, n.opacity, n.blend);
    release(target);
  };
  // Layers that cross each other (Classic 3D cuts them where they meet): at every pixel the layers there are laid
  // over each other from the farthest to the nearest point, each with its opacity (normal blending).
  const drawCrossing = (g, n, parent) => {
    const layers = [];
    for (const c of n.children) {
      const w = warpLayer(c, parent);
      if (w) layers.push({ w, opacity: Math.max(0, Math.min(1, c.opacity)) });
    }
    if (!layers.length) return;
    const x0 = Math.min(...layers.map((l) => l.w.x0)), y0 = Math.min(...layers.map((l) => l.w.y0));
    const x1 = Math.max(...layers.map((l) => l.w.x0 + l.w.img.width)), y1 = Math.max(...layers.map((l) => l.w.y0 + l.w.img.height));
    const ow = x1 - x0, oh = y1 - y0;
    const out = new ImageData(ow, oh);
    const dst = out.data;
    const L = layers.length;
    // Per layer, in flat arrays for the loop: its pixels, rectangle, opacity and its inverse homography's last row.
    // That row gives q = 1/depth of the layer's point under a pixel (inv maps (X, Y, 1) to (u, v, 1)/depth), so the
    // depths are compared without mapping the pixel back: the larger q, the nearer.
    const D = layers.map((l) => l.w.img.data);
    const X0 = new Int32Array(L), Y0 = new Int32Array(L), WD = new Int32Array(L), HT = new Int32Array(L);
    const Q6 = new Float64Array(L), Q7 = new Float64Array(L), Q8 = new Float64Array(L), OP = new Float64Array(L);
    for (let k = 0; k < L; k++) {
      const w = layers[k].w, inv = inv3(w.M);
      X0[k] = w.x0; Y0[k] = w.y0; WD[k] = w.img.width; HT[k] = w.img.height; OP[k] = layers[k].opacity;
      Q6[k] = inv[6]; Q7[k] = inv[7]; Q8[k] = inv[8];
    }
    const z = new Float64Array(L), idx = new Int32Array(L), at = new Int32Array(L);
    for (let j = 0; j < oh; j++) {
      const y = y0 + j, py = y + 0.5;
      for (let i = 0; i < ow; i++) {
        const x = x0 + i, px = x + 0.5;
        let m = 0;
        for (let k = 0; k < L; k++) {
          const lx = x - X0[k], ly = y - Y0[k];
          if (lx < 0 || ly < 0 || lx >= WD[k] || ly >= HT[k]) continue;
          const o = (ly * WD[k] + lx) * 4;
          if (!D[k][o + 3]) continue;
          const q = Q6[k] * px + Q7[k] * py + Q8[k];
          // insertion by depth, far first; equal depths keep the list's order (the higher layer later)
          let p = m++;
          while (p > 0 && z[p - 1] > q) { z[p] = z[p - 1]; idx[p] = idx[p - 1]; at[p] = at[p - 1]; p--; }
          z[p] = q; idx[p] = k; at[p] = o;
        }
        if (!m) continue;
        let r = 0, gg = 0, bb = 0, a = 0;
        for (let p = 0; p < m; p++) {
          const d = D[idx[p]], o = at[p];
          const sa = (d[o + 3] / 255) * OP[idx[p]];
          r = d[o] * sa + r * (1 - sa);
          gg = d[o + 1] * sa + gg * (1 - sa);
          bb = d[o + 2] * sa + bb * (1 - sa);
          a = sa + a * (1 - sa);
        }
        if (a <= 0) continue;
        const o = (j * ow + i) * 4;
        dst[o] = r / a; dst[o + 1] = gg / a; dst[o + 2] = bb / a; dst[o + 3] = a * 255;
      }
    }
    const target = acquire();
    target.getContext('2d').putImageData(out, x0, y0);
    composite(g, target, 1, 'normal');
    release(target);
  };
`;
