import type { ImageModel, TranscriptionModel, wrapLanguageModel } from 'ai';
import type { CatalogueEntry } from './catalogue.js';
import type { ProviderSettings } from './providers.js';

/** A provider's chat model as the AI SDK's current model interface (what middleware wraps). */
export type ChatModel = Parameters<typeof wrapLanguageModel>[0]['model'];

/**
 * AI SDK model objects built from our settings. Keys and base URLs are always passed explicitly: the SDK would
 * otherwise fall back to process.env, which is not where this service's configuration (or a test's) lives. Their
 * calls go through the settings' `fetch` (the address policy).
 * Building a provider is a few closures, so models are built per call and a changed key applies at once. Each
 * provider's package is loaded at its first use, as the SDK is (ai-sdk.ts).
 */
export async function languageModel(s: ProviderSettings, entry: CatalogueEntry): Promise<ChatModel> {
  const common = { apiKey: s.apiKey, baseURL: s.baseUrl, fetch: s.fetch };
  switch (s.provider) {
    // Chat Completions rather than the Responses API: proxies, gateways and compatible servers all speak it.
    case 'openai':
      return (await import('@ai-sdk/openai')).createOpenAI(common).chat(entry.providerModel);
    case 'anthropic':
      return (await import('@ai-sdk/anthropic')).createAnthropic(common)(entry.providerModel);
    case 'google':
      return (await import('@ai-sdk/google')).createGoogleGenerativeAI(common)(entry.providerModel);
    case 'openai-compatible': {
      const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
      return createOpenAICompatible({ name: 'openai-compatible', ...common }).chatModel(entry.providerModel);
    }
    default:
      throw new Error(`${s.provider} has no chat models`);
  }
}

export async function imageModel(s: ProviderSettings, entry: CatalogueEntry): Promise<ImageModel> {
  const common = { apiKey: s.apiKey, baseURL: s.baseUrl, fetch: s.fetch };
  if (entry.api === 'openai-image')
    return (await import('@ai-sdk/openai')).createOpenAI(common).image(entry.providerModel);
  if (entry.api === 'google-imagen')
    return (await import('@ai-sdk/google')).createGoogleGenerativeAI(common).image(entry.providerModel);
  throw new Error(`${entry.id} is not answered at once`);
}

export async function transcriptionModel(s: ProviderSettings, entry: CatalogueEntry): Promise<TranscriptionModel> {
  const { createOpenAI } = await import('@ai-sdk/openai');
  return createOpenAI({ apiKey: s.apiKey, baseURL: s.baseUrl, fetch: s.fetch }).transcription(entry.providerModel);
}
