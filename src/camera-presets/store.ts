import fsp from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { replaceFileAtomic } from '../files/atomic.js';
import { folderInside, readInside, resolveInside } from '../files/media-root.js';
import { parseJson } from '../http/json-body.js';
import { badRequest, notFound } from '../http/errors.js';
import { newId, nowIso } from '../ids.js';
import type { CameraPreset, PresetInput } from './schemas.js';

export const PRESET_EASINGS = ['Linear', 'Smooth', 'EaseIn', 'EaseOut', 'Hold'] as const;

/** A file edited by hand (or by another program) must still look like a preset before it is listed. */
function isPreset(v: unknown, id: string): v is CameraPreset {
  const p = v as Partial<CameraPreset> | null;
  return (
    typeof p === 'object' &&
    p !== null &&
    p.id === id &&
    typeof p.name === 'string' &&
    typeof p.updated_at === 'string' &&
    Array.isArray(p.keyframes) &&
    (p.base === undefined || (typeof p.base === 'object' && p.base !== null))
  );
}

/** Preset ids are file names: a safe charset only, so an id can never be a path. */
/** Letters, digits, `-`, `_`; never a Windows device name (`con.json` would open the console there). */
export const PRESET_ID = /^(?!(?:con|prn|aux|nul|com\d|lpt\d)$)[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/i;

/**
 * Global camera presets, one JSON file per preset in `<media root>/camera-presets/` (separate from
 * `video-presets/`), each written atomically. Files that do not parse are skipped by the list, not fatal.
 */
export class CameraPresetStore {
  /** Below the media root; every read, write and delete checks that the file stays inside it, links included. */
  private static readonly FOLDER = 'camera-presets';

  constructor(
    private readonly mediaRoot: string,
    private readonly log: FastifyBaseLogger,
  ) {}

  private fileName(id: string): string {
    if (!PRESET_ID.test(id)) throw badRequest('id must be 1-64 letters, digits, "-" or "_"', { field: 'id' });
    return `${id}.json`;
  }

  /** The preset in `name`; undefined when missing, outside the media root, unreadable or not a preset. */
  private async read(name: string): Promise<CameraPreset | undefined> {
    const content = await readInside(this.mediaRoot, [CameraPresetStore.FOLDER, name]);
    if (content === undefined) return undefined;
    let parsed: unknown;
    try {
      parsed = parseJson(content.toString('utf8'), name);
    } catch (err) {
      this.log.warn({ err, file: name }, 'unreadable camera preset skipped');
      return undefined;
    }
    if (!isPreset(parsed, path.basename(name, '.json'))) {
      this.log.warn({ file: name }, 'camera preset file without the fields of a preset skipped');
      return undefined;
    }
    return parsed;
  }

  /** Every preset, most recently updated first. */
  async list(): Promise<CameraPreset[]> {
    const dir = await resolveInside(this.mediaRoot, [CameraPresetStore.FOLDER]);
    const names = dir ? await fsp.readdir(dir).catch(() => [] as string[]) : [];
    const presets = await Promise.all(
      names.filter((n) => n.endsWith('.json') && PRESET_ID.test(n.slice(0, -5))).map((n) => this.read(n)),
    );
    return presets
      .filter((p): p is CameraPreset => !!p)
      .sort((a, b) =>
        a.updated_at === b.updated_at ? a.id.localeCompare(b.id) : a.updated_at < b.updated_at ? 1 : -1,
      );
  }

  /**
   * Creates a preset, or replaces the one with the given id (its `updated_at` always moves forward).
   * `created` tells which happened.
   */
  async save(input: PresetInput): Promise<{ preset: CameraPreset; created: boolean }> {
    const keyframes = input.keyframes ?? [];
    const base = input.base;
    if (keyframes.length === 0 && (!base || Object.keys(base).length === 0)) {
      throw badRequest('A camera preset needs keyframes or base', { field: 'keyframes' });
    }
    const id = input.id ?? newId('cam_');
    const name = this.fileName(id);
    const previous = input.id ? await this.read(name) : undefined;
    let updated = nowIso();
    if (previous && updated <= previous.updated_at)
      updated = new Date(Date.parse(previous.updated_at) + 1).toISOString();
    const preset: CameraPreset = {
      id,
      name: input.name.trim(),
      description: input.description ?? '',
      duration: input.duration ?? null,
      keyframes: [...keyframes].sort((a, b) => a.position - b.position),
      ...(base ? { base } : {}),
      updated_at: updated,
    };
    if (!preset.name) throw badRequest('name must not be empty', { field: 'name' });
    await replaceFileAtomic(
      path.join(await folderInside(this.mediaRoot, [CameraPresetStore.FOLDER]), name),
      JSON.stringify(preset, null, 2),
    );
    return { preset, created: !previous };
  }

  async delete(id: string): Promise<void> {
    const dir = await resolveInside(this.mediaRoot, [CameraPresetStore.FOLDER]);
    if (!PRESET_ID.test(id) || !dir) throw notFound(`Camera preset ${id} not found`);
    try {
      await fsp.unlink(path.join(dir, this.fileName(id)));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(`Camera preset ${id} not found`);
      throw err;
    }
  }
}
