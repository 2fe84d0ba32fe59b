/**
 * Sharing benchmark: a board of 200 photos (1600x1200 JPEG of noise, ~0.5-1 MB each) and 10 videos (640x360, 3 s)
 * shared live to the share worker running on workerd (miniflare, local R2 in memory), then re-shared with nothing
 * changed and after one element moved: seconds, files uploaded/skipped, bytes sent. Then the archive: POST kind
 * archive (page build, thumbnails, ZIP), our ZIP writer alone on the unzipped page files, and Info-ZIP's `zip` on the
 * same files (default deflate, and with already-compressed formats stored like ours).
 *
 *   npm run bench -- sharing            200 images + 10 videos
 *   npx tsx bench/sharing.bench.ts --quick   20 images + 2 videos
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { writeZip } from '../src/sharing/service.js';
import { contentTypeOf, type PageFile } from '../src/sharing/page.js';
import { startLocalWorker } from '../worker/local.js';
import { makeVideo, tempDir } from '../test/helpers/fixtures.js';
import { eventually, startService } from '../test/helpers/service.js';

const run = promisify(execFile);
const quick = process.argv.includes('--quick');
const IMAGES = quick ? 20 : 200;
const VIDEOS = quick ? 2 : 10;
const TOKEN = 'bench-share-token-0123456789';
const MB = 1e6;

const seconds = (t0: number) => ((performance.now() - t0) / 1000).toFixed(2);

async function dirBytes(dir: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for (const e of await fsp.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    files++;
    bytes += (await fsp.stat(path.join(e.parentPath, e.name))).size;
  }
  return { files, bytes };
}

const worker = await startLocalWorker({ port: 0, token: TOKEN });
const s = await startService({ SHARE_WORKER_URL: worker.url, SHARE_WORKER_TOKEN: TOKEN });
const dir = await tempDir('bms-share-bench-');
try {
  const board = await s.createBoard('Bench board');
  let t0 = performance.now();
  for (let i = 0; i < IMAGES; i++) {
    // Smooth noise compresses like a photo: a small random image scaled up.
    const small = await sharp(crypto.randomBytes(80 * 60 * 3), { raw: { width: 80, height: 60, channels: 3 } })
      .png()
      .toBuffer();
    const jpeg = await sharp(small).resize(1600, 1200, { kernel: 'cubic' }).jpeg({ quality: 85 }).toBuffer();
    const up = await s.upload(board, { name: `photo-${i}.jpg`, data: jpeg }, { addToBoard: true });
    if (up.status !== 200) throw new Error(up.text);
  }
  for (let i = 0; i < VIDEOS; i++) {
    const file = await makeVideo(path.join(dir, `clip-${i}.mp4`), { width: 640, height: 360, duration: 3 });
    const up = await s.upload(board, file, { addToBoard: true });
    if (up.status !== 200) throw new Error(up.text);
  }
  await eventually(
    async () => {
      const els = (await s.api('GET', `/api/moodboards/${board}/elements`)).body as {
        data: { probe_status?: string };
      }[];
      return els.every((e) => e.data.probe_status !== 'pending') ? true : undefined;
    },
    600_000,
    'probes',
  );
  const source = await dirBytes(path.join(s.dataDir, 'media', 'admin', board));
  console.log(
    `board: ${IMAGES} images + ${VIDEOS} videos, ${source.files} files, ${(source.bytes / MB).toFixed(1)} MB (made in ${seconds(t0)} s)`,
  );

  const share = async (label: string, method: 'POST' | 'PUT', body: Record<string, unknown>) => {
    const t = performance.now();
    const res = await s.api(method, `/api/moodboards/${board}/share`, body);
    if (res.status !== 200) throw new Error(`${label}: ${res.status} ${res.text}`);
    const b = res.body;
    console.log(
      `${label.padEnd(28)} ${seconds(t).padStart(7)} s   files ${b.files}, uploaded ${b.uploaded}, skipped ${b.skipped}, ${(b.bytes_uploaded / MB).toFixed(1)} MB sent`,
    );
    return b;
  };
  const first = await share('live share (first upload)', 'POST', { kind: 'live' });
  await share('re-share, nothing changed', 'PUT', {});
  const els = (await s.api('GET', `/api/moodboards/${board}/elements`)).body as { id: string }[];
  await s.api('PATCH', `/api/moodboards/${board}/elements/${els.at(-1)!.id}`, { x: 5000 });
  await share('re-share, one element moved', 'PUT', {});

  t0 = performance.now();
  const archive = await s.api('POST', `/api/moodboards/${board}/share`, { kind: 'archive' });
  if (archive.status !== 200) throw new Error(archive.text);
  const archiveSeconds = seconds(t0);
  const zipPath = path.join(s.dataDir, 'media', `share-archive-${archive.body.share_id}.zip`);
  const zipSize = (await fsp.stat(zipPath)).size;
  console.log(
    `archive (POST, page + thumbs + zip) ${archiveSeconds.padStart(7)} s   ${archive.body.files} files, ${(zipSize / MB).toFixed(1)} MB`,
  );

  const pageDir = path.join(dir, 'page');
  await run('unzip', ['-q', zipPath, '-d', pageDir]);
  const page = await dirBytes(pageDir);
  const files: PageFile[] = [];
  for (const e of await fsp.readdir(pageDir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const full = path.join(e.parentPath, e.name);
    files.push({
      path: path.relative(pageDir, full),
      key: '',
      contentType: contentTypeOf(full),
      source: { file: full },
    });
  }
  const ours = path.join(dir, 'ours.zip');
  t0 = performance.now();
  await writeZip(files, ours);
  const oursS = (performance.now() - t0) / 1000;
  const rate = (sec: number) => `${(page.bytes / MB / sec).toFixed(0)} MB/s`;
  console.log(
    `zip writer alone (yazl)      ${oursS.toFixed(2).padStart(7)} s   ${rate(oursS)}, ${((await fsp.stat(ours)).size / MB).toFixed(1)} MB`,
  );
  for (const [label, extra] of [
    ['zip -r (deflate all)', []],
    ['zip -r -n jpg:webp:mp4:png', ['-n', '.jpg:.webp:.mp4:.png']],
  ] as const) {
    const out = path.join(dir, `plain-${extra.length}.zip`);
    t0 = performance.now();
    await run('zip', ['-q', '-r', ...extra, out, '.'], { cwd: pageDir });
    const sec = (performance.now() - t0) / 1000;
    console.log(
      `${label.padEnd(28)} ${sec.toFixed(2).padStart(7)} s   ${rate(sec)}, ${((await fsp.stat(out)).size / MB).toFixed(1)} MB`,
    );
  }
  console.log(`(page: ${page.files} files, ${(page.bytes / MB).toFixed(1)} MB; live share ${first.files} files)`);
} finally {
  await s.close();
  await worker.close();
  await fsp.rm(dir, { recursive: true, force: true });
}
