import { ANIMATABLE, EASINGS, constant, type Curve, type CurveKey, type Easing, type Property } from './curves.js';
import type { Channel, Clip, ProjectData, TimelineItem } from './project.js';
import { Unprocessable } from '../errors.js';

/** An item placed on the timeline: where it starts, how long it lasts, which part of its clip it shows. */
interface PlacedItem {
  item: TimelineItem;
  clip?: Clip;
  channelIndex: number;
  itemIndex: number;
  start: number;
  duration: number;
  trimStart: number;
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * Places a channel's items: an item with `start` sits there; one without follows the previous item end to end
 * (the first starts at 0). Its length is `trimEnd - trimStart`; without `trimEnd` the clip's duration is the out point.
 */
function placeChannel(channel: Channel, channelIndex: number, clips: Map<string, Clip>): PlacedItem[] {
  let cursor = 0;
  return (channel.items ?? []).map((item, itemIndex) => {
    const clip = typeof item.clipId === 'string' ? clips.get(item.clipId) : undefined;
    const trimStart = finite(item.trimStart) ? Math.max(0, item.trimStart) : 0;
    const out = finite(item.trimEnd) ? item.trimEnd : finite(clip?.duration) ? clip.duration : trimStart;
    const duration = Math.max(0, out - trimStart);
    const start = finite(item.start) ? Math.max(0, item.start) : cursor;
    cursor = start + duration;
    return { item, clip, channelIndex, itemIndex, start, duration, trimStart };
  });
}

function clipMap(data: ProjectData): Map<string, Clip> {
  return new Map((data.clips ?? []).filter((c) => typeof c.id === 'string').map((c) => [c.id as string, c]));
}

const isVisible = (c: Channel) => c.visible !== false;

/** The rendered length of the timeline: the end of the last item of a visible channel (0 when empty). */
export function timelineDuration(data: ProjectData): number {
  const clips = clipMap(data);
  let end = 0;
  (data.channels ?? []).forEach((channel, c) => {
    if (!isVisible(channel)) return;
    for (const p of placeChannel(channel, c, clips)) end = Math.max(end, p.start + p.duration);
  });
  // Rounded to the millisecond, unless the value is too large to scale (the sum itself can overflow to Infinity).
  const rounded = Math.round(end * 1000) / 1000;
  return Number.isFinite(rounded) ? rounded : end;
}

/** How many items the visible channels hold: the layers a render would compose. */
export function visibleItemCount(data: ProjectData): number {
  return (data.channels ?? []).reduce((n, c) => n + (isVisible(c) ? (c.items?.length ?? 0) : 0), 0);
}

/** The item that ends latest, visible or not, as the path of its field (undefined when there are no items). */
export function latestItem(data: ProjectData): { field: string; end: number } | undefined {
  const clips = clipMap(data);
  let latest: { field: string; end: number } | undefined;
  (data.channels ?? []).forEach((channel, c) => {
    for (const p of placeChannel(channel, c, clips)) {
      const end = p.start + p.duration;
      // `!(<=)`: a sum that overflowed to Infinity is the latest too.
      if (!latest || !(end <= latest.end)) latest = { field: `data.channels[${c}].items[${p.itemIndex}]`, end };
    }
  });
  return latest;
}

/** Where an item's scale and rotation pivot, as fractions of the item's frame. */
export interface Origin {
  x: number;
  y: number;
}

/** One visible item, checked and ready to compile: every property is a curve in item seconds. */
export interface Layer {
  label: string;
  clipId: string;
  clip: Clip;
  start: number;
  duration: number;
  trimStart: number;
  origin: Origin;
  props: Record<Property, Curve>;
}

export interface RenderPlan {
  duration: number;
  /** Bottom layer first: the last channel is at the bottom, the first on top; within a channel later items are above. */
  layers: Layer[];
  motionBlur: { enabled: boolean; shutter: number };
}

/** A render input error: the job fails with a message that names the item. */
export const timelineError = (message: string) => new Unprocessable('invalid_timeline', message);

const NUMBER = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

/** Keyframe values arrive as strings: only a plain decimal number is accepted ("", "1px", "0x10" are not). */
export function parseValue(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || !NUMBER.test(value.trim())) return undefined;
  const n = Number(value.trim());
  return Number.isFinite(n) ? n : undefined;
}

const NAMED_ORIGINS: Record<string, [number, number]> = {
  center: [0.5, 0.5],
  top: [0.5, 0],
  bottom: [0.5, 1],
  left: [0, 0.5],
  right: [1, 0.5],
  'top-left': [0, 0],
  'top-right': [1, 0],
  'bottom-left': [0, 1],
  'bottom-right': [1, 1],
};

/** `center`, `top-left`, ... (also `left top` / `top left`), or `x% y%`. */
export function parseOrigin(value: unknown): Origin | undefined {
  if (value === undefined || value === null || value === '') return { x: 0.5, y: 0.5 };
  if (typeof value !== 'string') return undefined;
  const v = value.trim().toLowerCase().replace(/\s+/g, ' ');
  const named =
    NAMED_ORIGINS[v] ?? NAMED_ORIGINS[v.replace(' ', '-')] ?? NAMED_ORIGINS[v.split(' ').reverse().join('-')];
  if (named) return { x: named[0], y: named[1] };
  const m = /^(-?\d+(?:\.\d+)?)% (-?\d+(?:\.\d+)?)%$/.exec(v);
  return m ? { x: Number(m[1]) / 100, y: Number(m[2]) / 100 } : undefined;
}

const STATIC_DEFAULTS: Record<Property, number> = { scale: 1, zoom: 1, panX: 0, panY: 0, opacity: 100, rotation: 0 };

function describe(channel: Channel, c: number, item: TimelineItem, i: number): string {
  const id = typeof item.id === 'string' ? `"${item.id}"` : `#${i}`;
  const ch = typeof channel.name === 'string' ? ` of channel "${channel.name}"` : '';
  return `item ${id}${ch} (channels[${c}].items[${i}])`;
}

function curveOf(item: TimelineItem, property: Property, label: string): Curve {
  const staticValue = (item as Record<string, unknown>)[property];
  const base = finite(staticValue) ? staticValue : STATIC_DEFAULTS[property];
  const raw = item.propertyKeyframes?.[property];
  if (!Array.isArray(raw) || raw.length === 0) return constant(base);
  const keys: CurveKey[] = raw.map((key, k) => {
    const where = `${label}: ${property} keyframe ${k}`;
    if (!finite(key?.position) || key.position < 0) throw timelineError(`${where} has an invalid position`);
    const v = parseValue(key.value);
    if (v === undefined) throw timelineError(`${where} has a value that is not a number: ${JSON.stringify(key.value)}`);
    const easing = (key.easing ?? 'Linear') as Easing;
    if (!EASINGS.includes(easing))
      throw timelineError(`${where} has an unknown easing "${key.easing}" (one of ${EASINGS.join(', ')})`);
    return { t: key.position, v, easing };
  });
  return { base, keys: keys.sort((a, b) => a.t - b.t) };
}

/**
 * Checks the project for rendering and turns it into layers: unknown clip ids, empty or inverted trims, bad
 * keyframe values and unknown easings fail with a message naming the item. Invisible channels are skipped.
 */
export function buildRenderPlan(data: ProjectData): RenderPlan {
  const clips = clipMap(data);
  const channels = data.channels ?? [];
  const layers: Layer[] = [];
  for (let c = channels.length - 1; c >= 0; c--) {
    const channel = channels[c];
    if (!isVisible(channel)) continue;
    for (const placed of placeChannel(channel, c, clips)) {
      const { item, clip, itemIndex } = placed;
      const label = describe(channel, c, item, itemIndex);
      if (!clip) throw timelineError(`${label} refers to unknown clip ${JSON.stringify(item.clipId ?? null)}`);
      if (typeof clip.url !== 'string' || !clip.url) throw timelineError(`${label}: its clip has no url`);
      if (finite(item.trimEnd) && item.trimEnd <= placed.trimStart)
        throw timelineError(`${label} has trimEnd not after trimStart`);
      if (placed.duration <= 0) throw timelineError(`${label} has no length (set trimEnd or the clip's duration)`);
      const origin = parseOrigin(item.keyframeTransformOrigin);
      if (!origin)
        throw timelineError(
          `${label} has an invalid keyframeTransformOrigin ${JSON.stringify(item.keyframeTransformOrigin)}`,
        );
      const props = Object.fromEntries(ANIMATABLE.map((p) => [p, curveOf(item, p, label)])) as Record<Property, Curve>;
      for (const p of ['zoom', 'scale'] as const) {
        if ([props[p].base, ...props[p].keys.map((k) => k.v)].some((v) => v <= 0 || v > 20)) {
          throw timelineError(`${label}: ${p} must be above 0 and at most 20`);
        }
      }
      layers.push({
        label,
        clipId: item.clipId as string,
        clip,
        start: placed.start,
        duration: placed.duration,
        trimStart: placed.trimStart,
        origin,
        props,
      });
    }
  }
  const shutter = finite(data.motionBlurShutter) ? data.motionBlurShutter : 180;
  if (data.motionBlurEnabled === true && (shutter <= 0 || shutter > 360))
    throw timelineError('motionBlurShutter must be above 0 and at most 360 degrees');
  const duration = layers.reduce((end, l) => Math.max(end, l.start + l.duration), 0);
  return { duration, layers, motionBlur: { enabled: data.motionBlurEnabled === true, shutter } };
}
