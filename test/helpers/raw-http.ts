import http from 'node:http';

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  json(): any;
}

/**
 * A request with the path sent byte for byte (fetch would normalise `..` away) and any Host/Origin header.
 */
export function rawRequest(
  port: number,
  method: string,
  rawPath: string,
  headers: Record<string, string> = {},
  body?: Buffer | string,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path: rawPath, headers, setHost: !('host' in headers || 'Host' in headers) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const b = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: b,
            json: () => JSON.parse(b.toString('utf8')),
          });
        });
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}
