import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { startService, type TestService } from '../helpers/service.js';

describe('html cards: backing file and versions', () => {
  let s: TestService;
  let board: string;

  const fileOf = async (url: string) => (await s.service.ctx.media.resolveUrl(url)).path;
  const newCard = async (name: string) => {
    const res = await s.api('POST', `/api/moodboards/${board}/elements`, { type: 'html', name });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };
  const cardUrl = (id: string) => `/api/moodboards/${board}/elements/${id}`;

  before(async () => {
    s = await startService();
    board = await s.createBoard('Cards');
  });
  after(() => s.close());

  it('creates an empty backing document for a new card without url', async () => {
    const el = await newCard('My Card');
    assert.equal(el.type, 'html');
    assert.equal(el.url, `/media/${board}/My%20Card.html`);
    assert.equal(el.data.htmlUrl, el.url);
    assert.equal(el.data.htmlVersion, 1);
    const served = await s.api('GET', el.url);
    assert.equal(served.status, 200);
    assert.match(served.text, /^<!doctype html>/);
    const second = await newCard('My Card');
    assert.equal(
      second.url,
      `/media/${board}/My%20Card%20(1).html`,
      "a second card never takes over the first one's file",
    );
  });

  it('uses an uploaded .html file as the backing file, and refuses other files', async () => {
    const up = await s.upload(board, { name: 'given.html', data: '<p>uploaded</p>' });
    assert.equal(up.status, 200, up.text);
    const res = await s.api('POST', `/api/moodboards/${board}/elements`, { type: 'html', url: up.body.url });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.url, up.body.url);
    assert.equal(res.body.data.htmlUrl, up.body.url);
    assert.equal(res.body.data.htmlVersion, 1);

    const written = await s.api('PUT', `${cardUrl(res.body.id)}/html`, { html: '<p>second</p>' });
    assert.equal(written.status, 200, written.text);
    assert.equal(await fsp.readFile(await fileOf(up.body.url), 'utf8'), '<p>second</p>');
    const first = await s.api('GET', `${cardUrl(res.body.id)}/html/versions/1`);
    assert.equal(first.body.html, '<p>uploaded</p>', 'the uploaded content is kept as version 1');

    const dir = await tempDir();
    const image = await s.upload(board, await makeImage(path.join(dir, 'pic.png'), { width: 16, height: 16 }));
    const wrong = await s.api('POST', `/api/moodboards/${board}/elements`, { type: 'html', url: image.body.url });
    assert.equal(wrong.status, 400);
    assert.match(wrong.body.error.message, /\.html file/);
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it('PUT writes the file, bumps the version and updates the element', async () => {
    const el = await newCard('Put');
    const res = await s.api('PUT', `${cardUrl(el.id)}/html`, { html: '<h1>v2</h1>' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.htmlUrl, el.url);
    assert.equal(res.body.htmlVersion, 2);
    assert.equal(res.body.element.id, el.id);
    assert.equal(res.body.element.type, 'html');
    assert.equal(res.body.element.data.htmlVersion, 2);
    assert.equal((await s.api('GET', el.url)).text, '<h1>v2</h1>');
    const stored = await s.api('GET', cardUrl(el.id));
    assert.equal(stored.body.data.htmlVersion, 2);
  });

  it('answers 400 for an element that is not html and 404 for unknown ids', async () => {
    const text = await s.api('POST', `/api/moodboards/${board}/elements`, { type: 'text', name: 'note' });
    assert.equal(text.status, 201, text.text);
    const notHtml = await s.api('PUT', `${cardUrl(text.body.id)}/html`, { html: '<p>x</p>' });
    assert.equal(notHtml.status, 400);
    assert.match(notHtml.body.error.message, /not html/);
    assert.equal((await s.api('PUT', `${cardUrl('el_missing')}/html`, { html: 'x' })).status, 404);
    assert.equal(
      (await s.api('PUT', `/api/moodboards/bd_missing/elements/el_missing/html`, { html: 'x' })).status,
      404,
    );
    assert.equal((await s.api('POST', `${cardUrl('el_missing')}/html-changed`)).status, 404);
    assert.equal((await s.api('GET', `${cardUrl('el_missing')}/html/versions`)).status, 404);
    assert.equal((await s.api('PUT', `${cardUrl(text.body.id)}/html`, {})).status, 400, 'html is required');
  });

  it('never loses a version under concurrent PUTs, and the file holds the highest one', async () => {
    const el = await newCard('Concurrent');
    const bodies = Array.from({ length: 10 }, (_, i) => `<p>writer ${i}</p>`);
    const answers = await Promise.all(bodies.map((html) => s.api('PUT', `${cardUrl(el.id)}/html`, { html })));
    for (const a of answers) assert.equal(a.status, 200, a.text);
    const versions = answers.map((a) => a.body.htmlVersion as number).sort((a, b) => a - b);
    assert.deepEqual(versions, [2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 'each write got its own version');

    const list = await s.api('GET', `${cardUrl(el.id)}/html/versions`);
    assert.equal(list.status, 200);
    assert.equal(list.body.htmlVersion, 11);
    assert.deepEqual(
      list.body.versions.map((v: { version: number }) => v.version),
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
    );
    assert.deepEqual(
      list.body.versions.filter((v: { current: boolean }) => v.current).map((v: { version: number }) => v.version),
      [11],
    );

    const contents = new Set<string>();
    for (let n = 2; n <= 11; n++) contents.add((await s.api('GET', `${cardUrl(el.id)}/html/versions/${n}`)).body.html);
    assert.deepEqual([...contents].sort(), [...bodies].sort(), 'every written body is kept as exactly one version');
    const highest = (await s.api('GET', `${cardUrl(el.id)}/html/versions/11`)).body.html;
    assert.equal(await fsp.readFile(await fileOf(el.url), 'utf8'), highest);
    const answerOf11 = answers.find((a) => a.body.htmlVersion === 11)!;
    assert.equal(answerOf11.body.element.data.htmlVersion, 11);
  });

  it('html-changed records a direct edit as the next version; restore writes an old version back as a new one', async () => {
    const el = await newCard('Edited');
    await s.api('PUT', `${cardUrl(el.id)}/html`, { html: '<p>through the API</p>' });
    await fsp.writeFile(await fileOf(el.url), '<p>edited on disk</p>');
    const changed = await s.api('POST', `${cardUrl(el.id)}/html-changed`);
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.htmlVersion, 3);
    assert.equal(changed.body.element.data.htmlVersion, 3);
    assert.equal((await s.api('GET', `${cardUrl(el.id)}/html/versions/3`)).body.html, '<p>edited on disk</p>');

    const restored = await s.api('POST', `${cardUrl(el.id)}/html/versions/2/restore`);
    assert.equal(restored.status, 200, restored.text);
    assert.equal(restored.body.htmlVersion, 4);
    assert.equal(await fsp.readFile(await fileOf(el.url), 'utf8'), '<p>through the API</p>');
    assert.equal(
      (await s.api('GET', `${cardUrl(el.id)}/html/versions/3`)).body.html,
      '<p>edited on disk</p>',
      'older versions stay',
    );
    assert.equal(
      (await s.api('GET', `${cardUrl(el.id)}/html/versions/1`)).body.html.startsWith('<!doctype html>'),
      true,
    );

    assert.equal((await s.api('POST', `${cardUrl(el.id)}/html/versions/99/restore`)).status, 404);
    assert.equal((await s.api('GET', `${cardUrl(el.id)}/html/versions/0`)).status, 400);
  });

  it('recreates a deleted backing file on the next write', async () => {
    const el = await newCard('Gone');
    await fsp.rm(await fileOf(el.url));
    const res = await s.api('PUT', `${cardUrl(el.id)}/html`, { html: '<p>back</p>' });
    assert.equal(res.status, 200, res.text);
    assert.equal((await s.api('GET', el.url)).text, '<p>back</p>');
    const missing = await newCard('Missing');
    await fsp.rm(await fileOf(missing.url));
    assert.equal((await s.api('POST', `${cardUrl(missing.id)}/html-changed`)).status, 404);
  });

  it("a card never writes outside its own backing file: htmlUrl is the service's, other boards' files are refused", async () => {
    const other = await s.createBoard('Other');
    const photo = await s.upload(other, { name: 'photo.jpg', data: 'precious pixels' });
    const card = await newCard('Attacker');
    const patch = await s.api('PATCH', cardUrl(card.id), { data: { htmlUrl: photo.body.url } });
    assert.equal(patch.status, 400);
    assert.match(patch.body.error.message, /htmlUrl is managed by the service/);
    assert.equal((await s.api('PUT', `${cardUrl(card.id)}/html`, { html: '<p>pwned</p>' })).status, 200);
    assert.equal(await fsp.readFile(await fileOf(photo.body.url), 'utf8'), 'precious pixels');

    const foreignHtml = await s.upload(other, { name: 'theirs.html', data: '<p>theirs</p>' });
    const adopt = await s.api('POST', `/api/moodboards/${board}/elements`, { type: 'html', url: foreignHtml.body.url });
    assert.equal(adopt.status, 400);
    assert.match(adopt.body.error.message, /own board folder/);
  });

  it('a deleted backing file is not recreated through a symlinked folder that leads out of the board', async () => {
    const outside = await tempDir('bms-outside-');
    const linked = await s.createBoard('Linked');
    const dir = await s.service.ctx.media.boardDir(linked);
    await fsp.mkdir(path.join(dir, 'sub'));
    const up = await s.upload(linked, { name: 'card.html', data: '<p>v1</p>' });
    await fsp.rename(path.join(dir, 'card.html'), path.join(dir, 'sub', 'card.html'));
    const el = (
      await s.api('POST', `/api/moodboards/${linked}/elements`, { type: 'html', url: `/media/${linked}/sub/card.html` })
    ).body;
    assert.ok(el.id, JSON.stringify(el));
    assert.ok(up.body.url);
    await fsp.rm(path.join(dir, 'sub'), { recursive: true });
    await fsp.symlink(outside, path.join(dir, 'sub'));
    const put = await s.api('PUT', `/api/moodboards/${linked}/elements/${el.id}/html`, { html: '<p>escape</p>' });
    assert.equal(put.status, 400);
    assert.deepEqual(await fsp.readdir(outside), []);
    await fsp.rm(outside, { recursive: true, force: true });
  });
});
