import { previewHtml } from '../../src/motion/preview/page.js';
import type { PreparedFrames } from '../../src/motion/preview/frames.js';
import type { PreviewParams } from '../../src/motion/preview/contract.js';
import type { DisplayList, DisplayText } from '../../src/motion/scene/display.js';

/**
 * The preview page of one frame showing text nodes, each at its [x, y] over a black `width` x `height` composition;
 * their font is `Given-Ascent` (sans-serif with an ascent of 0.75 em), so tests compute where glyphs land.
 */
export function textPage(width: number, height: number, nodes: [number, number, DisplayText][]): string {
  const l: DisplayList = {
    composition: { id: 1, name: 'C', width, height, pixelAspect: 1, frameRate: 25, background: [0, 0, 0] },
    time: 0,
    root: {
      kind: 'group',
      matrix: [1, 0, 0, 1, 0, 0],
      opacity: 1,
      blend: 'normal',
      children: nodes.map(([x, y, n]) => ({
        kind: 'group' as const,
        matrix: [1, 0, 0, 1, x, y] as [number, number, number, number, number, number],
        opacity: 1,
        blend: 'normal' as const,
        children: [n],
      })),
    },
    approximations: [],
  };
  return framePage(l, { 'Given-Ascent': { family: 'sans-serif', loaded: false, ascent: 0.75 } });
}

/** The preview page of one display list as its only frame (the page the service builds for a still), with `fonts`. */
export function framePage(l: DisplayList, fonts: PreparedFrames['fonts'] = {}): string {
  const { width, height, background } = l.composition;
  const prepared: PreparedFrames = {
    frames: [0],
    times: [0],
    single: l,
    chunks: 0,
    composition: { width, height, background },
    footage: {},
    fonts,
    approximations: [],
  };
  return previewHtml({ width, height, fps: 25 } as PreviewParams, prepared);
}
