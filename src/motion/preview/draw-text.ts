/**
 * The drawer's text (plain browser JavaScript, spliced into draw-script.ts's closure, where `P`, `css`, `mul` and
 * `setM` are defined): After Effects' layout of a text document (docs/motion.md "Text", ../shared/research/
 * after-effects-text.md). Kerning is the font's own (`fontKerning`), tracking is `letterSpacing` (thousandths of an
 * em after every character, as AE adds it), lines are `leading` apart. Box text breaks after spaces and hyphens, a
 * word wider than the box between characters; spaces at a line's end hang outside the box (they neither wrap nor
 * move centred or right-aligned lines); the first baseline is the box's top plus the font's ascent (OS/2 typographic
 * ascender when the font file is known, else the drawn 'd'); lines whose baseline falls below the box are overset and
 * not drawn.
 */
export const DRAW_TEXT_SCRIPT = String.raw`
  const TEXT_ALIGN = { left: 'left', right: 'right', center: 'center', 'justify-last-left': 'left', 'justify-last-right': 'right', 'justify-last-center': 'center', 'justify-all': 'left' };
  // Break opportunities: after a run of spaces, after hyphens (AE's line breaker for Latin text).
  const textTokens = (para) => para.match(/[^ \-]*-+ *|[^ \-]+ *| +/g) || [''];
  const layoutText = (para, boxW, width, max) => {
    const lines = [];
    let line = '';
    const fits = (s) => width(s.replace(/ +$/, '')) <= boxW;
    for (const token of textTokens(para)) {
      if (lines.length >= max) return lines;
      if (fits(line + token)) { line += token; continue; }
      if (line) { lines.push({ text: line, last: false }); line = ''; }
      if (fits(token)) { line = token; continue; }
      // A word wider than the box: as many characters as fit on each line (at least one).
      for (const ch of token) {
        if (line && ch !== ' ' && !fits(line + ch)) { lines.push({ text: line, last: false }); line = ''; }
        line += ch;
      }
    }
    lines.push({ text: line, last: true });
    return lines;
  };
  const drawText = (g, n, m) => {
    const font = P.fonts[n.font];
    const family = font ? font.family : 'sans-serif';
    const style = (n.faux_italic ? 'italic ' : '') + (n.faux_bold ? 'bold ' : '');
    g.font = style + n.size + 'px "' + family + '", sans-serif';
    g.fontKerning = 'normal';
    g.letterSpacing = ((n.tracking || 0) / 1000) * n.size + 'px';
    g.fontVariantCaps = n.small_caps ? 'small-caps' : 'normal';
    const upper = n.all_caps ? n.text.toUpperCase() : n.text;
    // character offset animators change characters before the layout (the line is laid out with them)
    const swapped = n.characters && n.characters.some((c) => c && c.text);
    const text = swapped ? Array.from(upper).map((ch, i) => (n.characters[i] && n.characters[i].text) || ch).join('') : upper;
    const align = TEXT_ALIGN[n.justification] || 'left';
    const justified = n.justification.startsWith('justify');
    const width = (s) => g.measureText(s).width;
    const sx = (n.horizontal_scale || 100) / 100, sy = (n.vertical_scale || 100) / 100;
    const boxW = n.box ? n.box.width / sx : 0;
    const x0 = n.box ? n.box.x / sx : 0;
    const ascent = font && font.ascent ? font.ascent * n.size : g.measureText('d').actualBoundingBoxAscent;
    // Point text: the first baseline on the layer's origin. Box text: the box's top plus the ascent.
    const top = n.box ? n.box.y / sy + ascent : 0;
    const bottom = n.box ? (n.box.y + n.box.height) / sy : Infinity;
    const lines = [];
    let offset = 0;
    for (const para of text.split('\n')) {
      if (top + (lines.length * n.leading) / sy > bottom) break;
      const laid = n.box
        ? layoutText(para, boxW, width, Math.floor(((bottom - top) * sy) / n.leading) + 1 - lines.length)
        : [{ text: para, last: true }];
      // each line's first character in the text (code points, as n.characters counts them)
      for (const line of laid) { line.start = offset; offset += Array.from(line.text).length; }
      lines.push(...laid);
      offset += 1;
    }
    setM(g, mul(m, [sx, 0, 0, sy, 0, 0]));
    const y0 = top - (n.baseline_shift || 0) / sy;
    const chars = n.characters;
    // Tracking animators' pixels after the characters [start, start + count).
    const extraTracking = (start, count) => {
      let t = 0;
      for (let k = start; chars && k < start + count; k++) if (chars[k] && chars[k].tracking) t += chars[k].tracking / sx;
      return t;
    };
    const paint = (draw) => {
      lines.forEach((line, k) => {
        if (top + (k * n.leading) / sy > bottom) return;
        const y = y0 + (k * n.leading) / sy;
        const shown = n.box ? line.text.replace(/ +$/, '') : line.text;
        const w = width(shown) + extraTracking(line.start, Array.from(shown).length);
        const spread = n.box && justified && (!line.last || n.justification === 'justify-all') && shown.includes(' ');
        if (spread) {
          const words = [...shown.matchAll(/[^ ]+/g)];
          const gap = (boxW - words.reduce((s, t) => s + width(t[0]), 0)) / (words.length - 1);
          let x = x0;
          for (const t of words) {
            draw(t[0], x, y, line.start + Array.from(shown.slice(0, t.index)).length);
            x += width(t[0]) + gap;
          }
          return;
        }
        const lineAlign = line.last && justified ? TEXT_ALIGN[n.justification] : align;
        const x = n.box
          ? x0 + (lineAlign === 'center' ? (boxW - w) / 2 : lineAlign === 'right' ? boxW - w : 0)
          : lineAlign === 'center' ? -w / 2 : lineAlign === 'right' ? -w : 0;
        draw(shown, x, y, line.start);
      });
    };
    // Text animators: glyph by glyph, each at its place in the line (kerning kept) and transformed about its anchor,
    // the middle of its advance on the baseline, with its own paint.
    const spacing = ((n.tracking || 0) / 1000) * n.size;
    const glyphs = (op) => (seg, x, y, start) => {
      const cs = Array.from(seg);
      let prefix = '', extra = 0;
      cs.forEach((ch, j) => {
        const c = chars[start + j] || {};
        const left = width(prefix);
        prefix += ch;
        // the anchor: the middle of the glyph's own advance (its tracking after it left out)
        const ax = x + extra + (left + width(prefix) - spacing) / 2;
        g.save();
        if (c.matrix) {
          g.translate(ax, y);
          g.transform(...c.matrix);
          g.translate(-ax, -y);
        }
        if (c.opacity !== undefined) g.globalAlpha *= c.opacity;
        op(ch, x + extra + left, y, c);
        g.restore();
        if (c.tracking) extra += c.tracking / sx;
      });
    };
    const fill = () => {
      if (chars) {
        paint(glyphs((t, x, y, c) => {
          const color = c.fill || n.fill;
          if (!color) return;
          g.fillStyle = css(color);
          g.fillText(t, x, y);
        }));
      } else if (n.fill) { g.fillStyle = css(n.fill); paint((t, x, y) => g.fillText(t, x, y)); }
    };
    const stroke = () => {
      g.lineJoin = 'miter';
      if (chars) {
        paint(glyphs((t, x, y, c) => {
          const color = c.stroke || n.stroke;
          const sw = c.stroke_width !== undefined ? c.stroke_width : n.stroke_width;
          if (!color || !(sw > 0)) return;
          g.strokeStyle = css(color);
          g.lineWidth = sw;
          g.strokeText(t, x, y);
        }));
      } else if (n.stroke && n.stroke_width > 0) {
        g.strokeStyle = css(n.stroke);
        g.lineWidth = n.stroke_width;
        paint((t, x, y) => g.strokeText(t, x, y));
      }
    };
    if (n.stroke_over_fill) { fill(); stroke(); } else { stroke(); fill(); }
    g.letterSpacing = '0px';
  };
`;
