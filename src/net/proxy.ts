import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { DomainError } from '../errors.js';
import type { OutboundHttp } from './outbound.js';

/** Headers of one hop, never forwarded. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-authorization', 'proxy-connection', 'proxy-authenticate', 'te'];

export interface PolicyProxy {
  /** `http://user:secret@127.0.0.1:port`, for a program's proxy setting. */
  url: string;
  /** The first connection the policy refused, if any. */
  refused(): DomainError | undefined;
  close(): Promise<void>;
}

/**
 * A forward proxy on loopback for a program that fetches on a request's behalf by itself (yt-dlp, and the ffmpeg it
 * runs for streams): plain-http requests and CONNECT tunnels both open their connections through `outbound`, so the
 * program reaches nothing the address policy refuses, whatever names or redirects it follows. It answers only its
 * own random credentials, and lives for one run.
 */
export async function startPolicyProxy(outbound: OutboundHttp): Promise<PolicyProxy> {
  const secret = randomBytes(18).toString('hex');
  const expected = `Basic ${Buffer.from(`bms:${secret}`).toString('base64')}`;
  let refusal: DomainError | undefined;
  const note = (err: unknown) => {
    if (err instanceof DomainError) refusal ??= err;
  };
  const open = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  };

  const server = http.createServer((req, res) => {
    if (req.headers['proxy-authorization'] !== expected) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="board-media"' }).end();
      return;
    }
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end();
      return;
    }
    const headers = { ...req.headers };
    for (const h of HOP_BY_HOP) delete headers[h];
    let upstream: http.ClientRequest;
    try {
      upstream = outbound.request(target, { method: req.method ?? 'GET', headers });
    } catch (err) {
      note(err);
      res.writeHead(403).end();
      return;
    }
    upstream.on('response', (answer) => {
      const back = { ...answer.headers };
      for (const h of HOP_BY_HOP) delete back[h];
      res.writeHead(answer.statusCode ?? 502, back);
      answer.once('error', () => res.destroy());
      answer.pipe(res);
    });
    upstream.on('error', (err) => {
      note(err);
      if (res.headersSent) res.destroy();
      else res.writeHead(err instanceof DomainError ? 403 : 502).end();
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });

  server.on('connection', track);
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const fail = (status: string) => client.end(`HTTP/1.1 ${status}\r\n\r\n`);
    client.on('error', () => client.destroy());
    if (req.headers['proxy-authorization'] !== expected)
      return fail('407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="board-media"');
    // host:port, the port always written (a URL would drop :80 as http's default).
    const authority = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(req.url ?? '');
    let host: string;
    try {
      host = new URL(`http://${authority?.[1]}`).hostname; // the parser's form of odd IPv4 spellings
    } catch {
      return fail('400 Bad Request');
    }
    const port = Number(authority?.[2]);
    if (!authority || port < 1 || port > 65535) return fail('400 Bad Request');
    let upstream: net.Socket;
    try {
      upstream = outbound.connect(host, port);
    } catch (err) {
      note(err);
      return fail('403 Forbidden');
    }
    track(upstream);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', (err) => {
      note(err);
      if (!connected) fail(err instanceof DomainError ? '403 Forbidden' : '502 Bad Gateway');
      else client.destroy();
    });
    client.on('close', () => upstream.destroy());
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://bms:${secret}@127.0.0.1:${port}`,
    refused: () => refusal,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
      }),
  };
}
