import { CATALOGUE, findEntry, LOCAL_PREFIX, localEntry, type CatalogueEntry, type ModelKind } from './catalogue.js';
import type { GenerationContext } from './context.js';
import { notConfigured, type ProviderId, type ProviderSettings } from './providers.js';
import { languageModel, type ChatModel } from './sdk.js';
import { InvalidInput } from '../errors.js';

export interface ListedModel {
  id: string;
  label: string;
  provider: ProviderId;
  aspect_ratios?: string[];
  queued?: boolean;
}

const QUEUED_APIS = new Set(['replicate', 'fal', 'veo']);

/** Whether a generation with this model answers at once or is a job that polls the provider. */
export const isQueued = (entry: CatalogueEntry) => QUEUED_APIS.has(entry.api);

function listed(e: CatalogueEntry): ListedModel {
  return {
    id: e.id,
    label: e.label,
    provider: e.provider,
    ...(e.aspectRatios ? { aspect_ratios: e.aspectRatios, queued: isQueued(e) } : {}),
  };
}

/** GET /api/ai/models: the catalogue's models of configured providers, plus what a local server reports. */
export async function listModels(
  g: GenerationContext,
): Promise<{ image: ListedModel[]; video: ListedModel[]; chat: ListedModel[] }> {
  const usable = CATALOGUE.filter((e) => g.providers.isConfigured(e.provider));
  const local = (await g.localModels.list()) ?? [];
  return {
    image: usable.filter((e) => e.kind === 'image').map(listed),
    video: usable.filter((e) => e.kind === 'video').map(listed),
    chat: [...usable.filter((e) => e.kind === 'chat'), ...local.map(localEntry)].map(listed),
  };
}

interface ResolvedModel {
  entry: CatalogueEntry;
  settings: ProviderSettings;
}

const unknownModel = (id: string, kind: string, field: string) =>
  new InvalidInput(
    `Unknown ${kind} model "${id}"; GET /api/ai/models lists the models of the configured providers`,
    [{ field, message: `unknown ${kind} model` }],
    'unknown_model',
  );

/**
 * A model id of one kind, with the settings of its configured provider: 400 `unknown_model` for an id we do not
 * offer (or of another kind), 400 `provider_not_configured` naming the keys that would enable it.
 */
export async function resolveModel(
  g: GenerationContext,
  id: string,
  kinds: ModelKind[],
  field = 'body.model',
): Promise<ResolvedModel> {
  let entry = findEntry(id);
  if (!entry && id.startsWith(LOCAL_PREFIX) && id.length > LOCAL_PREFIX.length) {
    const settings = g.providers.require('openai-compatible', `Model "${id}"`);
    const local = await g.localModels.list();
    // A server that cannot list right now still gets the call: its own answer then says what is wrong.
    if (local && !local.includes(id.slice(LOCAL_PREFIX.length))) throw unknownModel(id, kinds.join('/'), field);
    entry = localEntry(id.slice(LOCAL_PREFIX.length));
    if (!kinds.includes(entry.kind)) throw unknownModel(id, kinds.join('/'), field);
    return { entry, settings };
  }
  if (!entry || !kinds.includes(entry.kind)) throw unknownModel(id, kinds.join('/'), field);
  const settings = g.providers.settings(entry.provider);
  if (!settings) throw notConfigured(entry.provider, `Model "${id}"`);
  return { entry, settings };
}

export interface ResolvedChatModel {
  /** An AI SDK LanguageModel: pass it to `streamText` / `generateText`. */
  model: ChatModel;
  provider: ProviderId;
  entry: CatalogueEntry;
  /** Call options every caller should pass: the service's retry count and a time limit for one call. */
  callOptions: { maxRetries: number; timeoutMs: number };
}

/**
 * The entry point for other features (agents, prompt enhancement): a chat model id from GET /api/ai/models ->
 * an AI SDK LanguageModel of its configured provider. Throws InvalidInput (400, `unknown_model`,
 * `provider_not_configured`) that a route can let through as it is. Map call failures with `mapProviderError`.
 */
export async function resolveChatModel(
  g: GenerationContext,
  id: string,
  field = 'body.model',
): Promise<ResolvedChatModel> {
  const { entry, settings } = await resolveModel(g, id, ['chat'], field);
  return {
    model: await languageModel(settings, entry),
    provider: entry.provider,
    entry,
    callOptions: { maxRetries: g.config.ai.maxRetries, timeoutMs: g.config.ai.requestTimeoutMs },
  };
}
