import type { ProviderId } from './providers.js';

export type ModelKind = 'image' | 'video' | 'chat' | 'transcription';

/**
 * How the service talks to the model:
 * - `openai-image`, `google-imagen`: the AI SDK's image models, answer at once;
 * - `replicate`, `fal`, `veo`: our queue clients (start, then poll the provider's job id on our schedule);
 * - `chat`, `transcription`: the AI SDK's language / transcription models.
 */
export type ModelApi = 'openai-image' | 'google-imagen' | 'replicate' | 'fal' | 'veo' | 'chat' | 'transcription';

/** A list price the cost estimate multiplies: per image, per second of video, per megapixel, or per 1M tokens. */
interface Price {
  usd: number;
  per: 'image' | 'second' | 'megapixel' | 'video' | 'minute' | '1M input tokens';
}

export interface CatalogueEntry {
  id: string;
  label: string;
  provider: ProviderId;
  kind: ModelKind;
  api: ModelApi;
  /** The provider's own name of the model (`owner/name` on Replicate, the app path on fal). */
  providerModel: string;
  /** Image/video: the aspect ratios the model accepts, the first is the default. */
  aspectRatios?: string[];
  /** Image/video with a source image (image-to-image or image-to-video). */
  acceptsInputImage?: boolean;
  /** Queued APIs: the input field that takes the source image (as a data URI). */
  imageParam?: string;
  /** Video: seconds a clip lasts when params do not say (for the estimate). */
  defaultSeconds?: number;
  price?: Price;
}

/** OpenAI's image sizes by aspect ratio (the API takes sizes, not ratios). */
export const OPENAI_IMAGE_SIZES: Record<string, Record<string, `${number}x${number}`>> = {
  'gpt-image-1': { '1:1': '1024x1024', '3:2': '1536x1024', '2:3': '1024x1536' },
  'gpt-image-1-mini': { '1:1': '1024x1024', '3:2': '1536x1024', '2:3': '1024x1536' },
  'dall-e-3': { '1:1': '1024x1024', '16:9': '1792x1024', '9:16': '1024x1792' },
};

const FLUX_RATIOS = ['1:1', '16:9', '9:16', '3:2', '2:3', '4:3', '3:4', '4:5', '5:4', '21:9', '9:21'];
const IMAGEN_RATIOS = ['1:1', '16:9', '9:16', '4:3', '3:4'];

/**
 * Our catalogue: the models the service offers, with list prices as published by each provider. Dated 2026-11-22
 * (see docs/generation.md); prices change, the estimate is a guide, not a bill.
 */
export const CATALOGUE: readonly CatalogueEntry[] = [
  // --- image, answered at once
  {
    id: 'gpt-image-1',
    label: 'GPT Image 1 (OpenAI)',
    provider: 'openai',
    kind: 'image',
    api: 'openai-image',
    providerModel: 'gpt-image-1',
    aspectRatios: Object.keys(OPENAI_IMAGE_SIZES['gpt-image-1']),
    acceptsInputImage: true,
    price: { usd: 0.042, per: 'image' },
  },
  {
    id: 'gpt-image-1-mini',
    label: 'GPT Image 1 mini (OpenAI)',
    provider: 'openai',
    kind: 'image',
    api: 'openai-image',
    providerModel: 'gpt-image-1-mini',
    aspectRatios: Object.keys(OPENAI_IMAGE_SIZES['gpt-image-1-mini']),
    acceptsInputImage: true,
    price: { usd: 0.011, per: 'image' },
  },
  {
    id: 'dall-e-3',
    label: 'DALL·E 3 (OpenAI)',
    provider: 'openai',
    kind: 'image',
    api: 'openai-image',
    providerModel: 'dall-e-3',
    aspectRatios: Object.keys(OPENAI_IMAGE_SIZES['dall-e-3']),
    price: { usd: 0.04, per: 'image' },
  },
  {
    id: 'imagen-4',
    label: 'Imagen 4 (Google)',
    provider: 'google',
    kind: 'image',
    api: 'google-imagen',
    providerModel: 'imagen-4.0-generate-001',
    aspectRatios: IMAGEN_RATIOS,
    price: { usd: 0.04, per: 'image' },
  },
  {
    id: 'imagen-4-fast',
    label: 'Imagen 4 Fast (Google)',
    provider: 'google',
    kind: 'image',
    api: 'google-imagen',
    providerModel: 'imagen-4.0-fast-generate-001',
    aspectRatios: IMAGEN_RATIOS,
    price: { usd: 0.02, per: 'image' },
  },
  // --- image, queued
  {
    id: 'flux-schnell',
    label: 'FLUX.1 [schnell] (Replicate)',
    provider: 'replicate',
    kind: 'image',
    api: 'replicate',
    providerModel: 'black-forest-labs/flux-schnell',
    aspectRatios: FLUX_RATIOS,
    price: { usd: 0.003, per: 'image' },
  },
  {
    id: 'flux-1.1-pro',
    label: 'FLUX1.1 [pro] (Replicate)',
    provider: 'replicate',
    kind: 'image',
    api: 'replicate',
    providerModel: 'black-forest-labs/flux-1.1-pro',
    aspectRatios: FLUX_RATIOS,
    acceptsInputImage: true,
    imageParam: 'image_prompt',
    price: { usd: 0.04, per: 'image' },
  },
  {
    id: 'fal-flux-dev',
    label: 'FLUX.1 [dev] (fal)',
    provider: 'fal',
    kind: 'image',
    api: 'fal',
    providerModel: 'fal-ai/flux/dev',
    aspectRatios: FLUX_RATIOS,
    price: { usd: 0.025, per: 'megapixel' },
  },
  // --- video, always queued
  {
    id: 'veo-3',
    label: 'Veo 3 (Google)',
    provider: 'google',
    kind: 'video',
    api: 'veo',
    providerModel: 'veo-3.0-generate-001',
    aspectRatios: ['16:9', '9:16'],
    acceptsInputImage: true,
    defaultSeconds: 8,
    price: { usd: 0.4, per: 'second' },
  },
  {
    id: 'veo-3-fast',
    label: 'Veo 3 Fast (Google)',
    provider: 'google',
    kind: 'video',
    api: 'veo',
    providerModel: 'veo-3.0-fast-generate-001',
    aspectRatios: ['16:9', '9:16'],
    acceptsInputImage: true,
    defaultSeconds: 8,
    price: { usd: 0.15, per: 'second' },
  },
  {
    id: 'minimax-video-01',
    label: 'MiniMax Video-01 (Replicate)',
    provider: 'replicate',
    kind: 'video',
    api: 'replicate',
    providerModel: 'minimax/video-01',
    aspectRatios: ['16:9'],
    acceptsInputImage: true,
    imageParam: 'first_frame_image',
    defaultSeconds: 6,
    price: { usd: 0.5, per: 'video' },
  },
  {
    id: 'kling-2.1-fal',
    label: 'Kling 2.1 Standard (fal)',
    provider: 'fal',
    kind: 'video',
    api: 'fal',
    providerModel: 'fal-ai/kling-video/v2.1/standard/text-to-video',
    aspectRatios: ['16:9', '9:16', '1:1'],
    defaultSeconds: 5,
    price: { usd: 0.05, per: 'second' },
  },
  // --- chat
  {
    id: 'gpt-4.1',
    label: 'GPT-4.1 (OpenAI)',
    provider: 'openai',
    kind: 'chat',
    api: 'chat',
    providerModel: 'gpt-4.1',
    price: { usd: 2, per: '1M input tokens' },
  },
  {
    id: 'gpt-4.1-mini',
    label: 'GPT-4.1 mini (OpenAI)',
    provider: 'openai',
    kind: 'chat',
    api: 'chat',
    providerModel: 'gpt-4.1-mini',
    price: { usd: 0.4, per: '1M input tokens' },
  },
  {
    id: 'gpt-4o-mini',
    label: 'GPT-4o mini (OpenAI)',
    provider: 'openai',
    kind: 'chat',
    api: 'chat',
    providerModel: 'gpt-4o-mini',
    price: { usd: 0.15, per: '1M input tokens' },
  },
  {
    id: 'claude-sonnet-4-5',
    label: 'Claude Sonnet 4.5 (Anthropic)',
    provider: 'anthropic',
    kind: 'chat',
    api: 'chat',
    providerModel: 'claude-sonnet-4-5',
    price: { usd: 3, per: '1M input tokens' },
  },
  {
    id: 'claude-haiku-4-5',
    label: 'Claude Haiku 4.5 (Anthropic)',
    provider: 'anthropic',
    kind: 'chat',
    api: 'chat',
    providerModel: 'claude-haiku-4-5',
    price: { usd: 1, per: '1M input tokens' },
  },
  {
    id: 'claude-opus-4-1',
    label: 'Claude Opus 4.1 (Anthropic)',
    provider: 'anthropic',
    kind: 'chat',
    api: 'chat',
    providerModel: 'claude-opus-4-1',
    price: { usd: 15, per: '1M input tokens' },
  },
  {
    id: 'gemini-2.5-flash',
    label: 'Gemini 2.5 Flash (Google)',
    provider: 'google',
    kind: 'chat',
    api: 'chat',
    providerModel: 'gemini-2.5-flash',
    price: { usd: 0.3, per: '1M input tokens' },
  },
  {
    id: 'gemini-2.5-pro',
    label: 'Gemini 2.5 Pro (Google)',
    provider: 'google',
    kind: 'chat',
    api: 'chat',
    providerModel: 'gemini-2.5-pro',
    price: { usd: 1.25, per: '1M input tokens' },
  },
  // --- transcription (POST /api/ai/transcribe; not listed by GET /api/ai/models, whose shape the spec fixes)
  {
    id: 'whisper-1',
    label: 'Whisper (OpenAI)',
    provider: 'openai',
    kind: 'transcription',
    api: 'transcription',
    providerModel: 'whisper-1',
    price: { usd: 0.006, per: 'minute' },
  },
];

/** Ids of models a local OpenAI-compatible server reports: `openai-compatible/<its id>`. */
export const LOCAL_PREFIX = 'openai-compatible/';

export function findEntry(id: string): CatalogueEntry | undefined {
  return CATALOGUE.find((e) => e.id === id);
}

/** A local server's model as a catalogue entry (chat, no price: it runs on the user's machine). */
export function localEntry(modelId: string): CatalogueEntry {
  return {
    id: LOCAL_PREFIX + modelId,
    label: `${modelId} (local)`,
    provider: 'openai-compatible',
    kind: 'chat',
    api: 'chat',
    providerModel: modelId,
  };
}
