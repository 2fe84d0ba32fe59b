import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startService, type TestService } from '../helpers/service.js';
import { rawRequest } from '../helpers/raw-http.js';

/**
 * Older browsers load an <img> or follow a link of a foreign page with neither Origin nor Sec-Fetch-Site, but with
 * the page in Referer: such a request gets the same 403 as a foreign Origin, so it cannot consume a bridge queue.
 */
describe('a foreign Referer without Origin', () => {
  let svc: TestService;
  let board: string;
  before(async () => {
    svc = await startService({ ALLOWED_ORIGINS: 'app://board,http://localhost:5173' });
    board = await svc.createBoard();
  });
  after(() => svc.close());

  test('is refused like a foreign Origin and consumes nothing; own, allowed and unparseable Referers pass', async () => {
    assert.equal(
      (await svc.api('POST', '/api/terminal-bridge/session', { session_id: 'pty-ref', board_id: board, enabled: true }))
        .status,
      200,
    );
    assert.equal((await svc.api('POST', '/api/terminal-bridge/chat', { chat_id: 7, enabled: true })).status, 200);
    const queued = await svc.api('POST', '/api/terminal-bridge/to-terminal', { kind: 'text', text: 'rm -rf ~' });
    assert.equal(queued.body.queued, true, queued.text);

    for (const referer of [
      'http://evil.example/page.html',
      `http://localhost:${svc.port + 1}/`,
      'https://127.0.0.1.evil.example/',
    ]) {
      const r = await rawRequest(svc.port, 'GET', '/api/terminal-bridge/to-terminal?wait=0', { referer });
      assert.equal(r.status, 403, referer);
      assert.equal(r.json().error.code, 'forbidden_origin', referer);
    }
    const own = await rawRequest(svc.port, 'GET', '/api/moodboards', {
      referer: `http://127.0.0.1:${svc.port}/api/docs/`,
    });
    assert.equal(own.status, 200, 'the service’s own pages (the API docs) pass');
    for (const referer of ['app://board/index.html', 'http://localhost:5173/editor', 'not a url']) {
      assert.equal((await rawRequest(svc.port, 'GET', '/api/moodboards', { referer })).status, 200, referer);
    }

    const items = await svc.api('GET', '/api/terminal-bridge/to-terminal?wait=0');
    assert.equal(items.body.items.length, 1, 'the refused requests consumed nothing');
  });

  test('/media stays embeddable, as with Sec-Fetch-Site', async () => {
    const up = await svc.upload(board, { name: 'pic.txt', data: 'shown' });
    const r = await rawRequest(svc.port, 'GET', up.body.url, { referer: 'http://evil.example/page.html' });
    assert.equal(r.status, 200);
  });
});
