// Windows file semantics that can be brought about on Linux: busy files (injected), file systems without hard links
// (injected EISDIR), a realpath that fails on the drive (injected), links to dotfiles (real), the board folder moved
// before its record goes (injected busy folder, through the HTTP API).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it, mock, test } from 'node:test';
import { writeNewFile } from '../../src/files/atomic.js';
import { resolveInside } from '../../src/files/media-root.js';
import { isBusy, removeRetrying, renameRetrying } from '../../src/files/retry.js';
import { startService } from '../helpers/service.js';

const fault = (code: string) => Object.assign(new Error(`${code}: injected`), { code });

/** A rename that fails with `code` `times` times, then renames for real; counts its calls. */
function flakyRename(code: string, times: number) {
  let calls = 0;
  return {
    calls: () => calls,
    rename: async (a: string, b: string) => {
      calls++;
      if (calls <= times) throw fault(code);
      await fsp.rename(a, b);
    },
  };
}

describe('renames and deletes wait out a busy file', () => {
  it('EBUSY twice, then the rename goes through', async () => {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-retry-'));
    await fsp.writeFile(path.join(dir, 'a'), 'x');
    const flaky = flakyRename('EBUSY', 2);
    await renameRetrying(path.join(dir, 'a'), path.join(dir, 'b'), { ops: flaky, delayMs: 1 });
    assert.equal(flaky.calls(), 3);
    assert.equal(await fsp.readFile(path.join(dir, 'b'), 'utf8'), 'x');
    await fsp.rm(dir, { recursive: true });
  });

  it('EPERM and EACCES are a held file on Windows and retried there; elsewhere they are final at once', async () => {
    for (const code of ['EPERM', 'EACCES', 'ENOTEMPTY']) {
      const windows = flakyRename(code, 100);
      await assert.rejects(renameRetrying('a', 'b', { ops: windows, delayMs: 1, platform: 'win32' }), { code });
      assert.equal(windows.calls(), 6, `${code} on win32: tried 6 times, then given up`);
      const linux = flakyRename(code, 100);
      await assert.rejects(renameRetrying('a', 'b', { ops: linux, delayMs: 1, platform: 'linux' }), { code });
      assert.equal(linux.calls(), 1, `${code} on linux: not retried`);
    }
    assert.ok(isBusy(fault('EBUSY'), 'linux'));
    assert.ok(!isBusy(fault('ENOENT'), 'win32'));
  });

  it('a delete retries the same way and removes a folder with its contents', async () => {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-retry-'));
    await fsp.mkdir(path.join(dir, 'sub'));
    await fsp.writeFile(path.join(dir, 'sub', 'f'), 'x');
    let calls = 0;
    const rm = async (t: string, o: { recursive: boolean; force: boolean }) => {
      if (++calls === 1) throw fault('EBUSY');
      await fsp.rm(t, o);
    };
    await removeRetrying(dir, { ops: { rm }, delayMs: 1 });
    assert.equal(calls, 2);
    assert.equal(fs.existsSync(dir), false);
  });
});

test('a file system without hard links (exFAT answers EISDIR) still gets the file under its name, no temp left', async (t) => {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-exfat-'));
  t.after(() => fsp.rm(dir, { recursive: true, force: true }));
  const link = mock.method(fsp, 'link', async () => {
    throw fault('EISDIR');
  });
  try {
    assert.equal(await writeNewFile(dir, 'clip.mp4', 'one'), 'clip.mp4');
    assert.equal(await writeNewFile(dir, 'clip.mp4', 'two'), 'clip (1).mp4', 'never over an existing file');
    assert.ok(link.mock.callCount() >= 2);
  } finally {
    link.mock.restore();
  }
  assert.deepEqual((await fsp.readdir(dir)).sort(), ['clip (1).mp4', 'clip.mp4']);
  assert.equal(await fsp.readFile(path.join(dir, 'clip.mp4'), 'utf8'), 'one');
});

test('the dotfile rule holds on the resolved path: a link (as an 8.3 name would) leading to .git is not read', async (t) => {
  const base = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-dot-'));
  t.after(() => fsp.rm(base, { recursive: true, force: true }));
  await fsp.mkdir(path.join(base, '.git'));
  await fsp.writeFile(path.join(base, '.git', 'config'), 'secret');
  await fsp.writeFile(path.join(base, 'photo.png'), 'png');
  await fsp.symlink(path.join(base, '.git'), path.join(base, 'GIT1'));
  assert.equal(await resolveInside(base, ['GIT1', 'config']), undefined);
  assert.equal(await resolveInside(base, ['photo.png']), path.join(await fsp.realpath(base), 'photo.png'));
});

test('a realpath that fails for the drive (EISDIR on RAM disks) falls back to resolving the links in JavaScript', async (t) => {
  const base = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-ramdisk-'));
  t.after(() => fsp.rm(base, { recursive: true, force: true }));
  await fsp.writeFile(path.join(base, 'a.png'), 'png');
  await fsp.symlink(path.join(base, 'a.png'), path.join(base, 'link.png'));
  const native = mock.method(fsp, 'realpath', async () => {
    throw fault('EISDIR');
  });
  try {
    assert.equal(await resolveInside(base, ['link.png']), path.join(fs.realpathSync(base), 'a.png'));
    assert.ok(native.mock.callCount() >= 1, 'the native call was tried first');
  } finally {
    native.mock.restore();
  }
});

test('deleting a board moves its folder first: a folder held by another program leaves the board whole (409)', async (t) => {
  const svc = await startService();
  t.after(() => svc.close());
  const id = await svc.createBoard('held');
  assert.equal((await svc.upload(id, { name: 'a.txt', data: 'hello' }, { addToBoard: true })).status, 200);
  const folder = path.join(svc.dataDir, 'media', 'admin', id);
  // The folder is busy for longer than the retries wait.
  const rename = mock.method(fsp, 'rename', async () => {
    throw fault('EBUSY');
  });
  let res;
  try {
    res = await svc.api('DELETE', `/api/moodboards/${id}`);
  } finally {
    rename.mock.restore();
  }
  assert.equal(res.status, 409, res.text);
  assert.equal(res.body.error.code, 'folder_busy');
  assert.ok(rename.mock.callCount() >= 6, 'retried before giving up');
  assert.equal((await svc.api('GET', `/api/moodboards/${id}`)).status, 200, 'the board is still there');
  assert.ok(fs.existsSync(path.join(folder, 'a.txt')), 'with its file');
  // Once the file is let go, the delete goes through and the folder is in the trash.
  assert.equal((await svc.api('DELETE', `/api/moodboards/${id}`)).status, 204);
  assert.equal(fs.existsSync(folder), false);
  const trash = await fsp.readdir(path.join(svc.dataDir, 'trash'));
  assert.equal(trash.filter((n) => n.startsWith(id)).length, 1);
});
