import type { QueueClient } from './types.js';
import { callJson } from './types.js';

interface Operation {
  name: string;
  done?: boolean;
  error?: { code?: number; message?: string };
  response?: {
    generateVideoResponse?: {
      generatedSamples?: { video?: { uri?: string } }[];
      raiMediaFilteredReasons?: string[];
    };
  };
}

const auth = (key: string | undefined) => ({ 'x-goog-api-key': key ?? '' });

/**
 * Veo through the Gemini API's long-running operations: `models/{model}:predictLongRunning`, then the operation
 * (`GET {base}/{operation name}`) until `done`. The video file needs the key, sent only to the API's own origin.
 */
export const veoClient: QueueClient = {
  async start(s, entry, req, signal) {
    const instance: Record<string, unknown> = { prompt: req.prompt };
    if (req.inputImage)
      instance.image = {
        bytesBase64Encoded: req.inputImage.data.toString('base64'),
        mimeType: req.inputImage.mediaType,
      };
    const parameters: Record<string, unknown> = {
      aspectRatio: req.aspectRatio,
      ...(req.negativePrompt ? { negativePrompt: req.negativePrompt } : {}),
      ...req.params,
    };
    const op = await callJson<Operation>(
      s,
      `${s.baseUrl}/models/${entry.providerModel}:predictLongRunning`,
      { method: 'POST', headers: auth(s.apiKey), body: { instances: [instance], parameters } },
      signal,
    );
    return op.name;
  },
  async poll(s, _entry, name, signal) {
    const op = await callJson<Operation>(s, `${s.baseUrl}/${name}`, { method: 'GET', headers: auth(s.apiKey) }, signal);
    if (!op.done) return { status: 'running' };
    if (op.error) return { status: 'failed', error: op.error.message ?? `error ${op.error.code}` };
    const res = op.response?.generateVideoResponse;
    const reasons = res?.raiMediaFilteredReasons ?? [];
    if (reasons.length) return { status: 'failed', error: reasons.join('; '), refused: reasons.join('; ') };
    const outputUrl = res?.generatedSamples?.[0]?.video?.uri;
    return outputUrl
      ? { status: 'succeeded', outputUrl }
      : { status: 'failed', error: 'The operation finished without a video' };
  },
  async cancel(s, _entry, name, signal) {
    await callJson(s, `${s.baseUrl}/${name}:cancel`, { method: 'POST', headers: auth(s.apiKey), body: {} }, signal);
  },
  downloadAuth(s) {
    return { origin: new URL(s.baseUrl).origin, headers: auth(s.apiKey) };
  },
};
