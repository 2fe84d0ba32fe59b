import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HtmlRenderer } from '../../src/html/render.js';
import { probeFile } from '../helpers/fixtures.js';
import { startService, type TestService } from '../helpers/service.js';

const card = (colour: string) => `<!doctype html><html><body style="margin:0;background:${colour}"></body></html>`;

describe('card videos (shared by sharing)', () => {
  let s: TestService;
  let board: string;
  let renders = 0;
  const original = HtmlRenderer.prototype.renderToFile;
  const cardVideo = (boardId: string, elementId: string, signal?: AbortSignal) =>
    s.service.features.html.cardVideos.get(boardId, elementId, signal);

  before(async () => {
    HtmlRenderer.prototype.renderToFile = function (...args) {
      renders++;
      return original.apply(this, args);
    };
    s = await startService();
    board = await s.createBoard('Cards');
  });
  after(async () => {
    HtmlRenderer.prototype.renderToFile = original;
    await s.close();
  });

  it('renders once per version, concurrent calls share the render, and adds nothing to the board', async () => {
    const el = await s.api('POST', `/api/moodboards/${board}/elements`, {
      type: 'html',
      name: 'c',
      width: 160,
      height: 90,
      data: { duration: 0.2 },
    });
    assert.equal(el.status, 201, el.text);
    const id = el.body.id as string;
    assert.equal(
      (await s.api('PUT', `/api/moodboards/${board}/elements/${id}/html`, { html: card('rgb(255,0,0)') })).status,
      200,
    );

    const [a, b] = await Promise.all([cardVideo(board, id), cardVideo(board, id)]);
    assert.equal(renders, 1, 'two concurrent calls, one render');
    assert.equal(a.path, b.path);
    assert.equal(a.htmlVersion, 2);
    const probe = await probeFile(a.path);
    assert.equal(probe.video?.width, 160);
    assert.equal(probe.video?.codec, 'h264');
    assert.ok((await fsp.stat(a.posterPath)).size > 0);
    assert.equal((await s.api('GET', a.url)).status, 200, 'served under /media');

    const again = await cardVideo(board, id);
    assert.equal(again.path, a.path);
    assert.equal(renders, 1, 'the cached file is reused');

    assert.equal(
      (await s.api('PUT', `/api/moodboards/${board}/elements/${id}/html`, { html: card('rgb(0,0,255)') })).status,
      200,
    );
    const v3 = await cardVideo(board, id);
    assert.equal(renders, 2);
    assert.equal(v3.htmlVersion, 3);
    assert.notEqual(v3.path, a.path);

    const elements = (await s.api('GET', `/api/moodboards/${board}`)).body.elements;
    assert.equal(elements.length, 1, 'no element was added');
    const leftovers = (await fsp.readdir(path.dirname(a.path))).filter((n) => n.startsWith('.tmp-'));
    assert.deepEqual(leftovers, []);
  });

  it('stops the render when its only caller goes away, and refuses other element types', async () => {
    const el = await s.api('POST', `/api/moodboards/${board}/elements`, {
      type: 'html',
      name: 'long',
      width: 160,
      height: 90,
      data: { duration: 60 },
    });
    const ac = new AbortController();
    const pending = cardVideo(board, el.body.id, ac.signal);
    setTimeout(() => ac.abort(), 300);
    await assert.rejects(pending);
    const dir = path.join(s.dataDir, 'media', 'html-renders', board, 'cards');
    await new Promise((r) => setTimeout(r, 300));
    const left = (await fsp.readdir(dir)).filter((n) => n.includes(el.body.id));
    assert.deepEqual(left, [], 'the stopped render left no file');
    const text = await s.api('POST', `/api/moodboards/${board}/elements`, { type: 'text', name: 't' });
    await assert.rejects(cardVideo(board, text.body.id), /not html/);
  });
});
