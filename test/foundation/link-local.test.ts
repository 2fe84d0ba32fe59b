import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import net from 'node:net';
import { isForbiddenAddress } from '../../src/net/address-policy.js';
import { OutboundHttp } from '../../src/net/outbound.js';
import { startPolicyProxy } from '../../src/net/proxy.js';
import { ServiceClient } from '../../src/workers/service-client.js';
import { writeFakeTool } from '../helpers/fake-tool.js';
import { tempDir } from '../helpers/fixtures.js';
import { startService, waitForJob, type TestService } from '../helpers/service.js';
import { startReplicateDouble, type ReplicateDouble } from '../helpers/ai-doubles/replicate.js';

/**
 * Stands in for yt-dlp: reads the page through its --proxy, then fetches each src twice through it, as a plain
 * request and through a CONNECT tunnel (how yt-dlp reaches https), keeping what arrives (status 200 only).
 */
const YTDLP_THROUGH_PROXY = `import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
const args = process.argv.slice(2);
if (args[0] === '--version') {
  console.log('2099.01.01');
  process.exit(0);
}
const out = args[args.indexOf('-P') + 1];
if (!args.includes('--proxy')) process.exit(4);
const proxy = new URL(args[args.indexOf('--proxy') + 1]);
// The credentials in the proxy's URL, as curl and yt-dlp send them.
const auth = {
  'proxy-authorization':
    'Basic ' + Buffer.from(decodeURIComponent(proxy.username) + ':' + decodeURIComponent(proxy.password)).toString('base64'),
};
const ok = (res) =>
  new Promise((resolve) => {
    const chunks = [];
    res.on('data', (c) => chunks.push(c));
    res.on('end', () => resolve(res.statusCode === 200 ? Buffer.concat(chunks) : undefined));
    res.on('error', () => resolve(undefined));
  });
// An absolute URL in the request line: how a client asks a forward proxy.
const plain = (url) =>
  new Promise((resolve) =>
    http
      .get({ host: proxy.hostname, port: proxy.port, path: url, headers: { host: new URL(url).host, ...auth } }, (res) =>
        ok(res).then(resolve),
      )
      .on('error', () => resolve(undefined)),
  );
const tunnel = (url) =>
  new Promise((resolve) => {
    const u = new URL(url);
    const req = http.request({
      host: proxy.hostname,
      port: proxy.port,
      method: 'CONNECT',
      path: u.hostname + ':' + (u.port || 80),
      headers: auth,
    });
    req.on('connect', (res, socket) => {
      if (res.statusCode !== 200) return socket.destroy(), resolve(undefined);
      http
        .get({ createConnection: () => socket, path: u.pathname + u.search, headers: { host: u.host } }, (r) =>
          ok(r).then(resolve),
        )
        .on('error', () => resolve(undefined));
    });
    req.on('error', () => resolve(undefined));
    req.end();
  });
const page = (await plain(args.at(-1)))?.toString() ?? '';
let n = 0;
for (const [, src] of page.matchAll(/src="([^"]*)"/g)) {
  n++;
  const direct = await plain(src);
  if (direct) fs.writeFileSync(path.join(out, n + '-plain.png'), direct);
  const tunnelled = await tunnel(src);
  if (tunnelled) fs.writeFileSync(path.join(out, n + '-tunnel.png'), tunnelled);
}
`;

/**
 * A stand-in resolver: each test name answers its list in turn (the last repeats); `all` look-ups get every address
 * of the current answer. Every look-up is recorded. Nothing reaches the machine's DNS.
 */
function standInResolver(names: Record<string, string[][]>) {
  const asked: string[] = [];
  const seen = new Map<string, number>();
  const lookup: LookupFunction = (host, options, callback) => {
    asked.push(host);
    const answers = names[host];
    if (!answers) {
      const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return callback(err, '', 0);
    }
    const n = seen.get(host) ?? 0;
    seen.set(host, n + 1);
    const current = answers[Math.min(n, answers.length - 1)];
    const all = current.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    if (options.all) callback(null, all);
    else callback(null, all[0].address, all[0].family);
  };
  return { lookup, asked };
}

const FORBIDDEN_URLS = [
  'http://169.254.169.254/latest/meta-data/',
  'http://169.254.0.1:8080/x.png',
  'http://2852039166/latest/meta-data/', // decimal
  'http://0251.0376.0251.0376/', // octal
  'http://0xa9fea9fe/', // hex
  'http://0xa9.0xfe.0xa9.0xfe/', // hex parts
  'http://169.254.43518/', // short form
  'http://169.254.169.254./', // trailing dot
  'http://[::ffff:169.254.169.254]/', // IPv4-mapped
  'http://[::ffff:a9fe:a9fe]/', // IPv4-mapped, hex
  'http://[::169.254.169.254]/', // IPv4-compatible
  'http://[64:ff9b::169.254.169.254]/', // NAT64
  'http://[fe80::1]/',
  'http://[FE80::a:b:c:d]:8080/',
  'http://[fd00:ec2::254]/latest/meta-data/',
  'http://100.100.100.200/latest/meta-data/',
  'https://169.254.169.254/',
];

describe('server-side fetches never reach link-local or metadata addresses', () => {
  let t: TestService;
  let board: string;
  let server: http.Server;
  let port: number;
  let png: Buffer;
  const served: string[] = [];
  const resolver = standInResolver({
    'meta.test': [['169.254.169.254']],
    'meta6.test': [['fe80::1']],
    'mapped.test': [['::ffff:169.254.169.254']],
    'aws6.test': [['fd00:ec2::254']],
    'mixed.test': [['127.0.0.1', '169.254.169.254']],
    'nas.test': [['127.0.0.1']],
    'rebind.test': [['127.0.0.1'], ['169.254.169.254']],
    'rebind2.test': [['127.0.0.1'], ['169.254.169.254']],
    'rebind3.test': [['127.0.0.1'], ['169.254.169.254']],
  });
  /** Pages for the stand-in yt-dlp: each `src` is a media file it fetches. */
  const pages: Record<string, (p: number) => string[]> = {
    '/post-ok': (p) => [`http://nas.test:${p}/image.png`],
    '/post-bad': (p) => [
      `http://nas.test:${p}/image.png`,
      `http://meta.test:${p}/image.png`,
      `http://127.0.0.1:${p}/to?u=${encodeURIComponent('http://169.254.169.254/')}`,
    ],
    '/post-https': () => ['https://meta.test/latest/meta-data/'],
  };

  before(async () => {
    png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#3366cc' } })
      .png()
      .toBuffer();
    server = http.createServer((req, res) => {
      served.push(`${req.headers.host} ${req.url}`);
      const url = new URL(req.url!, 'http://x');
      if (url.pathname === '/to') {
        res.writeHead(302, { location: url.searchParams.get('u')! }).end();
      } else if (url.pathname === '/bounce') {
        // A new connection for the next hop, so its name is resolved again.
        res.writeHead(302, { location: '/image.png', connection: 'close' }).end();
      } else if (pages[url.pathname]) {
        const body = pages[url.pathname](port).map((src) => `<img src="${src}">`);
        res.writeHead(200, { 'content-type': 'text/html', connection: 'close' }).end(body.join('\n'));
      } else if (url.pathname === '/image.png') {
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length, connection: 'close' }).end(png);
      } else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    t = await startService({}, { lookup: resolver.lookup });
    board = await t.createBoard();
  });
  after(async () => {
    await t.close();
    server.close();
  });

  const download = (url: string, extra: Record<string, unknown> = {}) =>
    t.api('POST', '/api/download', { board_id: board, url, ...extra });
  const refused = (res: { status: number; body: any; text: string }, host: string) => {
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'forbidden_address', res.text);
    assert.ok(res.body.error.message.includes(host.replace(/^\[(.*)\]$/, '$1')), res.body.error.message);
  };

  it('the policy: link-local, metadata and their IPv6 forms; loopback, LAN and public addresses pass', () => {
    for (const a of [
      '169.254.169.254',
      '169.254.0.0',
      '169.254.255.255',
      '100.100.100.200',
      'fe80::1',
      'febf:ffff::1',
      'fe80::1%eth0',
      'fd00:ec2::254',
      '::ffff:169.254.169.254',
      '::ffff:a9fe:a9fe',
      '::ffff:0:169.254.1.1',
      '::169.254.169.254',
      '64:ff9b::a9fe:a9fe',
      '::ffff:100.100.100.200',
    ])
      assert.equal(isForbiddenAddress(a), true, a);
    for (const a of [
      '127.0.0.1',
      '::1',
      '10.0.0.5',
      '192.168.1.10',
      '172.16.0.1',
      '100.64.0.1',
      '100.100.100.201',
      '169.253.255.255',
      '169.255.0.0',
      'fec0::1',
      'fd00::1',
      'fd00:ec2::253',
      '::ffff:192.168.1.10',
      '8.8.8.8',
      '2001:db8::1',
      'meta.test',
    ])
      assert.equal(isForbiddenAddress(a), false, a);
  });

  it('refuses every spelling of such an address in the URL with 400 forbidden_address, before any look-up', async () => {
    const before = resolver.asked.length;
    for (const url of FORBIDDEN_URLS) {
      const res = await download(url);
      refused(res, new URL(url).hostname);
      // Asked as a job too: refused before one is queued.
      const queued = await download(url, { async: true });
      assert.equal(queued.status, 400, queued.text);
    }
    assert.equal(resolver.asked.length, before, 'no name was resolved');
    const elements = (await t.api('GET', `/api/moodboards/${board}`)).body.elements;
    assert.equal(elements.length, 0);
  });

  it('refuses a redirect hop to such an address; only the first hop reached the server', async () => {
    for (const target of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[fe80::1]/',
      'http://[::ffff:169.254.169.254]/',
      'http://2852039166/',
      `http://meta.test:${port}/image.png`,
    ]) {
      served.length = 0;
      const res = await download(`http://127.0.0.1:${port}/to?u=${encodeURIComponent(target)}`);
      refused(res, new URL(target).hostname);
      assert.equal(served.length, 1, served.join(', '));
    }
  });

  it('refuses a name that resolves to such an address when it connects; loopback names still download', async () => {
    for (const name of ['meta.test', 'meta6.test', 'mapped.test', 'aws6.test', 'mixed.test']) {
      served.length = 0;
      const res = await download(`http://${name}:${port}/image.png`);
      refused(res, name);
      assert.ok(resolver.asked.includes(name), `${name} was resolved by the connection`);
      assert.equal(served.length, 0, `nothing reached a server for ${name}`);
    }
    const ok = await download(`http://nas.test:${port}/image.png`);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.elements[0].type, 'image');
  });

  it('checks the address each connection resolves: a name rebound to link-local between hops is refused', async () => {
    served.length = 0;
    const from = resolver.asked.length;
    const res = await download(`http://rebind.test:${port}/bounce`);
    refused(res, 'rebind.test');
    // The first connection was to 127.0.0.1 and answered; the second resolved again and was refused.
    assert.deepEqual(served, [`rebind.test:${port} /bounce`]);
    assert.deepEqual(resolver.asked.slice(from), ['rebind.test', 'rebind.test']);
  });

  it('a download job fails with the same code', async () => {
    const res = await download(`http://meta.test:${port}/image.png`, { async: true });
    assert.equal(res.status, 202, res.text);
    const job = await waitForJob(t, res.body.job_id, { timeoutMs: 20_000 });
    assert.deepEqual([job.status, job.error_code], ['error', 'forbidden_address']);
    // A later request for the rebinding name connects again (its first hop was allowed) and is refused.
    const again = await download(`http://rebind2.test:${port}/image.png`);
    assert.equal(again.status, 200, again.text);
    const rebound = await download(`http://rebind2.test:${port}/image.png`);
    refused(rebound, 'rebind2.test');
  });

  it('resolve-media refuses the same addresses', async () => {
    const base = '/api/integrations/motion-editor/resolve-media';
    refused(
      await t.api('POST', base, { board_id: board, url: 'http://[::ffff:169.254.169.254]/' }),
      '::ffff:a9fe:a9fe',
    );
    refused(await t.api('POST', base, { board_id: board, url: `http://meta.test:${port}/x.png` }), 'meta.test');
    refused(
      await t.api('POST', base, {
        board_id: board,
        url: `http://127.0.0.1:${port}/to?u=${encodeURIComponent('http://169.254.169.254/')}`,
      }),
      '169.254.169.254',
    );
  });

  it('yt-dlp connects only through the policy: the media a page names, plain or tunnelled, and its own page again', async () => {
    const fake = await writeFakeTool(await tempDir(), 'yt-dlp', YTDLP_THROUGH_PROXY);
    const y = await startService({ YTDLP_PATH: fake }, { lookup: resolver.lookup });
    try {
      const b = await y.createBoard('pages');
      const ok = await y.api('POST', '/api/download', { board_id: b, url: `http://nas.test:${port}/post-ok` });
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(
        ok.body.elements.map((e: { type: string }) => e.type),
        ['image', 'image'],
      );
      served.length = 0;
      const bad = await y.api('POST', '/api/download', { board_id: b, url: `http://nas.test:${port}/post-bad` });
      refused(bad, 'meta.test');
      assert.ok(!served.some((line) => line.startsWith('meta.test')), served.join(', '));
      const tls = await y.api('POST', '/api/download', { board_id: b, url: `http://nas.test:${port}/post-https` });
      refused(tls, 'meta.test');
      // The service read the page at 127.0.0.1; yt-dlp's own look-up of the same name got the link-local answer.
      const rebound = await y.api('POST', '/api/download', {
        board_id: b,
        url: `http://rebind3.test:${port}/post-ok`,
      });
      refused(rebound, 'rebind3.test');
      assert.equal((await y.api('GET', `/api/moodboards/${b}`)).body.elements.length, 2, 'only the first page added');
    } finally {
      await y.close();
    }
  });

  it('board import from_url refuses them, now and as a job', async () => {
    const target = await t.createBoard('target');
    const imp = (from_url: string, extra: Record<string, unknown> = {}) =>
      t.api('POST', `/api/moodboards/${target}/import`, { from_url, mode: 'append', ...extra });
    refused(await imp('http://169.254.169.254/share/'), '169.254.169.254');
    refused(await imp('http://[fe80::1]/share/', { async: true }), 'fe80::1');
    refused(await imp(`http://meta.test:${port}/share/`), 'meta.test');
    const queued = await imp(`http://meta6.test:${port}/share/`, { async: true });
    assert.equal(queued.status, 202, queued.text);
    const job = await waitForJob(t, queued.body.job_id, { timeoutMs: 20_000 });
    assert.deepEqual([job.status, job.error_code], ['error', 'forbidden_address']);
  });
});

describe('generation fetches (reference images, provider results) follow the same policy', () => {
  const TOKEN = 'r8_test_token_0123456789abcdef';
  let replicate: ReplicateDouble;
  let t: TestService;
  let board: string;
  const resolver = standInResolver({ 'meta.test': [['169.254.169.254']] });
  before(async () => {
    replicate = await startReplicateDouble({ apiToken: TOKEN });
    t = await startService(
      { REPLICATE_API_TOKEN: TOKEN, REPLICATE_BASE_URL: `${replicate.url}/v1`, AI_POLL_INTERVAL_MS: '20' },
      { lookup: resolver.lookup },
    );
    board = await t.createBoard();
  });
  after(async () => {
    await t.close();
    await replicate.close();
  });

  it('refuses an input image at such an address, by literal and by name, before the provider is called', async () => {
    const calls = replicate.received('POST', /predictions$/).length;
    for (const [url, host] of [
      ['http://169.254.169.254/latest/meta-data/x.png', '169.254.169.254'],
      ['http://[::ffff:a9fe:a9fe]/x.png', '::ffff:a9fe:a9fe'],
      [`http://meta.test:${new URL(replicate.url).port}/x.png`, 'meta.test'],
    ]) {
      const res = await t.api('POST', '/api/ai/generate', {
        board_id: board,
        model: 'flux-1.1-pro',
        prompt: 'x',
        aspect_ratio: '1:1',
        input_image_url: url,
      });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.code, 'forbidden_address');
      assert.ok(res.body.error.message.includes(host), res.body.error.message);
    }
    assert.equal(replicate.received('POST', /predictions$/).length, calls, 'no prediction was started');
  });

  it("a provider's result at such an address fails the job with forbidden_address", async () => {
    for (const outputUrl of ['http://169.254.169.254/out.png', `http://meta.test:${new URL(replicate.url).port}/f`]) {
      replicate.plans.push({ steps: ['succeeded'], outputUrl });
      const res = await t.api('POST', '/api/ai/generate', {
        board_id: board,
        model: 'flux-schnell',
        prompt: 'x',
        aspect_ratio: '1:1',
      });
      assert.equal(res.status, 200, res.text);
      const job = await waitForJob(t, `/api/ai/jobs/${res.body.job_id}`, { timeoutMs: 20_000 });
      assert.deepEqual([job.status, job.error_code], ['error', 'forbidden_address'], JSON.stringify(job));
    }
  });
});

describe('calls to AI providers follow the policy, as a request can set their base URL', () => {
  const TOKEN = 'r8_test_token_0123456789abcdef';
  let replicate: ReplicateDouble;
  let t: TestService;
  const resolver = standInResolver({ 'meta.test': [['169.254.169.254']], 'api.test': [['127.0.0.1']] });
  before(async () => {
    replicate = await startReplicateDouble({ apiToken: TOKEN });
    t = await startService({ REPLICATE_API_TOKEN: TOKEN, AI_POLL_INTERVAL_MS: '20' }, { lookup: resolver.lookup });
  });
  after(async () => {
    await t.close();
    await replicate.close();
  });

  it('a base URL at such an address is refused when set; a name resolving there is refused at the call', async () => {
    const put = (base_url: string) => t.api('PUT', '/api/ai/providers/replicate', { base_url });
    for (const base of ['http://169.254.169.254/v1', 'http://[fd00:ec2::254]/v1', 'http://0xa9fea9fe/v1']) {
      const res = await put(base);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.code, 'forbidden_address');
    }
    const generate = async () => {
      const board = await t.createBoard();
      return t.api('POST', '/api/ai/generate', {
        board_id: board,
        model: 'flux-schnell',
        prompt: 'x',
        aspect_ratio: '1:1',
      });
    };
    const port = new URL(replicate.url).port;
    assert.equal((await put(`http://meta.test:${port}/v1`)).status, 200);
    const before = replicate.requests.length;
    const refused = await generate();
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body.error.code, 'forbidden_address');
    assert.equal(replicate.requests.length, before, 'the provider was not reached');
    // The same double by a name that resolves to loopback: the call goes through.
    assert.equal((await put(`http://api.test:${port}/v1`)).status, 200);
    const ok = await generate();
    assert.equal(ok.status, 200, ok.text);
    assert.equal(replicate.requests.length, before + 1);
  });
});

describe("a render worker asks only the service for a job's media", () => {
  it('a /media URL written with another origin is fetched from the service, token and all', async () => {
    const seen: { url: string; host: string; auth: string }[] = [];
    const server = http.createServer((req, res) => {
      seen.push({ url: req.url!, host: req.headers.host!, auth: req.headers.authorization ?? '' });
      res.end('bytes');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const client = new ServiceClient(base, 'worker-token-0123456789');
      const res = await client.request('GET', 'http://169.254.169.254/media/b1/clip.mp4?v=2');
      assert.equal(await res.text(), 'bytes');
      assert.deepEqual(seen, [
        { url: '/media/b1/clip.mp4?v=2', host: new URL(base).host, auth: 'Bearer worker-token-0123456789' },
      ]);
    } finally {
      server.close();
    }
  });
});

describe('the loopback proxy yt-dlp runs behind', () => {
  /** Sends one raw request to the proxy and answers the first line of its reply (and the rest, for tunnels). */
  const raw = (port: number, text: string) =>
    new Promise<string>((resolve, reject) => {
      // Node's server refuses HTTP/1.1 without Host (as curl and yt-dlp send it).
      const socket = net.connect(port, '127.0.0.1', () => socket.write(text.replace('\r\n', '\r\nHost: proxied\r\n')));
      let got = '';
      socket.on('data', (d) => {
        got += d.toString('latin1');
        if (got.includes('\r\n\r\n') && !got.startsWith('HTTP/1.1 200 Connection')) socket.end();
        if (got.startsWith('HTTP/1.1 200 Connection') && got.includes('tunnelled')) socket.end();
      });
      socket.on('end', () => resolve(got));
      socket.on('error', reject);
    });

  it('answers only its own credentials, refuses forbidden CONNECT targets in any spelling, tunnels allowed ones', async () => {
    const target = http.createServer((_req, res) => res.end('tunnelled'));
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    const targetPort = target.address() as AddressInfo;
    const { lookup } = standInResolver({ 'meta.test': [['169.254.169.254']], 'nas.test': [['127.0.0.1']] });
    const outbound = new OutboundHttp(lookup);
    const proxy = await startPolicyProxy(outbound);
    try {
      const url = new URL(proxy.url);
      const auth = `Proxy-Authorization: Basic ${Buffer.from(`${url.username}:${url.password}`).toString('base64')}`;
      const port = Number(url.port);
      assert.equal(url.hostname, '127.0.0.1');
      const get = `GET /x HTTP/1.1\r\nHost: nas.test:${targetPort.port}\r\n\r\n`;
      // Without the credentials, or with others, nothing is forwarded.
      assert.match(await raw(port, `CONNECT nas.test:${targetPort.port} HTTP/1.1\r\n\r\n`), /^HTTP\/1.1 407/);
      assert.match(
        await raw(port, `GET http://nas.test:${targetPort.port}/ HTTP/1.1\r\nProxy-Authorization: Basic eDp5\r\n\r\n`),
        /^HTTP\/1.1 407/,
      );
      assert.equal(proxy.refused(), undefined);
      for (const authority of [
        '169.254.169.254:80',
        '2852039166:443',
        '[fe80::1]:443',
        '[::ffff:a9fe:a9fe]:80',
        'meta.test:80',
      ])
        assert.match(await raw(port, `CONNECT ${authority} HTTP/1.1\r\n${auth}\r\n\r\n`), /^HTTP\/1.1 403/, authority);
      assert.equal(proxy.refused()?.code, 'forbidden_address');
      assert.match(await raw(port, `CONNECT nas.test HTTP/1.1\r\n${auth}\r\n\r\n`), /^HTTP\/1.1 400/);
      const tunnel = await raw(port, `CONNECT nas.test:${targetPort.port} HTTP/1.1\r\n${auth}\r\n\r\n${get}`);
      assert.match(tunnel, /^HTTP\/1.1 200 Connection Established\r\n\r\nHTTP\/1.1 200 OK[\s\S]*tunnelled$/);
    } finally {
      await proxy.close();
      outbound.close();
      target.close();
    }
  });
});
