import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { ImageModel, TranscriptionModel, wrapLanguageModel } from 'ai';
import type { CatalogueEntry } from './catalogue.js';
import type { ProviderSettings } from './providers.js';

/** A provider's chat model as the AI SDK's current model interface (what middleware wraps). */
export type ChatModel = Parameters<typeof wrapLanguageModel>[0]['model'];

/**
 * AI SDK model objects built from our settings. Keys and base URLs are always passed explicitly: the SDK would
 * otherwise fall back to process.env, which is not where this service's configuration (or a test's) lives. Their
 * calls go through the settings' `fetch` (the address policy).
 * Building a provider is a few closures, so models are built per call and a changed key applies at once.
 */
export function languageModel(s: ProviderSettings, entry: CatalogueEntry): ChatModel {
  const common = { apiKey: s.apiKey, baseURL: s.baseUrl, fetch: s.fetch };
  switch (s.provider) {
    // Chat Completions rather than the Responses API: proxies, gateways and compatible servers all speak it.
    case 'openai':
      return createOpenAI(common).chat(entry.providerModel);
    case 'anthropic':
      return createAnthropic(common)(entry.providerModel);
    case 'google':
      return createGoogleGenerativeAI(common)(entry.providerModel);
    case 'openai-compatible':
      return createOpenAICompatible({ name: 'openai-compatible', ...common }).chatModel(entry.providerModel);
    default:
      throw new Error(`${s.provider} has no chat models`);
  }
}

export function imageModel(s: ProviderSettings, entry: CatalogueEntry): ImageModel {
  const common = { apiKey: s.apiKey, baseURL: s.baseUrl, fetch: s.fetch };
  if (entry.api === 'openai-image') return createOpenAI(common).image(entry.providerModel);
  if (entry.api === 'google-imagen') return createGoogleGenerativeAI(common).image(entry.providerModel);
  throw new Error(`${entry.id} is not answered at once`);
}

export function transcriptionModel(s: ProviderSettings, entry: CatalogueEntry): TranscriptionModel {
  return createOpenAI({ apiKey: s.apiKey, baseURL: s.baseUrl, fetch: s.fetch }).transcription(entry.providerModel);
}
