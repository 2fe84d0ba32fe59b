import fsp from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import type { FastifyBaseLogger } from 'fastify';
import { tempPathIn } from '../files/atomic.js';
import { folderInside, type MediaRoot } from '../files/media-root.js';
import { renameRetrying } from '../files/retry.js';
import { runFfmpeg } from '../tools/ffmpeg.js';
import { probe } from '../tools/ffprobe.js';
import type { Tools } from '../tools/locate.js';
import type { BoardEvents } from './events.js';
import type { BoardStore } from './store.js';
import type { Element } from './schemas.js';
import { KeyedQueue } from '../jobs/keyed-queue.js';

const THUMB_SIZE = 320;

/**
 * Probes new media elements in the background, one at a time: dimensions, duration and codecs go into the
 * element's data with a thumbnail under `media/thumbs/<board>/<element>.jpg`. Probe failures never lose the file:
 * the element keeps it and records `probe_error`.
 */
export class MediaProber {
  private readonly queue = new KeyedQueue();

  constructor(
    private readonly boards: BoardStore,
    private readonly media: MediaRoot,
    private readonly tools: Tools,
    private readonly events: BoardEvents,
    private readonly log: FastifyBaseLogger,
  ) {}

  enqueue(element: Element): void {
    void this.queue
      .run('probe', () => this.probeOne(element))
      .catch((err) => this.log.error({ err, element: element.id }, 'probe failed'));
  }

  /** Resolves when every probe queued so far has finished (used at shutdown). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  private async probeOne(element: Element): Promise<void> {
    if (!element.url) return;
    let file: string;
    try {
      file = (await this.media.resolveUrl(element.url)).path;
    } catch {
      this.store(element.id, { probe_status: 'error', probe_error: 'file not found' });
      return;
    }
    let facts: Record<string, unknown>;
    try {
      facts = element.type === 'image' ? await this.probeImage(file, element) : await this.probeAv(file, element);
    } catch (err) {
      this.store(element.id, { probe_status: 'error', probe_error: err instanceof Error ? err.message : String(err) });
      return;
    }
    const updated = this.store(element.id, { ...facts, probe_status: 'done', probe_error: null });
    if (updated) this.events.emit('element-probed', updated, { path: file });
  }

  private store(elementId: string, facts: Record<string, unknown>): Element | undefined {
    let updated: Element;
    try {
      updated = this.boards.mutateElementData(elementId, (data) => {
        for (const [k, v] of Object.entries(facts)) {
          if (v === null || v === undefined) delete data[k];
          else data[k] = v;
        }
        return data;
      });
    } catch {
      return undefined; // element deleted meanwhile
    }
    this.events.emit('element-updated', updated);
    return updated;
  }

  /** Where an element's thumbnail goes; its folder is created, and must stay inside the media root (links included). */
  private async thumbTarget(element: Element): Promise<{ file: string; url: string }> {
    const dir = await folderInside(this.media.root, ['thumbs', element.board_id]);
    return {
      file: path.join(dir, `${element.id}.jpg`),
      url: this.media.rootUrl(path.join('thumbs', element.board_id, `${element.id}.jpg`)),
    };
  }

  private async probeImage(file: string, element: Element): Promise<Record<string, unknown>> {
    const meta = await sharp(file, { failOn: 'error' }).metadata();
    if (!meta.width || !meta.height) throw new Error('not a readable image');
    // EXIF orientations 5-8 swap width and height when displayed.
    const swap = (meta.orientation ?? 1) >= 5;
    const thumb = await this.thumbTarget(element);
    const temp = tempPathIn(path.dirname(thumb.file), path.basename(thumb.file));
    await sharp(file)
      .rotate()
      .resize(THUMB_SIZE, THUMB_SIZE, { fit: 'inside', withoutEnlargement: true })
      .jpeg({ quality: 80 })
      .toFile(temp);
    await renameRetrying(temp, thumb.file);
    return {
      width: swap ? meta.height : meta.width,
      height: swap ? meta.width : meta.height,
      format: meta.format,
      has_alpha: meta.hasAlpha ?? false,
      thumbnail_url: thumb.url,
    };
  }

  private async probeAv(file: string, element: Element): Promise<Record<string, unknown>> {
    const info = await probe(this.tools, file);
    if (!info.video && !info.audio) throw new Error('no audio or video stream');
    const facts: Record<string, unknown> = {
      duration: info.duration,
      container: info.formatName,
      has_audio: !!info.audio,
      has_video: !!info.video,
    };
    if (info.video) {
      Object.assign(facts, {
        width: info.video.width,
        height: info.video.height,
        codec: info.video.codec,
        fps: info.video.fps,
      });
      const thumb = await this.thumbTarget(element);
      const temp = tempPathIn(path.dirname(thumb.file), path.basename(thumb.file));
      const at = Math.min(1, (info.duration ?? 0) / 2);
      try {
        await runFfmpeg(
          this.tools,
          [
            '-ss',
            at.toFixed(3),
            '-i',
            file,
            '-frames:v',
            '1',
            '-vf',
            `scale=${THUMB_SIZE}:${THUMB_SIZE}:force_original_aspect_ratio=decrease`,
            '-f',
            'image2',
            '-c:v',
            'mjpeg',
            temp,
          ],
          { timeoutMs: 60_000 },
        );
        await renameRetrying(temp, thumb.file);
        facts.thumbnail_url = thumb.url;
      } catch (err) {
        await fsp.rm(temp, { force: true });
        facts.thumbnail_error = err instanceof Error ? err.message : String(err);
      }
    }
    if (info.audio)
      Object.assign(facts, {
        audio_codec: info.audio.codec,
        audio_channels: info.audio.channels,
        sample_rate: info.audio.sampleRate,
      });
    return facts;
  }
}
