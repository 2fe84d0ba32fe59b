import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startLocalWorker, type LocalWorker } from '../../worker/local.js';
import { startService, type TestService } from '../helpers/service.js';
import { EventStream } from './stream.js';

const TOKEN = 'events-share-token-0123456789';

/** A live share on the share worker (run locally on workerd) announces each state: uploading, complete, failed, deleted. */
describe('share.updated for a live share', () => {
  let worker: LocalWorker | undefined;
  let svc: TestService;
  before(async () => {
    worker = await startLocalWorker({ port: 0, token: TOKEN });
    svc = await startService({ SHARE_WORKER_URL: worker.url, SHARE_WORKER_TOKEN: TOKEN });
  });
  after(async () => {
    await svc?.close();
    await worker?.close();
  });

  it('uploading then complete, deleted, and failed when the worker is gone', async () => {
    const board = await svc.createBoard('Shared');
    await svc.api('POST', `/api/moodboards/${board}/elements`, { type: 'text', name: 'first', data: { text: 'a' } });
    const s = await EventStream.open(svc.baseUrl, `?board_id=${board}&types=share.updated`);
    const state = async () => {
      const e = await s.expect('share.updated');
      assert.equal(e.data.board_id, board);
      return e.data.data.share;
    };
    try {
      const shared = await svc.api('POST', `/api/moodboards/${board}/share`, { kind: 'live' });
      assert.equal(shared.status, 200, shared.text);
      const uploading = await state();
      assert.deepEqual(
        [uploading.state, uploading.kind, uploading.share_id],
        ['uploading', 'live', shared.body.share_id],
      );
      const complete = await state();
      assert.equal(complete.state, 'complete');
      assert.equal(complete.url, shared.body.url);
      assert.equal((await fetch(complete.url)).status, 200, 'the page is up when its event arrives');

      const ended = await svc.api('DELETE', `/api/moodboards/${board}/share`);
      assert.equal(ended.status, 200, ended.text);
      assert.equal((await state()).state, 'deleted');
      assert.equal((await fetch(complete.url)).status, 404);

      await svc.api('POST', `/api/moodboards/${board}/share`, { kind: 'live' });
      assert.deepEqual([(await state()).state, (await state()).state], ['uploading', 'complete']);
      await svc.api('POST', `/api/moodboards/${board}/elements`, { type: 'text', name: 'second', data: { text: 'b' } });
      await worker!.close();
      worker = undefined;
      const retried = await svc.api('PUT', `/api/moodboards/${board}/share`, {});
      assert.ok(retried.status >= 500, retried.text);
      assert.deepEqual([(await state()).state, (await state()).state], ['uploading', 'failed']);
    } finally {
      s.close();
    }
  });
});
