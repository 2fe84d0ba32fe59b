/**
 * The drawer's adjustment layers (plain browser JavaScript, spliced into draw-script.ts's closure, where `W`, `H`,
 * `acquire`, `release`, `mul`, `drawChildren`, `applyMasks`, `applyMatte` and `effectTools` are defined). After Effects
 * applies an adjustment layer's effects to the composite of the layers below it (in its composition) and keeps the
 * result where the layer is: its pixels' alpha (a solid's rectangle), with its masks, track matte and opacity. So the
 * group's children draw only that coverage c; the surface the layers below were drawn on is copied, the effects run
 * on the copy in the adjustment layer's coordinates, and the surface becomes below x (1 - c x opacity) + effected x
 * c x opacity (premultiplied: a destination-out then an additive draw).
 */
export const DRAW_ADJUST_SCRIPT = String.raw`
  const drawAdjustment = (g, n, parent) => {
    const m = mul(parent, n.matrix);
    const cover = acquire();
    const cg = cover.getContext('2d');
    drawChildren(cg, n, m);
    applyMasks(cg, n, m);
    if (n.matte) applyMatte(cover, n.matte, parent);
    const below = acquire();
    const bg = below.getContext('2d');
    bg.drawImage(g.canvas, 0, 0);
    if (n.effects) window.__bmsEffects.apply(below, n, m, effectTools(parent));
    bg.setTransform(1, 0, 0, 1, 0, 0);
    bg.globalAlpha = 1;
    bg.filter = 'none';
    bg.globalCompositeOperation = 'destination-in';
    bg.drawImage(cover, 0, 0);
    g.save();
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.globalAlpha = Math.max(0, Math.min(1, n.opacity));
    g.globalCompositeOperation = 'destination-out';
    g.drawImage(cover, 0, 0);
    g.globalCompositeOperation = 'lighter';
    g.drawImage(below, 0, 0);
    g.restore();
    release(below);
    release(cover);
  };
`;
