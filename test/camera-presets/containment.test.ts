import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../helpers/fixtures.js';
import { startService, type TestService } from '../helpers/service.js';

/** Preset files are found by an id from the request: reads, writes and deletes stay inside the media root, links included. */
describe('camera presets stay inside the media root (symlinks included)', () => {
  let s: TestService;
  let outside: string;
  let presetsDir: string;
  const foreignPreset = (id: string) =>
    JSON.stringify({
      id,
      name: 'secret outside',
      description: '',
      duration: null,
      keyframes: [],
      base: { a: 1 },
      updated_at: '2030-01-01T00:00:00.000Z',
    });

  before(async () => {
    s = await startService();
    outside = await tempDir('bms-outside-');
    presetsDir = path.join(s.dataDir, 'media', 'camera-presets');
  });
  after(async () => {
    await s.close();
    await fsp.rm(outside, { recursive: true, force: true });
  });

  it('a preset file that links out is not listed, not taken as the previous version, and only the link is replaced or deleted', async () => {
    const secret = path.join(outside, 'linked.json');
    await fsp.writeFile(secret, foreignPreset('linked'));
    await fsp.mkdir(presetsDir, { recursive: true });
    await fsp.symlink(secret, path.join(presetsDir, 'linked.json'));

    const list = await s.api('GET', '/api/camera-presets');
    assert.equal(list.status, 200);
    assert.ok(!list.text.includes('secret outside'), list.text);

    const saved = await s.api('POST', '/api/camera-presets', { id: 'linked', name: 'mine', base: { b: 2 } });
    assert.equal(saved.status, 201, 'the linked file is not an existing preset');
    assert.equal(
      (await fsp.lstat(path.join(presetsDir, 'linked.json'))).isSymbolicLink(),
      false,
      'the link was replaced',
    );
    assert.equal(await fsp.readFile(secret, 'utf8'), foreignPreset('linked'), 'the outside file is untouched');

    await fsp.rm(path.join(presetsDir, 'linked.json'));
    await fsp.symlink(secret, path.join(presetsDir, 'linked.json'));
    assert.equal((await s.api('DELETE', '/api/camera-presets/linked')).status, 204);
    assert.equal(await fsp.readFile(secret, 'utf8'), foreignPreset('linked'), 'delete removed the link only');
  });

  it('a presets folder that links out is neither listed, written nor deleted from', async () => {
    const foreign = path.join(outside, 'presets');
    await fsp.mkdir(foreign);
    await fsp.writeFile(path.join(foreign, 'theirs.json'), foreignPreset('theirs'));
    await fsp.rm(presetsDir, { recursive: true, force: true });
    await fsp.symlink(foreign, presetsDir);

    const list = await s.api('GET', '/api/camera-presets');
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.presets, []);
    const saved = await s.api('POST', '/api/camera-presets', { name: 'into the link?', base: { b: 1 } });
    assert.equal(saved.status, 409, saved.text);
    assert.equal((await s.api('DELETE', '/api/camera-presets/theirs')).status, 404);
    assert.deepEqual(await fsp.readdir(foreign), ['theirs.json'], 'nothing was written or deleted outside');
  });
});
