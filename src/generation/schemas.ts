import { Type } from 'typebox';
import { ErrorBody, errorResponses } from '../http/errors.js';
import { PROVIDERS } from './providers.js';

export const ProviderParam = Type.Object({ provider: Type.Enum([...PROVIDERS]) });

export const ProviderView = Type.Object({
  provider: Type.Enum([...PROVIDERS]),
  configured: Type.Boolean(),
  source: Type.Union([Type.Enum(['runtime', 'env']), Type.Null()], { description: 'where the key (openai-compatible: the base URL) comes from' }),
  key_last4: Type.Union([Type.String(), Type.Null()], { description: 'last 4 characters of a key of 12 or more; the key itself is never returned' }),
  base_url: Type.Union([Type.String(), Type.Null()]),
  env: Type.Object({ key: Type.String(), base_url: Type.String() }, { description: 'the environment variables that configure it' }),
});

export const ProviderList = Type.Object({ providers: Type.Array(ProviderView) });

export const ProviderPut = Type.Object(
  {
    api_key: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, pattern: '^[\\x21-\\x7e]+$', description: 'printable ASCII, no spaces' })),
    base_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'http(s) URL of the API root, e.g. https://api.openai.com/v1' })),
  },
  { additionalProperties: false },
);

export const ListedModel = Type.Object({
  id: Type.String(),
  label: Type.String(),
  provider: Type.Enum([...PROVIDERS]),
  aspect_ratios: Type.Optional(Type.Array(Type.String(), { description: 'image/video: accepted aspect ratios, the first is the default' })),
  queued: Type.Optional(Type.Boolean({ description: 'image/video: true when generate answers with a job to poll' })),
});

export const ModelList = Type.Object({ image: Type.Array(ListedModel), video: Type.Array(ListedModel), chat: Type.Array(ListedModel) });

/** Statuses a provider call can answer besides 200 (docs/generation.md, "Errors"). */
export const providerErrors = { ...errorResponses, 422: ErrorBody, 429: ErrorBody, 502: ErrorBody, 504: ErrorBody } as const;
