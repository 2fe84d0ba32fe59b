import { HttpDouble, sendJson, type Recorded } from './http-double.js';

/** How the next queued request behaves. */
export interface FalPlan {
  /** Status polls answering IN_QUEUE, then IN_PROGRESS, before COMPLETED. */
  inQueue?: number;
  inProgress?: number;
  output?: Buffer;
  /** Result with `has_nsfw_concepts: [true]`. */
  nsfw?: boolean;
}

interface Request {
  id: string;
  app: string;
  input: any;
  plan: FalPlan;
  polls: number;
  cancelled: boolean;
}

/**
 * fal's queue API as documented: `POST /{model path}` -> `{request_id, status_url, response_url, cancel_url}`;
 * `GET /{owner}/{app}/requests/{id}/status` (IN_QUEUE, IN_PROGRESS, COMPLETED); `GET .../requests/{id}` the result
 * (`images: [{url}]` or `video: {url}`); `PUT .../requests/{id}/cancel`. Auth `Authorization: Key <FAL_KEY>`.
 * Base URL (FAL_QUEUE_URL): `double.url`.
 */
export class FalDouble extends HttpDouble {
  readonly plans: FalPlan[] = [];
  readonly queued = new Map<string, Request>();
  defaultOutput: Buffer = Buffer.alloc(0);
  private seq = 0;

  constructor(readonly key: string) {
    super();
    const guard = (rec: Recorded, res: import('node:http').ServerResponse) => {
      if (rec.headers.authorization === `Key ${this.key}`) return true;
      sendJson(res, 401, { detail: 'Authentication is required to perform this action' });
      return false;
    };
    const find = (res: import('node:http').ServerResponse, id: string) => {
      const r = this.queued.get(id);
      if (!r) sendJson(res, 404, { detail: 'Request not found' });
      return r;
    };
    this.route('GET', /^\/files\/([^/]+)$/, 'GET /files', (_rec, res, m) => {
      const r = this.queued.get(m[1].split('.')[0]);
      const bytes = r?.plan.output ?? this.defaultOutput;
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(bytes.length) });
      res.end(bytes);
    });
    this.route('GET', /^\/([^/]+\/[^/]+)\/requests\/([^/]+)\/status$/, 'GET status', (rec, res, m) => {
      if (!guard(rec, res)) return;
      const r = find(res, m[2]);
      if (!r) return;
      r.polls++;
      const q = r.plan.inQueue ?? 1;
      const p = r.plan.inProgress ?? 1;
      if (r.polls <= q)
        return sendJson(res, 202, { status: 'IN_QUEUE', queue_position: q - r.polls, response_url: this.base(r) });
      if (r.polls <= q + p) return sendJson(res, 202, { status: 'IN_PROGRESS', logs: [], response_url: this.base(r) });
      sendJson(res, 200, {
        status: 'COMPLETED',
        logs: [],
        metrics: { inference_time: 0.4 },
        response_url: this.base(r),
      });
    });
    this.route('PUT', /^\/([^/]+\/[^/]+)\/requests\/([^/]+)\/cancel$/, 'PUT cancel', (rec, res, m) => {
      if (!guard(rec, res)) return;
      const r = find(res, m[2]);
      if (!r) return;
      r.cancelled = true;
      sendJson(res, 202, { status: 'CANCELLATION_REQUESTED' });
    });
    this.route('GET', /^\/([^/]+\/[^/]+)\/requests\/([^/]+)$/, 'GET result', (rec, res, m) => {
      if (!guard(rec, res)) return;
      const r = find(res, m[2]);
      if (!r) return;
      const url = `${this.url}/files/${r.id}.png`;
      sendJson(res, 200, {
        images: [{ url, width: 1024, height: 1024, content_type: 'image/png' }],
        seed: 42,
        has_nsfw_concepts: [Boolean(r.plan.nsfw)],
        prompt: r.input.prompt,
      });
    });
    this.route('POST', /^\/(.+)$/, 'POST submit', (rec, res, m) => {
      if (!guard(rec, res)) return;
      const id = `req${++this.seq}`;
      const app = m[1].split('/').slice(0, 2).join('/');
      const r: Request = { id, app, input: rec.json, plan: this.plans.shift() ?? {}, polls: 0, cancelled: false };
      this.queued.set(id, r);
      const base = this.base(r);
      sendJson(res, 200, {
        request_id: id,
        response_url: base,
        status_url: `${base}/status`,
        cancel_url: `${base}/cancel`,
        queue_position: 0,
      });
    });
  }

  private base(r: Request): string {
    return `${this.url}/${r.app}/requests/${r.id}`;
  }
}

export async function startFalDouble(opts: { key: string; output: Buffer }): Promise<FalDouble> {
  const d = new FalDouble(opts.key);
  d.defaultOutput = opts.output;
  return d.listen();
}
