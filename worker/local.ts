// Runs the share worker on the real Workers runtime (workerd, shipped inside miniflare) with a local R2 bucket:
// `npm run share-worker -- --port 8787 --token <secret> --persist ./share-data`. Used by tests and for previews.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'src', 'index.js');

export interface LocalWorker {
  url: string;
  close(): Promise<void>;
}

export interface LocalWorkerOptions {
  /** 0 picks a free port. */
  port: number;
  /** The upload secret (at least 16 characters, like the deployed worker's SHARE_TOKEN). */
  token: string;
  /** Folder keeping the R2 bucket between runs; in memory when omitted. */
  persist?: string;
  host?: string;
}

export async function startLocalWorker(o: LocalWorkerOptions): Promise<LocalWorker> {
  if (o.token.length < 16) throw new Error('--token must be at least 16 characters');
  const mf = new Miniflare({
    name: 'board-share',
    modules: true,
    scriptPath: SCRIPT,
    compatibilityDate: '2025-01-01',
    host: o.host ?? '127.0.0.1',
    port: o.port,
    bindings: { SHARE_TOKEN: o.token },
    r2Buckets: { SHARES: 'board-shares' },
    r2Persist: o.persist ? path.resolve(o.persist) : false,
  });
  const url = (await mf.ready).origin;
  return { url, close: () => mf.dispose() };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '8787' },
      token: { type: 'string' },
      persist: { type: 'string' },
      host: { type: 'string' },
    },
  });
  const token = values.token ?? process.env.SHARE_WORKER_TOKEN;
  if (!token) {
    console.error('usage: npm run share-worker -- --port P --token T [--persist DIR] [--host H]');
    process.exit(2);
  }
  const port = Number(values.port);
  const worker = await startLocalWorker({
    port: Number.isInteger(port) ? port : 8787,
    token,
    persist: values.persist,
    host: values.host,
  });
  console.log(
    `share worker on ${worker.url} (R2 ${values.persist ? `kept in ${path.resolve(values.persist)}` : 'in memory'})`,
  );
  const stop = () => void worker.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
