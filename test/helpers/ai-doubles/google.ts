import { HttpDouble, sendJson, type Recorded } from './http-double.js';

/** How the next Veo operation behaves: polls before `done`, then a video or a safety filter. */
export interface VeoPlan {
  pollsBeforeDone?: number;
  video?: Buffer;
  filteredReasons?: string[];
}

interface Operation {
  name: string;
  model: string;
  body: any;
  plan: VeoPlan;
  polls: number;
  cancelled: boolean;
}

/**
 * The Gemini API as documented, the parts we call: Imagen `POST /v1beta/models/{model}:predict` (predictions with
 * `bytesBase64Encoded`), Veo `POST /v1beta/models/{model}:predictLongRunning` -> an operation polled at
 * `GET /v1beta/{name}` until `done`, whose video `uri` is on the API (key required) and redirects to a storage host.
 * `storage` is that second host (another origin), which records whether any key reached it. Auth: `x-goog-api-key`.
 */
export class GoogleDouble extends HttpDouble {
  readonly images: Buffer[] = [];
  readonly veoPlans: VeoPlan[] = [];
  readonly operations = new Map<string, Operation>();
  /** A separate origin the file URLs redirect to, like Google's download hosts. */
  readonly storage = new HttpDouble();
  private seq = 0;

  constructor(readonly apiKey: string) {
    super();
    const guard = (rec: Recorded, res: import('node:http').ServerResponse) => {
      if (rec.headers['x-goog-api-key'] === this.apiKey) return true;
      sendJson(res, 400, {
        error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT' },
      });
      return false;
    };
    this.route('POST', /^\/v1beta\/models\/([^/:]+):predict$/, 'POST :predict', (rec, res) => {
      if (!guard(rec, res)) return;
      const n = rec.json?.parameters?.sampleCount ?? 1;
      const predictions = Array.from({ length: n }, () => ({
        bytesBase64Encoded: (this.images.shift() ?? Buffer.alloc(0)).toString('base64'),
        mimeType: 'image/png',
      }));
      sendJson(res, 200, { predictions });
    });
    this.route('POST', /^\/v1beta\/models\/([^/:]+):predictLongRunning$/, 'POST :predictLongRunning', (rec, res, m) => {
      if (!guard(rec, res)) return;
      const name = `models/${m[1]}/operations/op${++this.seq}`;
      this.operations.set(name, {
        name,
        model: m[1],
        body: rec.json,
        plan: this.veoPlans.shift() ?? {},
        polls: 0,
        cancelled: false,
      });
      sendJson(res, 200, { name });
    });
    this.route('POST', /^\/v1beta\/(models\/[^/]+\/operations\/[^/:]+):cancel$/, 'POST :cancel', (rec, res, m) => {
      if (!guard(rec, res)) return;
      const op = this.operations.get(m[1]);
      if (!op) return sendJson(res, 404, { error: { code: 404, message: 'not found', status: 'NOT_FOUND' } });
      op.cancelled = true;
      sendJson(res, 200, {});
    });
    this.route('GET', /^\/v1beta\/(models\/[^/]+\/operations\/[^/:]+)$/, 'GET operation', (rec, res, m) => {
      if (!guard(rec, res)) return;
      const op = this.operations.get(m[1]);
      if (!op) return sendJson(res, 404, { error: { code: 404, message: 'not found', status: 'NOT_FOUND' } });
      op.polls++;
      if (op.cancelled)
        return sendJson(res, 200, {
          name: op.name,
          done: true,
          error: { code: 1, message: 'Operation was cancelled' },
        });
      if (op.polls <= (op.plan.pollsBeforeDone ?? 1)) return sendJson(res, 200, { name: op.name, done: false });
      const generateVideoResponse = op.plan.filteredReasons
        ? { raiMediaFilteredCount: 1, raiMediaFilteredReasons: op.plan.filteredReasons }
        : {
            generatedSamples: [
              { video: { uri: `${this.url}/v1beta/files/${op.name.split('/').pop()}:download?alt=media` } },
            ],
          };
      sendJson(res, 200, {
        name: op.name,
        done: true,
        response: {
          '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse',
          generateVideoResponse,
        },
      });
    });
    this.route('GET', /^\/v1beta\/files\/([^/:]+):download$/, 'GET file', (rec, res, m) => {
      if (!guard(rec, res)) return;
      res.writeHead(302, { location: `${this.storage.url}/blob/${m[1]}` });
      res.end();
    });
    this.storage.route('GET', /^\/blob\/([^/]+)$/, 'GET blob', (_rec, res, m) => {
      const op = [...this.operations.values()].find((o) => o.name.endsWith(`/${m[1]}`));
      const bytes = op?.plan.video ?? Buffer.alloc(0);
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(bytes.length) });
      res.end(bytes);
    });
  }

  override async listen(): Promise<this> {
    await this.storage.listen();
    return super.listen();
  }

  override async close(): Promise<void> {
    await this.storage.close();
    await super.close();
  }
}

export async function startGoogleDouble(opts: { apiKey: string }): Promise<GoogleDouble> {
  return new GoogleDouble(opts.apiKey).listen();
}
