import type { Feature } from '../context.js';
import { generationContext } from './context.js';
import { listModels } from './models.js';
import { ModelList, ProviderList, ProviderParam, ProviderPut, ProviderView } from './schemas.js';
import { errorResponses } from '../http/errors.js';

/** Generation: providers and their keys, the model catalogue, image/video generation, enhancement, transcription. */
export const registerGeneration: Feature = (app, ctx) => {
  const g = generationContext(ctx);
  const tags = ['generation'];

  app.get(
    '/api/ai/providers',
    { schema: { tags, summary: 'Each provider: configured or not, where its key comes from, the key\'s last 4 characters, base URL', response: { 200: ProviderList } } },
    async () => ({ providers: g.providers.list() }),
  );
  app.put(
    '/api/ai/providers/:provider',
    {
      schema: {
        tags,
        summary: 'Set a provider\'s key and/or base URL at run time (stored in DATA_DIR, readable by the user only)',
        params: ProviderParam,
        body: ProviderPut,
        response: { 200: ProviderView, ...errorResponses },
      },
    },
    async (req) => g.providers.set(req.params.provider, req.body),
  );
  app.delete(
    '/api/ai/providers/:provider',
    {
      schema: { tags, summary: 'Forget the run-time key and base URL; the environment\'s apply again', params: ProviderParam, response: { 200: ProviderView, ...errorResponses } },
    },
    async (req) => g.providers.remove(req.params.provider),
  );
  app.get(
    '/api/ai/models',
    { schema: { tags, summary: 'Models of the configured providers, by kind', response: { 200: ModelList } } },
    async () => listModels(g),
  );
};
