import { badRequest } from '../http/errors.js';

/** Layout version of `data` written by this build; older layouts are migrated forward on read. */
const CURRENT_VERSION = 2;

export interface Key {
  position: number;
  value: string | number;
  easing?: string;
}

export interface TimelineItem {
  id?: string;
  clipId?: string;
  trimStart?: number | null;
  trimEnd?: number | null;
  start?: number | null;
  zoom?: number | null;
  panX?: number | null;
  panY?: number | null;
  opacity?: number | null;
  propertyKeyframes?: Record<string, Key[]> | null;
  keyframeTransformOrigin?: string | null;
  [field: string]: unknown;
}

export interface Channel {
  id?: string;
  name?: string;
  visible?: boolean | null;
  items?: TimelineItem[];
  [field: string]: unknown;
}

export interface Clip {
  id?: string;
  source?: string;
  mediaType?: string;
  url?: string;
  name?: string;
  duration?: number | null;
  [field: string]: unknown;
}

export interface ProjectData {
  version?: number;
  videoSize?: { w: number; h: number };
  motionBlurEnabled?: boolean;
  motionBlurShutter?: number;
  clips?: Clip[];
  channels?: Channel[];
  activeChannelId?: string | null;
  currentTime?: number;
  [field: string]: unknown;
}

/** The data of a new project: empty timeline, one visible channel, default settings. */
export function newProjectData(channelId: string): ProjectData {
  return {
    version: CURRENT_VERSION,
    videoSize: { w: 1920, h: 1080 },
    motionBlurEnabled: false,
    motionBlurShutter: 180,
    clips: [],
    channels: [{ id: channelId, name: 'Channel 1', visible: true, items: [] }],
    activeChannelId: channelId,
    currentTime: 0,
  };
}

/**
 * Brings stored data to the current layout. Version 1 (or no version) predates per-property keyframes and the
 * render settings: missing settings get their defaults, channels default to visible, items get an empty
 * `propertyKeyframes`. The legacy flat `keyframes` array is left where it is (and ignored). A newer version than
 * this build knows is returned as stored. A channel created here gets a fixed id, so repeated reads agree on it.
 */
export function migrateProjectData(data: ProjectData): ProjectData {
  const version = typeof data.version === 'number' ? data.version : 1;
  if (version >= CURRENT_VERSION) return data;
  const out: ProjectData = { ...data, version: CURRENT_VERSION };
  out.videoSize ??= { w: 1920, h: 1080 };
  out.motionBlurEnabled ??= false;
  out.motionBlurShutter ??= 180;
  out.clips ??= [];
  if (!out.channels || out.channels.length === 0) {
    out.channels = [{ id: 'channel-1', name: 'Channel 1', visible: true, items: [] }];
  }
  out.channels = out.channels.map((c) => ({
    ...c,
    visible: c.visible ?? true,
    items: (c.items ?? []).map((item) => ({ ...item, propertyKeyframes: item.propertyKeyframes ?? {} })),
  }));
  out.activeChannelId ??= out.channels[0].id ?? null;
  out.currentTime ??= 0;
  return out;
}

/**
 * Sizes no real project reaches, refused on save with a 400 that names the field and the limit (docs/timeline.md):
 * counted before anything else is checked, so an absurd project costs one pass over its lists.
 */
export const PROJECT_LIMITS = {
  channels: 1_000,
  clips: 10_000,
  /** Items of all channels together. */
  items: 10_000,
  /** Keyframes of all items and properties together. */
  keyframes: 100_000,
  /** Where the latest item, visible or not, may end: 12 hours. */
  durationSeconds: 12 * 3600,
  /**
   * Items of visible channels one render composes: each is an ffmpeg input decoded at once, and the filter graph
   * travels as one argument, which Linux caps at 128 KiB (10,000 layers took 0.5 s to compile into 1.4 MiB).
   */
  renderLayers: 500,
  /** Values of the PUT body's JSON (objects, arrays, numbers, strings), counted before it is parsed. */
  jsonValues: 500_000,
  /** The project's `data` as stored JSON; the PUT body may be this plus its name. */
  jsonBytes: 8 * 1024 * 1024,
} as const;

type Check = (value: unknown) => boolean;
const isNumber: Check = (v) => typeof v === 'number' && Number.isFinite(v);
const isString: Check = (v) => typeof v === 'string';
const isBoolean: Check = (v) => typeof v === 'boolean';
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const TYPE_NAMES = new Map<Check, string>([
  [isNumber, 'a number'],
  [isString, 'a string'],
  [isBoolean, 'a boolean'],
]);

/** Checks a known field when present; `null` counts as "not set". */
function field(obj: Record<string, unknown>, key: string, check: Check, where: string): void {
  const v = obj[key];
  if (v === undefined || v === null) return;
  if (!check(v)) throw badRequest(`${where}.${key} must be ${TYPE_NAMES.get(check)}`, { field: `${where}.${key}` });
}

function list(obj: Record<string, unknown>, key: string, where: string): Record<string, unknown>[] {
  const v = obj[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw badRequest(`${where}.${key} must be an array`, { field: `${where}.${key}` });
  return v.map((entry, i) => {
    if (!isObject(entry))
      throw badRequest(`${where}.${key}[${i}] must be an object`, { field: `${where}.${key}[${i}]` });
    return entry;
  });
}

function tooMany(where: string, count: number, limit: number, what = 'entries'): never {
  throw badRequest(`${where} has ${count} ${what}; a project may have at most ${limit}`, { field: where });
}

/** Counts each list against its limit before any entry is looked at. */
function countLists(data: Record<string, unknown>): void {
  const length = (v: unknown) => (Array.isArray(v) ? v.length : 0);
  if (length(data.clips) > PROJECT_LIMITS.clips) tooMany('data.clips', length(data.clips), PROJECT_LIMITS.clips);
  if (length(data.channels) > PROJECT_LIMITS.channels)
    tooMany('data.channels', length(data.channels), PROJECT_LIMITS.channels);
  let items = 0;
  for (const channel of Array.isArray(data.channels) ? data.channels : [])
    items += isObject(channel) ? length(channel.items) : 0;
  if (items > PROJECT_LIMITS.items) tooMany('data.channels[].items', items, PROJECT_LIMITS.items, 'items in all');
}

function validateItem(item: Record<string, unknown>, where: string, keyframes: { count: number }): void {
  for (const key of ['id', 'clipId', 'keyframeTransformOrigin']) field(item, key, isString, where);
  for (const key of ['trimStart', 'trimEnd', 'start', 'zoom', 'panX', 'panY', 'opacity'])
    field(item, key, isNumber, where);
  const pk = item.propertyKeyframes;
  if (pk === undefined || pk === null) return;
  if (!isObject(pk))
    throw badRequest(`${where}.propertyKeyframes must be an object`, { field: `${where}.propertyKeyframes` });
  for (const property of Object.keys(pk)) {
    const keys = list(pk, property, `${where}.propertyKeyframes`);
    keyframes.count += keys.length;
    if (keyframes.count > PROJECT_LIMITS.keyframes)
      tooMany(
        'data.channels[].items[].propertyKeyframes',
        keyframes.count,
        PROJECT_LIMITS.keyframes,
        'keyframes in all',
      );
    keys.forEach((key, k) => {
      const at = `${where}.propertyKeyframes.${property}[${k}]`;
      if (!isNumber(key.position)) throw badRequest(`${at}.position must be a number`, { field: `${at}.position` });
      if (!isString(key.value) && !isNumber(key.value))
        throw badRequest(`${at}.value must be a string`, { field: `${at}.value` });
      field(key, 'easing', isString, at);
    });
  }
}

/**
 * Rejects what is not a project: `data` must be an object and every known field must have its type (the message
 * names the field, e.g. `data.channels[0].items[2].trimEnd must be a number`). Unknown fields are kept as they are.
 * Values are not range-checked here: a project may be saved mid-edit; the render reports values it cannot use.
 */
export function validateProjectData(data: unknown): ProjectData {
  if (!isObject(data)) throw badRequest('data must be an object', { field: 'data' });
  countLists(data);
  if (data.version !== undefined && !Number.isInteger(data.version))
    throw badRequest('data.version must be an integer', { field: 'data.version' });
  if (data.videoSize !== undefined && data.videoSize !== null) {
    const size = data.videoSize;
    if (!isObject(size)) throw badRequest('data.videoSize must be an object', { field: 'data.videoSize' });
    for (const key of ['w', 'h']) {
      const v = size[key];
      if (!Number.isInteger(v) || (v as number) < 2 || (v as number) > 8192) {
        throw badRequest(`data.videoSize.${key} must be an integer between 2 and 8192`, {
          field: `data.videoSize.${key}`,
        });
      }
    }
  }
  field(data, 'motionBlurEnabled', isBoolean, 'data');
  field(data, 'motionBlurShutter', isNumber, 'data');
  field(data, 'activeChannelId', isString, 'data');
  field(data, 'currentTime', isNumber, 'data');
  list(data, 'clips', 'data').forEach((clip, i) => {
    const where = `data.clips[${i}]`;
    for (const key of ['id', 'source', 'mediaType', 'url', 'name']) field(clip, key, isString, where);
    field(clip, 'duration', isNumber, where);
  });
  const keyframes = { count: 0 };
  list(data, 'channels', 'data').forEach((channel, c) => {
    const where = `data.channels[${c}]`;
    field(channel, 'id', isString, where);
    field(channel, 'name', isString, where);
    field(channel, 'visible', isBoolean, where);
    list(channel, 'items', where).forEach((item, i) => validateItem(item, `${where}.items[${i}]`, keyframes));
  });
  return data as ProjectData;
}
