import sharp from 'sharp';
import { bearer, HttpDouble, sendJson, type Recorded } from './http-double.js';

export type PredictionStatus = 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled';

/** How the next created prediction behaves. */
export interface PredictionPlan {
  /** Status shown by each successive GET; the last one repeats. Default: starting, processing, succeeded. */
  steps?: PredictionStatus[];
  /** The output file's bytes (served at `/files/<id>.<ext>`). */
  output?: Buffer;
  ext?: string;
  /** The output URL the prediction names instead of its `/files/` one (a host the service must refuse). */
  outputUrl?: string;
  /** `error` of a failed prediction. */
  error?: string;
  /** `logs` while processing (a model's progress bar, e.g. ` 50%|█████     |`). */
  logs?: string;
}

interface Prediction {
  id: string;
  model: string;
  input: Record<string, unknown>;
  plan: PredictionPlan;
  gets: number;
  /** Set by the test (or by cancel): overrides the plan. */
  forced?: PredictionStatus;
  created_at: string;
}

/**
 * Replicate's predictions API as documented: `POST /v1/models/{owner}/{name}/predictions` (201, status `starting`),
 * `GET /v1/predictions/{id}` (`starting` -> `processing` -> `succeeded` | `failed` | `canceled`, `output` a list of
 * file URLs), `POST /v1/predictions/{id}/cancel`. Bearer auth. Base URL: `double.url + '/v1'`.
 */
export class ReplicateDouble extends HttpDouble {
  readonly plans: PredictionPlan[] = [];
  readonly predictions = new Map<string, Prediction>();
  defaultOutput = Buffer.alloc(0);
  private seq = 0;

  constructor(readonly apiToken: string | undefined) {
    super();
    const guard = (rec: Recorded, res: import('node:http').ServerResponse) => {
      if (this.apiToken === undefined || bearer(rec) === this.apiToken) return true;
      sendJson(res, 401, {
        title: 'Unauthenticated',
        detail: 'You did not pass a valid authentication token',
        status: 401,
      });
      return false;
    };
    this.route('POST', /^\/v1\/models\/([^/]+)\/([^/]+)\/predictions$/, 'POST /v1/predictions', (rec, res, m) => {
      if (!guard(rec, res)) return;
      const id = `pred${++this.seq}${Math.random().toString(36).slice(2, 8)}`;
      const p: Prediction = {
        id,
        model: `${m[1]}/${m[2]}`,
        input: rec.json?.input ?? {},
        plan: this.plans.shift() ?? {},
        gets: 0,
        created_at: new Date().toISOString(),
      };
      this.predictions.set(id, p);
      sendJson(res, 201, this.view(p, 'starting'));
    });
    this.route('GET', /^\/v1\/predictions\/([^/]+)$/, 'GET /v1/predictions', (rec, res, m) => {
      if (!guard(rec, res)) return;
      const p = this.predictions.get(m[1]);
      if (!p) return sendJson(res, 404, { title: 'Not found', detail: 'Prediction not found', status: 404 });
      const steps = p.plan.steps ?? ['starting', 'processing', 'succeeded'];
      const status = p.forced ?? steps[Math.min(p.gets, steps.length - 1)];
      p.gets++;
      sendJson(res, 200, this.view(p, status));
    });
    this.route('POST', /^\/v1\/predictions\/([^/]+)\/cancel$/, 'POST /v1/predictions/cancel', (rec, res, m) => {
      if (!guard(rec, res)) return;
      const p = this.predictions.get(m[1]);
      if (!p) return sendJson(res, 404, { title: 'Not found', detail: 'Prediction not found', status: 404 });
      p.forced = 'canceled';
      sendJson(res, 200, this.view(p, 'canceled'));
    });
    this.route('GET', /^\/files\/([^/]+)$/, 'GET /files', (_rec, res, m) => {
      const p = this.predictions.get(m[1].split('.')[0]);
      if (!p) return sendJson(res, 404, { detail: 'no file' });
      const bytes = p.plan.output ?? this.defaultOutput;
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) });
      res.end(bytes);
    });
  }

  /** Makes the prediction show this status from now on (e.g. keep it `processing` across a service restart). */
  force(id: string, status: PredictionStatus | undefined): void {
    this.predictions.get(id)!.forced = status;
  }

  /** Cancel calls received, by prediction id. */
  get cancels(): string[] {
    return this.received('POST', /\/cancel$/).map((r) => r.path.split('/').at(-2)!);
  }

  private view(p: Prediction, status: PredictionStatus) {
    const get = `${this.url}/v1/predictions/${p.id}`;
    const done = status === 'succeeded' || status === 'failed' || status === 'canceled';
    return {
      id: p.id,
      model: p.model,
      version: 'hidden',
      input: p.input,
      logs: status === 'processing' ? (p.plan.logs ?? '') : '',
      output: status === 'succeeded' ? [p.plan.outputUrl ?? `${this.url}/files/${p.id}.${p.plan.ext ?? 'png'}`] : null,
      error: status === 'failed' ? (p.plan.error ?? 'Prediction failed') : null,
      status,
      created_at: p.created_at,
      ...(done ? { completed_at: new Date().toISOString() } : {}),
      urls: { get, cancel: `${get}/cancel` },
      metrics: status === 'succeeded' ? { predict_time: 0.5 } : {},
    };
  }
}

export async function startReplicateDouble(opts: { apiToken?: string } = {}): Promise<ReplicateDouble> {
  const d = new ReplicateDouble(opts.apiToken);
  d.defaultOutput = await sharp({
    create: { width: 48, height: 32, channels: 3, background: { r: 10, g: 120, b: 200 } },
  })
    .png()
    .toBuffer();
  return d.listen();
}
