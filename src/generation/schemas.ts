import { Type, type Static } from 'typebox';
import { ErrorBody, errorResponses, Id, jobOf, RecordOf } from '../http/schemas.js';
import { PROVIDERS } from './providers.js';

export const ProviderParam = Type.Object({ provider: Type.Enum([...PROVIDERS]) });

export const ProviderView = Type.Object({
  provider: Type.Enum([...PROVIDERS]),
  configured: Type.Boolean(),
  source: Type.Union([Type.Enum(['runtime', 'env']), Type.Null()], {
    description: 'where the key (openai-compatible: the base URL) comes from',
  }),
  key_last4: Type.Union([Type.String(), Type.Null()], {
    description: 'last 4 characters of a key of 12 or more; the key itself is never returned',
  }),
  base_url: Type.Union([Type.String(), Type.Null()]),
  env: Type.Object(
    { key: Type.String(), base_url: Type.String() },
    { description: 'the environment variables that configure it' },
  ),
});

export const ProviderList = Type.Object({ providers: Type.Array(ProviderView) });

export const ProviderPut = Type.Object(
  {
    api_key: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        pattern: '^[\\x21-\\x7e]+$',
        description: 'printable ASCII, no spaces',
      }),
    ),
    base_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2000,
        description: 'http(s) URL of the API root, e.g. https://api.openai.com/v1',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ListedModel = Type.Object({
  id: Type.String(),
  label: Type.String(),
  provider: Type.Enum([...PROVIDERS]),
  aspect_ratios: Type.Optional(
    Type.Array(Type.String(), { description: 'image/video: accepted aspect ratios, the first is the default' }),
  ),
  queued: Type.Optional(Type.Boolean({ description: 'image/video: true when generate answers with a job to poll' })),
});

export const ModelList = Type.Object({
  image: Type.Array(ListedModel),
  video: Type.Array(ListedModel),
  chat: Type.Array(ListedModel),
});

/** Statuses a provider call can answer besides 200 (docs/generation.md, "Errors"). */
export const providerErrors = {
  ...errorResponses,
  422: ErrorBody,
  429: ErrorBody,
  502: ErrorBody,
  504: ErrorBody,
} as const;

const MediaOrHttpUrl = Type.String({
  minLength: 1,
  maxLength: 4000,
  description: 'a board file (`/media/<board_id>/<file>`) or an http(s) URL',
});

/** Bytes of JSON of a generation's `params`, stored with its history entry. */
export const MAX_PARAMS_BYTES = 64 * 1024;

export const GenerateBody = Type.Object(
  {
    board_id: Id,
    model: Type.String({ minLength: 1, maxLength: 200, description: 'an id from GET /api/ai/models (image or video)' }),
    prompt: Type.String({ minLength: 1, maxLength: 8000 }),
    aspect_ratio: Type.String({
      pattern: '^[0-9]{1,2}:[0-9]{1,2}$',
      description: "form `16:9`; one of the model's aspect_ratios",
    }),
    input_image_url: Type.Optional(MediaOrHttpUrl),
    negative_prompt: Type.Optional(Type.String({ maxLength: 4000 })),
    params: Type.Optional(
      RecordOf({ maxLength: 100 }, Type.Unknown(), {
        maxProperties: 50,
        description:
          'model-specific inputs passed to the provider (`seed` integer; `duration` seconds for per-second video prices); ' +
          `at most ${MAX_PARAMS_BYTES} bytes of JSON`,
      }),
    ),
  },
  { additionalProperties: false },
);
export type GenerateBody = Static<typeof GenerateBody>;

const ElementRef = Type.Object({ id: Type.String(), type: Type.String(), url: Type.String() });

/** The result of a queued generation's job (`generation.poll`): the element on the board and its history entry. */
export const GenerationJobResult = Type.Object(
  { element: ElementRef, history_entry_id: Type.String() },
  { title: 'GenerationJobResult' },
);

export const GenerateAnswer = Type.Object(
  {
    status: Type.Enum(['complete', 'queued'], {
      description: '`complete`: the element is on the board; `queued`: poll GET /api/ai/jobs/{job_id}',
    }),
    element: Type.Optional(ElementRef),
    job_id: Type.Optional(Type.String()),
    history_entry_id: Type.String(),
    cost_estimate: Type.Number({ description: "US dollars, from the catalogue's list price (docs/generation.md)" }),
  },
  { title: 'GenerateResult' },
);

export const JobParam = Type.Object({ job_id: Id });

/** The spec's generation poll as one job model: the job's fields, `job_id`, and the element once it is on the board. */
export const AiJob = Type.Object(
  {
    ...jobOf('generation.poll', GenerationJobResult).properties,
    job_id: Type.String({ description: 'the same as `id`' }),
    element: Type.Optional(ElementRef),
    history_entry_id: Type.String(),
    provider_cancelled: Type.Optional(
      Type.Boolean({ description: 'cancel only: whether the provider confirmed the cancel' }),
    ),
  },
  { title: 'GenerationStatus' },
);

export const HistoryQuery = Type.Object({
  board_id: Type.Optional(Id),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
});

export const HistoryEntry = Type.Object({
  id: Type.String(),
  board_id: Type.String(),
  model: Type.String(),
  provider: Type.String(),
  kind: Type.String(),
  prompt: Type.String(),
  negative_prompt: Type.Union([Type.String(), Type.Null()]),
  aspect_ratio: Type.Union([Type.String(), Type.Null()]),
  params: Type.Record(Type.String(), Type.Unknown()),
  status: Type.Enum(['running', 'queued', 'complete', 'error', 'cancelled']),
  cost_estimate: Type.Number(),
  job_id: Type.Union([Type.String(), Type.Null()]),
  provider_job_id: Type.Union([Type.String(), Type.Null()]),
  element_id: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  error_code: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  finished_at: Type.Union([Type.String(), Type.Null()]),
  duration_ms: Type.Union([Type.Number(), Type.Null()]),
});

export const HistoryList = Type.Object({ entries: Type.Array(HistoryEntry) });

export const EnhanceBody = Type.Object(
  {
    prompt: Type.String({ minLength: 1, maxLength: 8000 }),
    reference_image_url: Type.Optional(
      Type.Union([MediaOrHttpUrl, Type.Null()], {
        description: 'sent to the model as an image part; null or absent: text only',
      }),
    ),
    model: Type.String({ minLength: 1, maxLength: 200, description: 'a chat model id from GET /api/ai/models' }),
  },
  { additionalProperties: false },
);
export type EnhanceBody = Static<typeof EnhanceBody>;

export const EnhanceAnswer = Type.Object({ enhanced_prompt: Type.String() });

export const TranscribeBody = Type.Object(
  {
    board_id: Id,
    element_id: Id,
    language: Type.Union(
      [Type.String({ pattern: '^[a-z]{2,3}$', description: 'ISO-639-1 code such as `en`' }), Type.Null()],
      { description: 'null: detect' },
    ),
  },
  { additionalProperties: false },
);
export type TranscribeBody = Static<typeof TranscribeBody>;

export const TranscribeAnswer = Type.Object({
  text: Type.String(),
  language: Type.Union([Type.String(), Type.Null()], {
    description: 'ISO-639-1: the requested one, else what the provider detected',
  }),
  segments: Type.Optional(Type.Array(Type.Object({ start: Type.Number(), end: Type.Number(), text: Type.String() }))),
  pieces: Type.Integer({ description: "how many uploads the audio took (more than 1 past the provider's size limit)" }),
});

/** `data` keys only the service writes: how an element was made and its transcript. */
export const GENERATION_DATA_KEYS = ['generation', 'transcript'] as const;
