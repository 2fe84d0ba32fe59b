import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../helpers/fixtures.js';
import { eventually, startService, type TestService } from '../helpers/service.js';

/**
 * Every file the card feature reads by a name from a request or a record stays inside its folder, links included:
 * the backing file (html-changed, the copy of the current version taken before a write), the version copies and
 * their folder. The outside file holds a secret no answer may contain.
 */
describe('html cards read and write only inside their folders (symlinks included)', () => {
  const SECRET = '<p>secret outside the media root</p>';
  let s: TestService;
  let board: string;
  let outside: string;
  let secretFile: string;

  const cardUrl = (id: string) => `/api/moodboards/${board}/elements/${id}`;
  const versionsDir = (id: string) => path.join(s.dataDir, 'html-versions', id);
  /** A card whose first version was kept, and the path of its backing file. */
  const newCard = async (name: string) => {
    const el = (await s.api('POST', `/api/moodboards/${board}/elements`, { type: 'html', name })).body;
    assert.ok(el.id, JSON.stringify(el));
    await eventually(
      async () => ((await s.api('GET', `${cardUrl(el.id)}/html/versions/1`)).status === 200 ? true : undefined),
      10_000,
      'version 1',
    );
    return { el, file: (await s.service.ctx.media.resolveUrl(el.url)).path };
  };
  const linkOut = async (at: string, target = secretFile) => {
    await fsp.rm(at, { recursive: true, force: true });
    await fsp.symlink(target, at);
  };
  const assertNoSecret = (text: string) =>
    assert.ok(!text.includes('secret outside'), `the outside file leaked: ${text}`);

  before(async () => {
    s = await startService();
    board = await s.createBoard('Containment');
    outside = await tempDir('bms-outside-');
    secretFile = path.join(outside, 'secret.html');
    await fsp.writeFile(secretFile, SECRET);
  });
  after(async () => {
    await s.close();
    await fsp.rm(outside, { recursive: true, force: true });
  });

  it('html-changed does not read a backing file that links out of the board', async () => {
    const { el, file } = await newCard('changed');
    await linkOut(file);
    const res = await s.api('POST', `${cardUrl(el.id)}/html-changed`);
    assert.equal(res.status, 404, res.text);
    assertNoSecret(res.text);
    const v2 = await s.api('GET', `${cardUrl(el.id)}/html/versions/2`);
    assert.equal(v2.status, 404, 'no version was made from the outside file');
    const list = await s.api('GET', `${cardUrl(el.id)}/html/versions`);
    assert.deepEqual(
      list.body.versions.map((v: { version: number }) => v.version),
      [1],
    );
    assert.equal(await fsp.readFile(secretFile, 'utf8'), SECRET, 'the outside file is untouched');
  });

  it('the copy of the current version taken before a write never comes from a link out', async () => {
    const { el, file } = await newCard('before-write');
    // Version 1's copy is gone (as after a crash), so the next write copies the backing file first.
    await fsp.rm(path.join(versionsDir(el.id), '1.html'));
    await linkOut(file);
    const put = await s.api('PUT', `${cardUrl(el.id)}/html`, { html: '<p>v2</p>' });
    assert.equal(put.status, 200, put.text);
    const v1 = await s.api('GET', `${cardUrl(el.id)}/html/versions/1`);
    assert.equal(v1.status, 404, v1.text);
    assertNoSecret(v1.text);
    assert.equal(await fsp.readFile(secretFile, 'utf8'), SECRET, 'the write replaced the link, not the file it named');
    assert.equal((await fsp.lstat(file)).isSymbolicLink(), false);
  });

  it('a version copy that links out is neither read, listed nor restored', async () => {
    const { el } = await newCard('version-link');
    await linkOut(path.join(versionsDir(el.id), '1.html'));
    const read = await s.api('GET', `${cardUrl(el.id)}/html/versions/1`);
    assert.equal(read.status, 404);
    assertNoSecret(read.text);
    const restore = await s.api('POST', `${cardUrl(el.id)}/html/versions/1/restore`);
    assert.equal(restore.status, 404);
    const list = await s.api('GET', `${cardUrl(el.id)}/html/versions`);
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.versions, [], 'the linked copy is not listed (nor its size)');
  });

  it("a card's version folder that links out is neither read nor written", async () => {
    const { el } = await newCard('folder-link');
    const foreign = path.join(outside, 'versions');
    await fsp.mkdir(foreign);
    await fsp.writeFile(path.join(foreign, '1.html'), SECRET);
    await linkOut(versionsDir(el.id), foreign);
    const read = await s.api('GET', `${cardUrl(el.id)}/html/versions/1`);
    assert.equal(read.status, 404);
    assertNoSecret(read.text);
    const put = await s.api('PUT', `${cardUrl(el.id)}/html`, { html: '<p>into the link?</p>' });
    assert.equal(put.status, 409, put.text);
    assert.equal(put.body.error.code, 'unsafe_folder');
    assert.deepEqual(await fsp.readdir(foreign), ['1.html'], 'nothing was written outside');
  });
});
