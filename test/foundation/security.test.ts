import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { logCapture, startService, type TestService } from '../helpers/service.js';
import { rawRequest } from '../helpers/raw-http.js';

describe('Host and Origin guard (no token)', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService({ ALLOWED_ORIGINS: 'app://board,http://localhost:5173' });
  });
  after(() => svc.close());

  test('loopback Host names pass; anything else is 403 (DNS rebinding)', async () => {
    for (const host of [`127.0.0.1:${svc.port}`, `localhost:${svc.port}`, `[::1]:${svc.port}`, 'localhost']) {
      assert.equal((await rawRequest(svc.port, 'GET', '/api/moodboards', { host })).status, 200, host);
    }
    for (const host of [`evil.example:${svc.port}`, `192.168.1.10:${svc.port}`, `localhost.evil.example:${svc.port}`]) {
      const r = await rawRequest(svc.port, 'GET', '/api/moodboards', { host });
      assert.equal(r.status, 403, host);
      assert.equal(r.json().error.code, 'forbidden_host');
    }
  });

  test('a foreign Origin cannot read, upload or post; null is foreign too', async () => {
    const board = await svc.createBoard();
    for (const origin of ['http://evil.example', 'null', `http://localhost:${svc.port + 1}`]) {
      const read = await rawRequest(svc.port, 'GET', '/api/moodboards', { origin });
      assert.equal(read.status, 403, origin);
      assert.equal(read.json().error.code, 'forbidden_origin');
      assert.equal(read.headers['access-control-allow-origin'], undefined);
      const upload = await rawRequest(
        svc.port,
        'POST',
        '/api/upload',
        { origin, 'content-type': 'multipart/form-data; boundary=x' },
        `--x\r\nContent-Disposition: form-data; name="board_id"\r\n\r\n${board}\r\n--x\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nowned\r\n--x--\r\n`,
      );
      assert.equal(upload.status, 403, origin);
      const media = await rawRequest(svc.port, 'GET', `/media/${board}/a.txt`, { origin });
      assert.equal(media.status, 403, origin);
    }
    assert.equal((await svc.api('GET', `/api/moodboards/${board}`)).body.elements.length, 0);
  });

  test('a cross-site request without a trusted Origin (an <img> or link on a web page) cannot reach the API', async () => {
    for (const site of ['cross-site', 'same-site']) {
      const r = await rawRequest(svc.port, 'GET', '/api/terminal-bridge/to-terminal?wait=0', {
        'sec-fetch-site': site,
        'sec-fetch-mode': 'no-cors',
      });
      assert.equal(r.status, 403, site);
      assert.equal(r.json().error.code, 'forbidden_origin');
    }
    for (const site of ['same-origin', 'none']) {
      assert.equal(
        (await rawRequest(svc.port, 'GET', '/api/moodboards', { 'sec-fetch-site': site })).status,
        200,
        site,
      );
    }
    const allowedApp = await rawRequest(svc.port, 'GET', '/api/moodboards', {
      'sec-fetch-site': 'cross-site',
      origin: 'app://board',
    });
    assert.equal(allowedApp.status, 200);
    const board = await svc.createBoard();
    const up = await svc.upload(board, { name: 'pic.txt', data: 'shown, never read' });
    const embedded = await rawRequest(svc.port, 'GET', up.body.url, {
      'sec-fetch-site': 'cross-site',
      'sec-fetch-dest': 'image',
    });
    assert.equal(embedded.status, 200, '/media stays embeddable (the page cannot read it)');
  });

  test("the service's own origin and ALLOWED_ORIGINS pass, with CORS headers and preflight", async () => {
    const own = await rawRequest(svc.port, 'GET', '/api/moodboards', {
      origin: `http://127.0.0.1:${svc.port}`,
      host: `127.0.0.1:${svc.port}`,
    });
    assert.equal(own.status, 200);
    const app = await rawRequest(svc.port, 'GET', '/api/moodboards', { origin: 'app://board' });
    assert.equal(app.status, 200);
    assert.equal(app.headers['access-control-allow-origin'], 'app://board');
    const pre = await rawRequest(svc.port, 'OPTIONS', '/api/upload', {
      origin: 'http://localhost:5173',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], 'http://localhost:5173');
    assert.match(String(pre.headers['access-control-allow-methods']), /POST/);
  });
});

describe('API token', () => {
  const token = 'test-token-0123456789abcdef';
  let svc: TestService;
  before(async () => {
    svc = await startService({ API_TOKEN: token });
  });
  after(() => svc.close());

  test('every request needs the bearer token: 401 without or with a wrong one', async () => {
    const none = await rawRequest(svc.port, 'GET', '/api/moodboards');
    assert.equal(none.status, 401);
    assert.equal(none.json().error.code, 'unauthorized');
    assert.equal(none.headers['www-authenticate'], 'Bearer');
    assert.equal(
      (await rawRequest(svc.port, 'GET', '/api/moodboards', { authorization: 'Bearer wrong-token-000000000' })).status,
      401,
    );
    assert.equal((await rawRequest(svc.port, 'GET', '/api/health', { authorization: `Basic ${token}` })).status, 401);
    assert.equal(
      (await rawRequest(svc.port, 'GET', '/api/moodboards', { authorization: `Bearer ${token}` })).status,
      200,
    );
  });

  test('with a token, a network Host is accepted; /media takes ?token= for <video src>', async () => {
    const auth = { authorization: `Bearer ${token}` };
    assert.equal(
      (await rawRequest(svc.port, 'GET', '/api/moodboards', { ...auth, host: '192.168.1.20:4100' })).status,
      200,
    );
    const created = await rawRequest(
      svc.port,
      'POST',
      '/api/moodboards',
      { ...auth, 'content-type': 'application/json' },
      '{"name":"t"}',
    );
    const board = created.json().id;
    const up = await rawRequest(
      svc.port,
      'POST',
      '/api/upload',
      { ...auth, 'content-type': 'multipart/form-data; boundary=x' },
      `--x\r\nContent-Disposition: form-data; name="board_id"\r\n\r\n${board}\r\n--x\r\nContent-Disposition: form-data; name="file"; filename="v.txt"\r\n\r\nclip\r\n--x--\r\n`,
    );
    assert.equal(up.status, 200);
    const url = up.json().url;
    assert.equal((await rawRequest(svc.port, 'GET', url)).status, 401);
    const viaQuery = await rawRequest(svc.port, 'GET', `${url}?token=${token}`);
    assert.equal(viaQuery.status, 200);
    assert.equal(viaQuery.body.toString(), 'clip');
    assert.equal(
      (await rawRequest(svc.port, 'GET', `/api/moodboards?token=${token}`)).status,
      401,
      '?token= is only for /media',
    );
  });
});

test('the token never reaches the request log', async () => {
  const token = 'log-token-0123456789abcdef';
  const log = logCapture();
  const svc = await startService({ API_TOKEN: token, LOG_LEVEL: 'info' }, { logStream: log.stream });
  try {
    await rawRequest(svc.port, 'GET', `/media/missing.txt?token=${token}&x=1`);
    await rawRequest(svc.port, 'GET', '/api/moodboards', { authorization: `Bearer ${token}` });
  } finally {
    await svc.close();
  }
  const urls = log
    .lines()
    .map((l) => (l.req as { url?: string } | undefined)?.url)
    .filter(Boolean);
  assert.ok(urls.includes('/media/missing.txt?token=[redacted]&x=1'), JSON.stringify(urls));
  assert.ok(!JSON.stringify(log.lines()).includes(token));
});
