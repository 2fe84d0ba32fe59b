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
  const drawWarped = (g, n, parent) => {
    const M = mul3([parent[0], parent[2], parent[4], parent[1], parent[3], parent[5], 0, 0, 1], n.warp);
    const b = n.bounds;
    const bw = b[2] - b[0], bh = b[3] - b[1];
    if (!(bw > 0 && bh > 0)) return;
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
    if (!pts.length) return;
    // The flat surface is one of the pooled output-sized canvases, so the scale is capped to fit the layer in it.
    const s = Math.max(1e-3, Math.min(scale || 1, 4, W / bw, H / bh));
    const sw = Math.max(1, Math.ceil(bw * s)), sh = Math.max(1, Math.ceil(bh * s));
    const flat = acquire();
    const fg = flat.getContext('2d');
    drawGroup(fg, { kind: 'group', matrix: [1, 0, 0, 1, 0, 0], opacity: 1, blend: 'normal', clip: n.clip, masks: n.masks, children: n.children }, [s, 0, 0, s, -b[0] * s, -b[1] * s]);
    // The output rectangle it can reach: its projected corners, or everything when part of it is behind the camera.
    let x0 = 0, y0 = 0, x1 = W, y1 = H;
    if (!behind) {
      x0 = Math.max(0, Math.floor(Math.min(...pts.map((p) => p[0]))));
      y0 = Math.max(0, Math.floor(Math.min(...pts.map((p) => p[1]))));
      x1 = Math.min(W, Math.ceil(Math.max(...pts.map((p) => p[0]))));
      y1 = Math.min(H, Math.ceil(Math.max(...pts.map((p) => p[1]))));
    }
    const inv = inv3(M);
    if (!inv || x1 <= x0 || y1 <= y0) { release(flat); return; }
    const src = fg.getImageData(0, 0, sw, sh).data;
    release(flat);
    const ow = x1 - x0, oh = y1 - y0;
    const img = new ImageData(ow, oh);
    const dst = img.data;
    for (let j = 0; j < oh; j++) {
      const py = y0 + j + 0.5;
      for (let i = 0; i < ow; i++) {
        const px = x0 + i + 0.5;
        const q = inv[6] * px + inv[7] * py + inv[8];
        const u = (inv[0] * px + inv[1] * py + inv[2]) / q;
        const v = (inv[3] * px + inv[4] * py + inv[5]) / q;
        if (M[6] * u + M[7] * v + M[8] < NEAR) continue;
        const sx = (u - b[0]) * s - 0.5, sy = (v - b[1]) * s - 0.5;
        if (sx <= -1 || sy <= -1 || sx >= sw || sy >= sh) continue;
        const ix = Math.floor(sx), iy = Math.floor(sy);
        const ax = sx - ix, ay = sy - iy;
        let r = 0, gg = 0, bb = 0, a = 0;
        for (let k = 0; k < 4; k++) {
          const cx = ix + (k & 1), cy = iy + (k >> 1);
          if (cx < 0 || cy < 0 || cx >= sw || cy >= sh) continue;
          const wgt = ((k & 1) ? ax : 1 - ax) * ((k >> 1) ? ay : 1 - ay);
          const o = (cy * sw + cx) * 4;
          const al = src[o + 3] * wgt;
          r += src[o] * al; gg += src[o + 1] * al; bb += src[o + 2] * al; a += al;
        }
        if (a <= 0) continue;
        const o = (j * ow + i) * 4;
        dst[o] = r / a; dst[o + 1] = gg / a; dst[o + 2] = bb / a; dst[o + 3] = a;
      }
    }
    const target = acquire();
    const tg = target.getContext('2d');
    tg.putImageData(img, x0, y0);
    if (n.matte) applyMatte(target, n.matte, parent);
    g.save();
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.globalAlpha = Math.max(0, Math.min(1, n.opacity));
    g.globalCompositeOperation = blendOf(n.blend);
    g.drawImage(target, 0, 0);
    g.restore();
    release(target);
  };
`;
