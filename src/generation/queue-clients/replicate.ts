import type { QueueClient, QueueState } from './types.js';
import { callJson, dataUri } from './types.js';

/** Replicate's prediction object, the fields we read (https://replicate.com/docs/reference/http#predictions.get). */
interface Prediction {
  id: string;
  status: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled' | 'aborted';
  output?: unknown;
  error?: unknown;
  logs?: string | null;
  input?: { seed?: number };
}

const auth = (token: string | undefined) => ({ authorization: `Bearer ${token ?? ''}` });

/** The last percentage a model printed in its logs (`45%|████`), as 0..1. */
function progressOf(logs: string | null | undefined): number | undefined {
  const all = [...(logs ?? '').matchAll(/(\d{1,3})%\|/g)];
  const last = all.at(-1);
  return last ? Math.min(100, Number(last[1])) / 100 : undefined;
}

/** The first file URL of an output, whichever shape the model gives (a URL, a list of URLs, an object of them). */
function firstUrl(output: unknown): string | undefined {
  if (typeof output === 'string') return /^https?:\/\//.test(output) ? output : undefined;
  if (Array.isArray(output)) return output.map(firstUrl).find(Boolean);
  if (output && typeof output === 'object') return Object.values(output).map(firstUrl).find(Boolean);
  return undefined;
}

function stateOf(p: Prediction): QueueState {
  const error = p.error === null || p.error === undefined ? undefined : String(p.error);
  switch (p.status) {
    case 'starting':
      return { status: 'queued' };
    case 'processing':
      return { status: 'running', progress: progressOf(p.logs) };
    case 'succeeded': {
      const outputUrl = firstUrl(p.output);
      return outputUrl
        ? { status: 'succeeded', outputUrl, seed: p.input?.seed }
        : { status: 'failed', error: 'The prediction succeeded without an output file' };
    }
    case 'canceled':
    case 'aborted':
      return { status: 'canceled' };
    default:
      return {
        status: 'failed',
        error: error ?? 'The prediction failed',
        ...(error && /nsfw|safety|flagged|sensitive/i.test(error) ? { refused: error } : {}),
      };
  }
}

/** Replicate predictions over its HTTP API: create on the model's endpoint, get, cancel. */
export const replicateClient: QueueClient = {
  async start(s, entry, req, signal) {
    const input: Record<string, unknown> = { prompt: req.prompt };
    if ((entry.aspectRatios?.length ?? 0) > 1) input.aspect_ratio = req.aspectRatio;
    if (req.negativePrompt) input.negative_prompt = req.negativePrompt;
    if (req.inputImage && entry.imageParam) input[entry.imageParam] = dataUri(req.inputImage);
    const p = await callJson<Prediction>(
      s,
      `${s.baseUrl}/models/${entry.providerModel}/predictions`,
      { method: 'POST', headers: auth(s.apiKey), body: { input: { ...input, ...req.params } } },
      signal,
    );
    return p.id;
  },
  async poll(s, _entry, id, signal) {
    return stateOf(
      await callJson<Prediction>(
        s,
        `${s.baseUrl}/predictions/${encodeURIComponent(id)}`,
        { method: 'GET', headers: auth(s.apiKey) },
        signal,
      ),
    );
  },
  async cancel(s, _entry, id, signal) {
    await callJson<Prediction>(
      s,
      `${s.baseUrl}/predictions/${encodeURIComponent(id)}/cancel`,
      { method: 'POST', headers: auth(s.apiKey) },
      signal,
    );
  },
};
