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

/** One per service instance (not a module singleton): other features (agents) reach the same keys through it. */
const contexts = new WeakMap<AppContext, GenerationContext>();

export function generationContext(ctx: AppContext): GenerationContext {
  let g = contexts.get(ctx);
  if (!g) {
    const providers = new ProviderRegistry(ctx.config.ai, ctx.config.dataDir, ctx.log);
    g = { ...ctx, providers, localModels: new LocalModels(providers, ctx.log), history: new HistoryStore(ctx.db) };
    contexts.set(ctx, g);
    // Code that already holds the generation context may hand it on where an AppContext is asked for.
    contexts.set(g, g);
  }
  return g;
}
