import type { UserContent } from 'ai';
import { aiSdk } from './ai-sdk.js';
import type { GenerationContext } from './context.js';
import { mapProviderError } from './errors.js';
import { readInputImage } from './fetch-file.js';
import { resolveChatModel } from './models.js';
import type { EnhanceBody } from './schemas.js';
import { Unprocessable, UpstreamFailed } from '../errors.js';

const SYSTEM = [
  'You improve prompts for image and video generation models.',
  "Rewrite the user's prompt into one richer prompt: keep its subject and intent, add concrete detail about composition,",
  'lighting, style, palette and camera where it helps. When a reference image is attached, carry over its style and mood.',
  'Answer with the improved prompt only: no preamble, no quotes, no lists, at most 120 words.',
].join(' ');

/** POST /api/ai/prompt-enhancer/analyze: a chat model rewrites the prompt, looking at the reference image if any. */
export async function enhancePrompt(
  g: GenerationContext,
  body: EnhanceBody,
  signal: AbortSignal,
): Promise<{ enhanced_prompt: string }> {
  const chat = await resolveChatModel(g, body.model);
  const image = body.reference_image_url
    ? await readInputImage(g, body.reference_image_url, 'body.reference_image_url', signal)
    : undefined;
  const content: UserContent = [{ type: 'text', text: body.prompt }];
  if (image) content.push({ type: 'image', image: new Uint8Array(image.data), mediaType: image.mediaType });
  const timeout = AbortSignal.timeout(chat.callOptions.timeoutMs);
  const { generateText } = await aiSdk();
  let result;
  try {
    result = await generateText({
      model: chat.model,
      system: SYSTEM,
      messages: [{ role: 'user', content }],
      maxRetries: chat.callOptions.maxRetries,
      abortSignal: AbortSignal.any([signal, timeout]),
    });
  } catch (err) {
    throw mapProviderError(err, chat.provider, timeout);
  }
  const text = result.text.trim().replace(/^"(.*)"$/s, '$1');
  // Anthropic's `refusal` and OpenAI's `content_filter` both arrive as `content-filter`.
  if (result.finishReason === 'content-filter') {
    throw new Unprocessable('content_refused', `The ${chat.provider} provider refused to rewrite this prompt`, {
      provider: chat.provider,
      reason: result.finishReason,
    });
  }
  if (!text)
    throw new UpstreamFailed('provider_error', `The ${chat.provider} provider answered with no text`, {
      provider: chat.provider,
    });
  return { enhanced_prompt: text };
}
