import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { makeImage, probeFile, tempDir } from '../helpers/fixtures.js';
import { eventually, startService, waitForJob, type TestService } from '../helpers/service.js';

/**
 * A card that fills its page with a board image (read through the card page's media files, in the job too) and keeps
 * the renderer busy on every frame, so a render of a few dozen frames is seen running.
 */
const busyCard = (imageUrl: string) => `<!doctype html><html><body style="margin:0;background:#000">
<img src="${imageUrl}" style="display:block;width:100vw;height:100vh">
<script>let x = 0; const f = () => { for (let i = 0; i < 2e6; i++) x += i % 7; requestAnimationFrame(f); };
requestAnimationFrame(f);</script></body></html>`;

const SMALL = { width: 64, height: 64, fps: 10, format: 'mp4' };

describe('HTML renders as jobs (async: true)', () => {
  let s: TestService;
  let fixtures: string;
  let redPng: string;

  const boardWithImage = async (name: string) => {
    const board = await s.createBoard(name);
    const up = await s.upload(board, redPng);
    assert.equal(up.status, 200, up.text);
    return { board, card: busyCard(up.body.url) };
  };
  const elementsOf = async (board: string) =>
    (await s.api('GET', `/api/moodboards/${board}/elements`)).body as { id: string; data: Record<string, unknown> }[];
  const boardFiles = async (board: string) => fsp.readdir(await s.service.ctx.media.boardDir(board));
  const sideFiles = async (board: string) =>
    fsp.readdir(path.join(s.dataDir, 'media', 'html-renders', board)).catch(() => [] as string[]);

  /**
   * Whether a render of `board` has started writing: its video's temp file in the board folder, or (a render split
   * into frame ranges writes its parts in a scratch folder and the video only when it joins them) a non-empty part in
   * a parts folder that was not there before; and whether those parts folders are gone.
   */
  const renderWatch = (board: string) => {
    const partsDirs = async () =>
      (await fsp.readdir(os.tmpdir()))
        .filter((n) => n.startsWith('bms-html-parts-'))
        .map((n) => path.join(os.tmpdir(), n));
    const before = partsDirs();
    const newParts = async () => {
      const old = new Set(await before);
      return (await partsDirs()).filter((d) => !old.has(d));
    };
    return {
      writing: async () => {
        if ((await boardFiles(board)).some((n) => n.startsWith('.tmp-'))) return true;
        for (const dir of await newParts()) {
          const names = await fsp.readdir(dir).catch(() => [] as string[]);
          const sizes = await Promise.all(
            names.map(async (n) => (await fsp.stat(path.join(dir, n)).catch(() => null))?.size ?? 0),
          );
          if (sizes.some((size) => size > 0)) return true;
        }
        return undefined;
      },
      partsGone: async () => ((await newParts()).length === 0 ? true : undefined),
    };
  };

  before(async () => {
    s = await startService();
    fixtures = await tempDir();
    redPng = await makeImage(path.join(fixtures, 'red.png'), { width: 32, height: 32, source: 'color=c=red' });
  });
  after(async () => {
    await s.close();
    await fsp.rm(fixtures, { recursive: true, force: true });
  });

  it('answers 202, reports progress and an eta while running, and completes with the synchronous body and one new element', async () => {
    const { board, card } = await boardWithImage('Queued render');
    const sync = await s.api('POST', '/api/html/render', {
      html: card,
      ...SMALL,
      duration: 0.3,
      title: 'Now',
      board_id: board,
    });
    assert.equal(sync.status, 200, sync.text);
    const elementsBefore = (await elementsOf(board)).length;

    const res = await s.api('POST', '/api/html/render', {
      html: card,
      ...SMALL,
      duration: 4,
      title: 'Queued',
      board_id: board,
      async: true,
    });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.status, 'queued');
    assert.match(res.body.job_id, /^job_/);

    const polls: { status: string; progress: number; eta_seconds: number | null }[] = [];
    const done = await waitForJob(s, res.body.job_id, { timeoutMs: 120_000, each: (b) => polls.push(b) });
    assert.equal(done.status, 'complete', JSON.stringify(done));
    assert.equal(done.kind, 'html.render');
    assert.equal(done.board_id, board);
    const running = polls.filter((p) => p.status === 'running' && p.progress > 0 && p.progress < 1);
    assert.ok(running.length > 0, `no poll saw the render part-way: ${JSON.stringify(polls)}`);
    assert.ok(
      running.some((p) => typeof p.eta_seconds === 'number' && p.eta_seconds >= 0),
      `no eta while running: ${JSON.stringify(running)}`,
    );
    const progress = polls.map((p) => p.progress);
    assert.deepEqual(
      progress,
      [...progress].sort((a, b) => a - b),
      'progress never goes back',
    );

    const result = done.result;
    assert.deepEqual(Object.keys(result).sort(), Object.keys(sync.body).sort(), 'the job result is the sync body');
    assert.equal(result.type, 'video');
    assert.equal(result.filename, 'Queued.mp4');
    assert.equal(result.url, `/media/${board}/Queued.mp4`);
    assert.equal(done.output_url, result.url);
    assert.equal(result.frames, 40);
    assert.deepEqual(result.blocked_requests, []);
    assert.equal(result.element.url, result.url);

    const elements = await elementsOf(board);
    assert.equal(elements.length, elementsBefore + 1, 'exactly one new element');
    assert.ok(elements.some((e) => e.id === result.element.id));

    const file = (await s.service.ctx.media.resolveUrl(result.url)).path;
    const probe = await probeFile(file);
    assert.equal(probe.video?.codec, 'h264');
    assert.equal(probe.video?.width, 64);
    // The board image reached the card in the job: the thumbnail (the middle frame) is red.
    const thumb = await fetch(s.baseUrl + result.thumbnail_url);
    assert.equal(thumb.status, 200);
    const { data } = await sharp(Buffer.from(await thumb.arrayBuffer()))
      .raw()
      .toBuffer({ resolveWithObject: true });
    assert.ok(data[0] > 200 && data[1] < 60 && data[2] < 60, `thumbnail pixel ${[...data.subarray(0, 3)]}`);
    assert.deepEqual(
      (await boardFiles(board)).filter((n) => n.startsWith('.tmp-')),
      [],
      'no temp file left',
    );
  });

  it('files the proxy of a tall video beside the thumbnail and records it in the element, as the sync render does', async () => {
    const { board, card } = await boardWithImage('Tall');
    const body = { html: card, width: 64, height: 500, fps: 10, duration: 0.2, format: 'webm', board_id: board };
    const sync = await s.api('POST', '/api/html/render', { ...body, title: 'Tall now' });
    assert.equal(sync.status, 200, sync.text);
    const queued = await s.api('POST', '/api/html/render', { ...body, title: 'Tall queued', async: true });
    assert.equal(queued.status, 202, queued.text);
    const done = await waitForJob(s, queued.body.job_id, { timeoutMs: 60_000 });
    assert.equal(done.status, 'complete', JSON.stringify(done));
    for (const answer of [sync.body, done.result]) {
      const stem = path.parse(answer.filename).name;
      assert.equal(answer.proxy_url, `/media/html-renders/${board}/${encodeURIComponent(`${stem}.proxy.mp4`)}`);
      assert.equal(answer.thumbnail_url, `/media/html-renders/${board}/${encodeURIComponent(`${stem}.jpg`)}`);
      assert.equal(answer.element.data.proxy_url, answer.proxy_url);
      const stored = (await elementsOf(board)).find((e) => e.id === answer.element.id);
      assert.equal(stored?.data.proxy_url, answer.proxy_url, 'the stored element names its proxy');
      const proxy = await probeFile((await s.service.ctx.media.resolveUrl(answer.proxy_url)).path);
      assert.equal(proxy.video?.height, 480);
    }
    assert.deepEqual(
      (await sideFiles(board)).filter((n) => n.startsWith('.tmp-')),
      [],
    );
  });

  it('render-frame as a job: the same PNG and body as the synchronous answer, no element', async () => {
    const { board, card } = await boardWithImage('Frame job');
    const body = { html: card, ...SMALL, format: undefined, frame: 12, board_id: board };
    const sync = await s.api('POST', '/api/html/render-frame', { ...body, title: 'Frame' });
    assert.equal(sync.status, 200, sync.text);
    const queued = await s.api('POST', '/api/html/render-frame', { ...body, title: 'Frame', async: true });
    assert.equal(queued.status, 202, queued.text);
    const done = await waitForJob(s, queued.body.job_id, { timeoutMs: 60_000 });
    assert.equal(done.status, 'complete', JSON.stringify(done));
    assert.equal(done.kind, 'html.render-frame');
    assert.equal(done.progress, 1);
    assert.deepEqual(Object.keys(done.result).sort(), Object.keys(sync.body).sort());
    assert.equal(done.result.type, 'image');
    assert.equal(done.result.filename, 'Frame (1).png', 'a unique name beside the synchronous one');
    assert.equal(done.output_url, done.result.url);
    const bytes = async (url: string) => fsp.readFile((await s.service.ctx.media.resolveUrl(url)).path);
    assert.ok((await bytes(done.result.url)).equals(await bytes(sync.body.url)), 'the same pixels as the sync frame');
    assert.deepEqual(await elementsOf(board), [], 'frames are not added to the board');
    assert.deepEqual(
      (await boardFiles(board)).filter((n) => n.startsWith('.tmp-')),
      [],
    );
  });

  it("in a job the card's /media requests still go through the media root: a link out reads as missing", async () => {
    const board = await s.createBoard('Link out');
    const outside = await tempDir('bms-outside-');
    try {
      const secret = await makeImage(path.join(outside, 'secret.png'), {
        width: 32,
        height: 32,
        source: 'color=c=red',
      });
      await fsp.symlink(secret, path.join(await s.service.ctx.media.boardDir(board), 'link.png'));
      const html = `<!doctype html><html><body style="margin:0;background:#fff">
        <img src="/media/${board}/link.png" style="display:block;width:32px;height:32px"></body></html>`;
      const queued = await s.api('POST', '/api/html/render-frame', {
        html,
        width: 32,
        height: 32,
        fps: 10,
        board_id: board,
        async: true,
      });
      assert.equal(queued.status, 202, queued.text);
      const done = await waitForJob(s, queued.body.job_id, { timeoutMs: 60_000 });
      assert.equal(done.status, 'complete', JSON.stringify(done));
      const png = await fsp.readFile((await s.service.ctx.media.resolveUrl(done.result.url)).path);
      const { data } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      const centre = (16 * 32 + 16) * 3;
      assert.ok(
        !(data[centre] > 200 && data[centre + 1] < 60),
        `the linked red picture showed: ${data.subarray(centre, centre + 3).join(',')}`,
      );
    } finally {
      await fsp.rm(outside, { recursive: true, force: true });
    }
  });

  it('cancel mid-render stops it and leaves no partial file; the browser is free for the next render', async () => {
    const { board, card } = await boardWithImage('Cancelled');
    const filesBefore = await boardFiles(board);
    const render = renderWatch(board);
    const res = await s.api('POST', '/api/html/render', {
      html: card,
      ...SMALL,
      duration: 60,
      title: 'Long',
      board_id: board,
      async: true,
    });
    assert.equal(res.status, 202, res.text);
    const id = res.body.job_id;
    const running = await waitForJob(s, id, {
      timeoutMs: 60_000,
      until: (b) => b.status !== 'queued' && (b.status !== 'running' || b.progress > 0),
    });
    assert.equal(running.status, 'running', JSON.stringify(running));
    await eventually(render.writing, 30_000, 'the render to write its video or its parts');
    const cancel = await s.api('POST', `/api/jobs/${id}/cancel`);
    assert.equal(cancel.status, 200, cancel.text);
    const done = await waitForJob(s, id, { timeoutMs: 30_000 });
    assert.equal(done.status, 'cancelled', JSON.stringify(done));
    assert.equal(done.error_code, 'cancelled');
    assert.ok(done.progress < 1);
    assert.deepEqual(await boardFiles(board), filesBefore, 'no partial video, proxy or thumbnail in the board folder');
    assert.deepEqual(await sideFiles(board), []);
    assert.deepEqual(await elementsOf(board), [], 'no element was added');
    await eventually(render.partsGone, 30_000, 'the parts to go');

    // Both page slots came back: a two-page video render gets them.
    const next = await s.api('POST', '/api/html/render', { html: card, ...SMALL, duration: 0.3, board_id: board });
    assert.equal(next.status, 200, next.text);
  });

  it('a bad request with async: true is an immediate 4xx and queues nothing', async () => {
    const board = await s.createBoard('Refused');
    const base = { html: '<p>x</p>', ...SMALL, duration: 1, board_id: board, async: true };
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [{ width: 161 }, 400, /width must be multiple of 2/],
      [{ duration: 0 }, 400, /duration must be > 0/],
      [{ async: 'yes' }, 400, /async/],
      [{ colour: 'red' }, 400, /unknown field "colour"/],
      [{ board_id: 'bd_nope' }, 404, /bd_nope/],
    ];
    for (const [patch, status, message] of cases) {
      const res = await s.api('POST', '/api/html/render', { ...base, ...patch });
      assert.equal(res.status, status, `${JSON.stringify(patch)} -> ${res.status} ${res.text}`);
      assert.match(res.body.error.message, message);
    }
    const frameBase = { ...base, format: undefined };
    const frame = await s.api('POST', '/api/html/render-frame', { ...frameBase, frame: 10 });
    assert.equal(frame.status, 400, frame.text);
    assert.match(frame.body.error.message, /frame 10 is past the last frame \(9\)/);
    const noBoard = await s.api('POST', '/api/html/render-frame', { ...frameBase, board_id: 'bd_nope', frame: 0 });
    assert.equal(noBoard.status, 404, noBoard.text);
    for (const b of [board, 'bd_nope']) {
      const jobs = await s.api('GET', `/api/jobs?board_id=${b}`);
      assert.deepEqual(jobs.body.jobs, [], `no job was queued for ${b}`);
    }
  });

  it('a synchronous render stops when its client goes away, leaving no partial file', async () => {
    const { board, card } = await boardWithImage('Gone');
    const filesBefore = await boardFiles(board);
    const render = renderWatch(board);
    const client = new AbortController();
    const pending = fetch(`${s.baseUrl}/api/html/render`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ html: card, ...SMALL, duration: 60, board_id: board }),
      signal: client.signal,
    }).catch((err: unknown) => err);
    await eventually(render.writing, 60_000, 'the render to start writing');
    client.abort();
    await pending;
    await eventually(
      async () => (JSON.stringify(await boardFiles(board)) === JSON.stringify(filesBefore) ? true : undefined),
      30_000,
      'the partial file to go',
    );
    await eventually(render.partsGone, 30_000, 'the parts to go');
    assert.deepEqual(await elementsOf(board), [], 'no element was added');
  });
});
