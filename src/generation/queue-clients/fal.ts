import type { QueueClient } from './types.js';
import { callJson, dataUri } from './types.js';

const auth = (key: string | undefined) => ({ authorization: `Key ${key ?? ''}` });

/** Status and result URLs use the app id (`owner/app`), without the model's sub-path (`fal-ai/flux/dev` -> `fal-ai/flux`). */
const appId = (model: string) => model.split('/').slice(0, 2).join('/');

/** About one megapixel in the ratio, sides multiples of 16 (what fal's `image_size` object takes). */
function imageSize(ratio: string): { width: number; height: number } {
  const [w, h] = ratio.split(':').map(Number);
  const scale = Math.sqrt((1024 * 1024) / (w * h));
  return { width: Math.round((w * scale) / 16) * 16, height: Math.round((h * scale) / 16) * 16 };
}

interface Status {
  status: 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED' | string;
  error?: string | null;
}

interface Result {
  images?: { url?: string }[];
  image?: { url?: string };
  video?: { url?: string };
  seed?: number;
  has_nsfw_concepts?: boolean[];
}

/** fal's queue API (https://docs.fal.ai/model-endpoints/queue): submit, status, result, cancel. */
export const falClient: QueueClient = {
  async start(s, entry, req, signal) {
    const input: Record<string, unknown> = { prompt: req.prompt };
    if (entry.kind === 'image') input.image_size = imageSize(req.aspectRatio);
    else input.aspect_ratio = req.aspectRatio;
    if (req.negativePrompt) input.negative_prompt = req.negativePrompt;
    if (req.inputImage && entry.imageParam) input[entry.imageParam] = dataUri(req.inputImage);
    const r = await callJson<{ request_id: string }>(
      s,
      `${s.baseUrl}/${entry.providerModel}`,
      { method: 'POST', headers: auth(s.apiKey), body: { ...input, ...req.params } },
      signal,
    );
    return r.request_id;
  },
  async poll(s, entry, id, signal) {
    const base = `${s.baseUrl}/${appId(entry.providerModel)}/requests/${encodeURIComponent(id)}`;
    const st = await callJson<Status>(s, `${base}/status`, { method: 'GET', headers: auth(s.apiKey) }, signal);
    if (st.status === 'IN_QUEUE') return { status: 'queued' };
    if (st.status === 'IN_PROGRESS') return { status: 'running' };
    if (st.status !== 'COMPLETED') return { status: 'failed', error: `fal status ${st.status}` };
    if (st.error) return { status: 'failed', error: st.error };
    const result = await callJson<Result>(s, base, { method: 'GET', headers: auth(s.apiKey) }, signal);
    if (result.has_nsfw_concepts?.some(Boolean))
      return { status: 'failed', error: 'NSFW content detected', refused: 'NSFW content detected' };
    const outputUrl = result.images?.[0]?.url ?? result.image?.url ?? result.video?.url;
    return outputUrl
      ? { status: 'succeeded', outputUrl, seed: result.seed }
      : { status: 'failed', error: 'The request completed without an output file' };
  },
  async cancel(s, entry, id, signal) {
    await callJson(
      s,
      `${s.baseUrl}/${appId(entry.providerModel)}/requests/${encodeURIComponent(id)}/cancel`,
      { method: 'PUT', headers: auth(s.apiKey) },
      signal,
    );
  },
};
