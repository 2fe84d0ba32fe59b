import type { AppContext } from '../context.js';
import { HistoryStore } from './history.js';
import { LocalModels } from './local-models.js';
import { ProviderRegistry } from './providers.js';

/** The service context plus what generation keeps per service instance. */
export interface GenerationContext extends AppContext {
  providers: ProviderRegistry;
  localModels: LocalModels;
  history: HistoryStore;
}

/** Built once per service instance by registerGeneration; agents get the same one through registerFeatures. */
export function createGenerationContext(ctx: AppContext): GenerationContext {
  const providers = new ProviderRegistry(ctx.config.ai, ctx.config.dataDir, ctx.log, ctx.outbound.fetch);
  return { ...ctx, providers, localModels: new LocalModels(providers, ctx.log), history: new HistoryStore(ctx.db) };
}
