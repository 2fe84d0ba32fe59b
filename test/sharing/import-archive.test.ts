import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { startService, waitForJob, type TestService } from '../helpers/service.js';
import { sampleBoard, type SampleBoard } from './board.js';
import { rawZip } from './raw-zip.js';

const execFileAsync = promisify(execFile);
const EVIL = `evil-${crypto.randomBytes(4).toString('hex')}`;
const H = (c: string) => c.repeat(32);
const boardJson = (elements: unknown[] = []) =>
  Buffer.from(JSON.stringify({ format: 'board-share', version: 1, board: { name: 'x' }, cover: null, elements }));
const index = { name: 'index.html', data: Buffer.from('<!doctype html>') };

/** Every file under `dir` whose name contains `part`. */
async function findNamed(dir: string, part: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fsp.readdir(dir, { withFileTypes: true, recursive: true }))
    if (e.name.includes(part)) out.push(path.join(e.parentPath, e.name));
  return out;
}

describe('import from archives', () => {
  let s: TestService;
  let sample: SampleBoard;

  before(async () => {
    s = await startService();
    sample = await sampleBoard(s);
  });
  after(() => s.close());

  it('round-trips a share archive into a new board', async () => {
    // A second element showing the red image: one file in the archive, two elements imported.
    const red = (await s.api('GET', `/api/moodboards/${sample.board}/elements/${sample.ids.red}`)).body;
    const twin = await s.api('POST', `/api/moodboards/${sample.board}/elements`, {
      type: 'image',
      url: red.url,
      name: 'Red again',
      x: 700,
      y: 400,
      width: 100,
      height: 75,
    });
    assert.equal(twin.status, 201, twin.text);
    const share = await s.api('POST', `/api/moodboards/${sample.board}/share`, { kind: 'archive' });
    assert.equal(share.status, 200, share.text);
    const zipFile = path.join(s.dataDir, 'media', `share-archive-${share.body.share_id}.zip`);
    assert.ok((await fsp.stat(zipFile)).size > 0);
    const res = await s.api('POST', `/api/moodboards/${sample.board}/import`, {
      from_zip: share.body.download_url,
      mode: 'new-board',
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.mode, 'new-board');
    assert.equal(res.body.imported, 7);
    const copy = (await s.api('GET', `/api/moodboards/${res.body.board_id}`)).body;
    assert.deepEqual(copy.elements.map((e: any) => e.type).sort(), [
      'file',
      'html',
      'image',
      'image',
      'image',
      'text',
      'video',
    ]);
    const reds = copy.elements.filter((e: any) => e.name?.startsWith('Red'));
    assert.equal(reds.length, 2);
    assert.notEqual(reds[0].url, reds[1].url, 'each element got its own copy of the shared file');
    for (const r of reds) assert.equal((await s.api('GET', r.url)).status, 200);
    const blob = copy.elements.find((e: any) => e.type === 'file');
    assert.ok(Buffer.from(await (await fetch(s.baseUrl + blob.url)).arrayBuffer()).equals(sample.blob));
    assert.deepEqual(
      await fsp.readdir(path.join(s.dataDir, 'tmp')).then((n) => n.filter((x) => x.startsWith('import-'))),
      [],
      'staging removed',
    );
  });

  it("include_history adds the board's generation history to board.json, and only then", async () => {
    const history = s.service.features.generation.history;
    const entry = history.insert({
      board_id: sample.board,
      model: 'gpt-image-1',
      provider: 'openai',
      kind: 'image',
      prompt: 'a red square',
      negative_prompt: null,
      aspect_ratio: '1:1',
      params: { quality: 'low' },
      status: 'running',
      cost_estimate: 0.042,
    });
    history.finish(entry.id, { status: 'complete', element_id: sample.ids.red });
    history.insert({
      board_id: await s.createBoard('other'),
      model: 'dall-e-3',
      provider: 'openai',
      kind: 'image',
      prompt: 'elsewhere',
      negative_prompt: null,
      aspect_ratio: null,
      params: {},
      status: 'running',
      cost_estimate: 0.04,
    });
    const boardJsonOf = async (includeHistory: boolean) => {
      const share = await s.api('POST', `/api/moodboards/${sample.board}/share`, {
        kind: 'archive',
        include_history: includeHistory,
      });
      assert.equal(share.status, 200, share.text);
      const zip = path.join(s.dataDir, 'media', `share-archive-${share.body.share_id}.zip`);
      return JSON.parse(
        (await execFileAsync('unzip', ['-p', zip, 'board.json'], { maxBuffer: 64 * 1024 * 1024 })).stdout,
      );
    };
    const withHistory = await boardJsonOf(true);
    assert.equal(withHistory.generations.length, 1, "only this board's requests");
    assert.deepEqual(
      { ...withHistory.generations[0], created_at: undefined, finished_at: undefined },
      {
        model: 'gpt-image-1',
        provider: 'openai',
        kind: 'image',
        prompt: 'a red square',
        negative_prompt: null,
        aspect_ratio: '1:1',
        params: { quality: 'low' },
        status: 'complete',
        cost_estimate: 0.042,
        element_id: sample.ids.red,
        created_at: undefined,
        finished_at: undefined,
      },
    );
    assert.ok(
      withHistory.elements.some((e: { id: string }) => e.id === sample.ids.red),
      'the entry names an element of the page',
    );
    assert.equal((await boardJsonOf(false)).generations, undefined);
  });

  it('leaves the board exactly as it was when a file does not match board.json', async () => {
    const good = Buffer.from('real bytes');
    const el = {
      id: 'el_1',
      type: 'file',
      name: 'f',
      x: 0,
      y: 0,
      width: null,
      height: null,
      data: {},
      file: { path: `media/${H('b')}.bin`, size: good.length, sha256: 'c'.repeat(64), name: 'f.bin' },
    };
    const text = {
      id: 'el_0',
      type: 'text',
      name: 'first',
      x: 0,
      y: 0,
      width: null,
      height: null,
      data: { text: 'hi' },
    };
    const zip = rawZip([
      index,
      { name: 'board.json', data: boardJson([text, el]) },
      { name: `media/${H('b')}.bin`, data: good },
    ]);
    const up = await s.upload(sample.board, { name: 'mismatch.zip', data: zip });
    const before = (await s.api('GET', `/api/moodboards/${sample.board}`)).body.elements;
    const files = await fsp.readdir(path.join(s.dataDir, 'media', 'admin', sample.board));
    const res = await s.api('POST', `/api/moodboards/${sample.board}/import`, {
      from_zip: up.body.url,
      mode: 'replace',
    });
    assert.equal(res.status, 400, res.text);
    assert.match(res.body.error.message, /does not match its sha-256/);
    assert.deepEqual((await s.api('GET', `/api/moodboards/${sample.board}`)).body.elements, before);
    assert.deepEqual(await fsp.readdir(path.join(s.dataDir, 'media', 'admin', sample.board)), files);
  });

  it('refuses every archive of the hostile corpus with a clear 400, writing nothing outside staging', async () => {
    const corpus: [string, () => Promise<Buffer> | Buffer, RegExp][] = [
      ['zip-slip ../', () => rawZip([{ name: `../${EVIL}.txt`, data: Buffer.from('x') }]), /climbs out/],
      ['zip-slip deep', () => rawZip([{ name: `media/../../../${EVIL}.txt`, data: Buffer.from('x') }]), /climbs out/],
      [
        'zip-slip after a good entry',
        () => rawZip([index, { name: `cards/../../${EVIL}.html`, data: Buffer.from('x') }]),
        /climbs out/,
      ],
      ['absolute path', () => rawZip([{ name: `/tmp/${EVIL}.txt`, data: Buffer.from('x') }]), /absolute path/],
      ['drive letter', () => rawZip([{ name: `C:/${EVIL}.txt`, data: Buffer.from('x') }]), /drive letter/],
      ['backslashes', () => rawZip([{ name: `..\\..\\${EVIL}.txt`, data: Buffer.from('x') }]), /backslash/],
      [
        'symlink to /etc/passwd',
        () => rawZip([{ name: `media/${H('a')}.png`, data: Buffer.from('/etc/passwd'), unixMode: 0o120777 }]),
        /symbolic link/,
      ],
      ['character device', () => rawZip([{ name: `media/${H('a')}.png`, unixMode: 0o020644 }]), /character device/],
      [
        '10 GB declared',
        () =>
          rawZip([
            index,
            { name: `media/${H('a')}.mp4`, data: Buffer.from('tiny'), method: 8, uncompressedSize: 10 * 1024 ** 3 },
          ]),
        /declares 10737418240 bytes/,
      ],
      [
        '1:1000 bomb',
        () => rawZip([{ name: `media/${H('a')}.bin`, data: Buffer.alloc(20 * 1024 * 1024), method: 8 }]),
        /expands \d+ times/,
      ],
      [
        '100,000 entries',
        () => rawZip(Array.from({ length: 100_000 }, (_, i) => ({ name: `media/${i}.txt` }))),
        /100000 entries, over the limit/,
      ],
      [
        'duplicate names',
        () =>
          rawZip([
            { name: 'board.json', data: boardJson() },
            { name: 'board.json', data: boardJson() },
          ]),
        /appears twice/,
      ],
      ['encrypted entry', () => rawZip([{ name: 'board.json', data: boardJson(), method: 8, flags: 1 }]), /encrypted/],
      ['bad CRC', () => rawZip([index, { name: 'board.json', data: boardJson(), crc: 0x1234 }]), /CRC-32/],
      [
        'nested archive by name',
        () => rawZip([{ name: `media/${H('a')}.zip`, data: rawZip([index]) }]),
        /archive inside the archive/,
      ],
      [
        'nested archive by content',
        () => rawZip([{ name: `media/${H('a')}.png`, data: rawZip([index]) }]),
        /archive inside the archive/,
      ],
      [
        'more bytes than declared',
        () => rawZip([{ name: 'board.json', data: boardJson(), method: 8, uncompressedSize: 10 }]),
        /more bytes than it declares|too many bytes/,
      ],
      [
        'NUL in a name',
        () => rawZip([{ name: `media/x\u0000${EVIL}.png`, data: Buffer.from('x') }]),
        /control characters/,
      ],
      [
        'unexpected file',
        () => rawZip([{ name: `${EVIL}.sh`, data: Buffer.from('rm -rf /') }]),
        /not part of a shared board/,
      ],
      [
        'board.json pointing outside',
        () =>
          rawZip([
            index,
            {
              name: 'board.json',
              data: boardJson([
                {
                  id: 'e',
                  type: 'image',
                  name: 'x',
                  x: 0,
                  y: 0,
                  width: null,
                  height: null,
                  data: {},
                  file: { path: `../${EVIL}`, size: 1, sha256: 'a'.repeat(64), name: 'x' },
                },
              ]),
            },
          ]),
        /board\.json at \/elements\/0\/file\/path/,
      ],
      ['not a ZIP', () => Buffer.from('just text, no archive'), /Not a readable ZIP/],
    ];
    assert.ok(corpus.length >= 15);
    const boardDir = path.join(s.dataDir, 'media', 'admin', sample.board);
    const elementsBefore = (await s.api('GET', `/api/moodboards/${sample.board}`)).body.elements;
    for (const [label, make, message] of corpus) {
      const up = await s.upload(sample.board, { name: `hostile.zip`, data: await make() });
      assert.equal(up.status, 200, up.text);
      const filesBefore = (await fsp.readdir(boardDir)).sort();
      const res = await s.api('POST', `/api/moodboards/${sample.board}/import`, {
        from_zip: up.body.url,
        mode: 'append',
      });
      assert.equal(res.status, 400, `${label}: ${res.status} ${res.text}`);
      assert.ok(['bad_archive', 'bad_share'].includes(res.body.error.code), `${label}: ${res.body.error.code}`);
      assert.match(res.body.error.message, message, label);
      assert.deepEqual((await fsp.readdir(boardDir)).sort(), filesBefore, `${label}: board folder untouched`);
      assert.deepEqual(
        await fsp.readdir(path.join(s.dataDir, 'tmp')).then((n) => n.filter((x) => x.startsWith('import-'))),
        [],
        `${label}: staging removed`,
      );
    }
    assert.deepEqual((await s.api('GET', `/api/moodboards/${sample.board}`)).body.elements, elementsBefore);
    assert.deepEqual(await findNamed(s.dataDir, EVIL), [], 'nothing of the corpus landed anywhere in DATA_DIR');
    for (const spot of [`/${EVIL}.txt`, `/tmp/${EVIL}.txt`, path.join(os.tmpdir(), `${EVIL}.txt`)])
      assert.equal(fs.existsSync(spot), false, spot);
  });

  it('runs as a job with async: true, and the routes are in the OpenAPI document', async () => {
    const queued = await s.api('POST', `/api/moodboards/${sample.board}/share`, { kind: 'archive', async: true });
    assert.equal(queued.status, 202, queued.text);
    const job = await waitForJob(s, queued.body.job_id, { what: 'share job' });
    assert.equal(job.status, 'complete', job.error);
    assert.equal(job.kind, 'sharing.share');
    assert.match(job.result.download_url, /^\/media\/share-archive-sh_[a-z0-9]+\.zip$/);
    assert.equal((await s.api('GET', job.result.download_url)).status, 200);
    const imported = await s.api('POST', `/api/moodboards/${sample.board}/import`, {
      from_zip: job.result.download_url,
      mode: 'new-board',
      async: true,
    });
    assert.equal(imported.status, 202, imported.text);
    const done = await waitForJob(s, imported.body.job_id, { what: 'import job' });
    assert.equal(done.result.imported, 7, done.error);

    const paths = (await s.api('GET', '/api/openapi.json')).body.paths;
    for (const p of ['/api/moodboards/{id}/share', '/api/moodboards/{id}/import']) assert.ok(paths[p], p);
    assert.ok(paths['/api/moodboards/{id}/share'].put && paths['/api/moodboards/{id}/share'].delete);
  });

  it('validates the request', async () => {
    const both = await s.api('POST', `/api/moodboards/${sample.board}/import`, {
      from_url: 'http://x.test/s/a/',
      from_zip: '/media/a.zip',
      mode: 'append',
    });
    assert.equal(both.status, 400);
    assert.match(both.body.error.message, /exactly one of from_url and from_zip/);
    const mode = await s.api('POST', `/api/moodboards/${sample.board}/import`, {
      from_zip: '/media/a.zip',
      mode: 'merge',
    });
    assert.equal(mode.status, 400);
    const ftp = await s.api('POST', `/api/moodboards/${sample.board}/import`, {
      from_url: 'ftp://x.test/',
      mode: 'append',
    });
    assert.equal(ftp.status, 400);
    const traversal = await s.api('POST', `/api/moodboards/${sample.board}/import`, {
      from_zip: '/media/../../etc/passwd',
      mode: 'append',
    });
    assert.equal(traversal.status, 400);
    const missing = await s.api('POST', `/api/moodboards/bd_nope/import`, { from_zip: '/media/a.zip', mode: 'append' });
    assert.equal(missing.status, 404);
    const noWorker = await s.api('POST', `/api/moodboards/${sample.board}/share`, { kind: 'live' });
    assert.equal(noWorker.status, 503);
    assert.equal(noWorker.body.error.code, 'share_worker_not_configured');
    const kind = await s.api('POST', `/api/moodboards/${sample.board}/share`, { kind: 'public' });
    assert.equal(kind.status, 400);
    const history = await s.api('POST', `/api/moodboards/${sample.board}/share`, {
      kind: 'archive',
      include_history: 'yes',
    });
    assert.equal(history.status, 400);
  });
});
