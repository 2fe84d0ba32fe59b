import fsp from 'node:fs/promises';
import { Cancelled, DomainError, Unprocessable, UpstreamFailed } from '../errors.js';
import { filenameFromTitle } from '../files/names.js';
import { extensionForMime } from '../files/media-types.js';
import { badRequest } from '../http/errors.js';
import { storedJson } from '../http/json-body.js';
import { produceElement } from '../media/new-element.js';
import { sniff } from '../media/sniff.js';
import { aiSdk } from './ai-sdk.js';
import { OPENAI_IMAGE_SIZES, type CatalogueEntry } from './catalogue.js';
import type { GenerationContext } from './context.js';
import { mapProviderError } from './errors.js';
import { readInputImage, type InputImage } from './fetch-file.js';
import type { HistoryEntry } from './history.js';
import { isQueued, resolveModel } from './models.js';
import { queueClient } from './queue-clients/index.js';
import type { ProviderSettings } from './providers.js';
import { MAX_PARAMS_BYTES, type GenerateBody } from './schemas.js';
import { imageModel } from './sdk.js';

export const POLL_JOB = 'generation.poll';

/** What the poll job keeps: enough to poll the provider's job again after a restart. */
export interface PollParams {
  history_id: string;
  board_id: string;
  model: string;
  provider_job_id: string;
}

declare module '../jobs/kinds.js' {
  interface JobKinds {
    'generation.poll': PollParams;
  }
}

export interface GeneratedElement {
  id: string;
  type: string;
  url: string;
}

export type GenerateAnswer =
  | { status: 'complete'; element: GeneratedElement; history_entry_id: string; cost_estimate: number }
  | { status: 'queued'; job_id: string; history_entry_id: string; cost_estimate: number };

/** The list price times the units one request buys; rounded to 1/10000 of a dollar. */
export function costEstimate(entry: CatalogueEntry, params: Record<string, unknown>): number {
  const price = entry.price;
  if (!price) return 0;
  // Per megapixel: our fal sizes are about one megapixel in every ratio (queue-clients/fal.ts), so one unit.
  const units =
    price.per === 'second'
      ? typeof params.duration === 'number' && params.duration > 0
        ? params.duration
        : (entry.defaultSeconds ?? 1)
      : 1;
  return Math.round(price.usd * units * 10_000) / 10_000;
}

/** The first words of a prompt, as the stem of a file name. */
export function stemFromPrompt(prompt: string): string {
  const words = prompt.replace(/\s+/g, ' ').trim().slice(0, 60);
  const cut = words.length === 60 && words.includes(' ') ? words.slice(0, words.lastIndexOf(' ')) : words;
  return cut || 'generated';
}

/** The element's record of how it was made (`data.generation`). */
export function generationData(
  h: HistoryEntry,
  extra: { seed?: number; revised_prompt?: string } = {},
): Record<string, unknown> {
  return {
    generation: {
      model: h.model,
      provider: h.provider,
      prompt: h.prompt,
      ...(h.negative_prompt ? { negative_prompt: h.negative_prompt } : {}),
      aspect_ratio: h.aspect_ratio,
      params: h.params,
      ...(extra.seed !== undefined ? { seed: extra.seed } : {}),
      ...(extra.revised_prompt ? { revised_prompt: extra.revised_prompt } : {}),
      history_entry_id: h.id,
      cost_estimate: h.cost_estimate,
    },
  };
}

function checkRequest(entry: CatalogueEntry, body: GenerateBody): void {
  const ratios = entry.aspectRatios ?? [];
  if (!ratios.includes(body.aspect_ratio)) {
    throw badRequest(`${entry.id} cannot make ${body.aspect_ratio}; it can make ${ratios.join(', ')}`, [
      { field: 'body.aspect_ratio', message: `must be one of ${ratios.join(', ')}` },
    ]);
  }
  if (body.input_image_url && !entry.acceptsInputImage) {
    throw badRequest(`${entry.id} does not take an input image`, [
      { field: 'body.input_image_url', message: 'not accepted by this model' },
    ]);
  }
  const seed = body.params?.seed;
  if (seed !== undefined && !(Number.isInteger(seed) && (seed as number) >= 0 && (seed as number) <= 2 ** 32 - 1)) {
    throw badRequest('params.seed must be a whole number from 0 to 4294967295', [
      { field: 'body.params.seed', message: 'must be an integer 0..4294967295' },
    ]);
  }
}

/**
 * POST /api/ai/generate: validated against the model, then either answered at once (the image is on the board) or
 * started at the provider and handed to a poll job. Every request leaves a history entry, failures included.
 */
export async function generate(g: GenerationContext, body: GenerateBody, signal: AbortSignal): Promise<GenerateAnswer> {
  // Kept with the history entry: a model's inputs are numbers and short strings.
  storedJson(body.params ?? {}, 'body.params', MAX_PARAMS_BYTES);
  g.boards.requireBoard(body.board_id);
  const { entry, settings } = await resolveModel(g, body.model, ['image', 'video']);
  checkRequest(entry, body);
  const params = body.params ?? {};
  const inputImage = body.input_image_url
    ? await readInputImage(g, body.input_image_url, 'body.input_image_url', signal)
    : undefined;
  const history = g.history.insert({
    board_id: body.board_id,
    model: entry.id,
    provider: entry.provider,
    kind: entry.kind,
    prompt: body.prompt,
    negative_prompt: body.negative_prompt ?? null,
    aspect_ratio: body.aspect_ratio,
    params,
    status: isQueued(entry) ? 'queued' : 'running',
    cost_estimate: costEstimate(entry, params),
  });
  const request: Prepared = { entry, settings, history, body, inputImage, clientSignal: signal };
  try {
    return await (isQueued(entry) ? startQueued(g, request) : generateNow(g, request));
  } catch (err) {
    const e = signal.aborted
      ? new Cancelled('The client went away before the answer', 'aborted')
      : err instanceof DomainError
        ? err
        : mapProviderError(err, entry.provider);
    g.history.finish(history.id, { status: 'error', error: e.message, error_code: e.code });
    throw e;
  }
}

/** The AI SDK rejects options it cannot use (a wrong type in params) before any call: the client's mistake. */
function paramsError(err: unknown): DomainError | undefined {
  const name = (err as { name?: string }).name;
  if (name === 'AI_InvalidArgumentError' || name === 'AI_TypeValidationError') {
    return badRequest(`params are not valid for this model: ${(err as Error).message.slice(0, 300)}`, [
      { field: 'body.params', message: 'not valid for this model' },
    ]);
  }
  return undefined;
}

/** A validated request with its model, provider settings and history entry. */
interface Prepared {
  entry: CatalogueEntry;
  settings: ProviderSettings;
  history: HistoryEntry;
  body: GenerateBody;
  inputImage: InputImage | undefined;
  clientSignal: AbortSignal;
}

async function generateNow(
  g: GenerationContext,
  { entry, settings, history, body, inputImage, clientSignal }: Prepared,
): Promise<GenerateAnswer> {
  const timeout = AbortSignal.timeout(g.config.ai.requestTimeoutMs);
  const { seed, ...options } = body.params ?? {};
  // Neither OpenAI's image API nor Imagen 4 takes a negative prompt: it becomes a sentence of the prompt.
  const text = body.negative_prompt ? `${body.prompt}\n\nAvoid: ${body.negative_prompt}` : body.prompt;
  const { generateImage, NoImageGeneratedError } = await aiSdk();
  let result;
  try {
    result = await generateImage({
      model: await imageModel(settings, entry),
      prompt: inputImage ? { text, images: [new Uint8Array(inputImage.data)] } : text,
      n: 1,
      ...(entry.api === 'openai-image'
        ? { size: OPENAI_IMAGE_SIZES[entry.providerModel][body.aspect_ratio] }
        : { aspectRatio: body.aspect_ratio as `${number}:${number}` }),
      ...(typeof seed === 'number' ? { seed } : {}),
      providerOptions: {
        [entry.api === 'openai-image' ? 'openai' : 'google']: options as never,
      },
      maxRetries: g.config.ai.maxRetries,
      abortSignal: AbortSignal.any([clientSignal, timeout]),
    });
  } catch (err) {
    // Imagen answers a filtered prompt with no image at all (its reason stays on Google's side).
    if (NoImageGeneratedError.isInstance(err) && entry.api === 'google-imagen') {
      throw new Unprocessable(
        'content_refused',
        `The ${entry.provider} provider returned no image: its safety filters removed it`,
        { provider: entry.provider, reason: 'filtered' },
      );
    }
    throw paramsError(err) ?? mapProviderError(err, entry.provider, timeout);
  }
  if (result.warnings.length)
    g.log.warn({ model: entry.id, warnings: result.warnings }, 'the AI SDK warned about this generation');
  const image = result.image;
  // Node's native base64 decoder: the SDK's own (atob and a loop) costs ~90 ms on a 3 MiB image.
  const bytes = Buffer.from(image.base64, 'base64');
  const sniffed = sniff(bytes.subarray(0, 512));
  const ext =
    sniffed && sniffed !== 'html' && sniffed.kind === 'image' ? sniffed.ext : extensionForMime(image.mediaType);
  if (!ext)
    throw new UpstreamFailed(
      'provider_error',
      `The ${entry.provider} provider sent an image of unknown type (${image.mediaType})`,
      { provider: entry.provider },
    );
  const meta = (
    result.providerMetadata as Record<string, { images?: ({ revisedPrompt?: string } | null)[] }> | undefined
  )?.[entry.provider]?.images?.[0];
  const made = await produceElement(
    g,
    body.board_id,
    filenameFromTitle(stemFromPrompt(body.prompt), 'generated', ext),
    (temp) => fsp.writeFile(temp, bytes, { flag: 'wx' }),
    generationData(history, { seed: typeof seed === 'number' ? seed : undefined, revised_prompt: meta?.revisedPrompt }),
  );
  g.history.finish(history.id, { status: 'complete', element_id: made.element.id });
  return {
    status: 'complete',
    element: { id: made.element.id, type: made.element.type, url: made.url },
    history_entry_id: history.id,
    cost_estimate: history.cost_estimate,
  };
}

async function startQueued(
  g: GenerationContext,
  { entry, settings, history, body, inputImage, clientSignal }: Prepared,
): Promise<GenerateAnswer> {
  const timeout = AbortSignal.timeout(g.config.ai.requestTimeoutMs);
  let providerJobId: string;
  try {
    providerJobId = await queueClient(entry.api).start(
      settings,
      entry,
      {
        prompt: body.prompt,
        negativePrompt: body.negative_prompt,
        aspectRatio: body.aspect_ratio,
        inputImage,
        params: body.params ?? {},
      },
      AbortSignal.any([clientSignal, timeout]),
    );
  } catch (err) {
    throw mapProviderError(err, entry.provider, timeout);
  }
  const job = g.jobs.enqueue(
    POLL_JOB,
    { history_id: history.id, board_id: body.board_id, model: entry.id, provider_job_id: providerJobId },
    { boardId: body.board_id, idPrefix: 'aijob_' },
  );
  g.history.update(history.id, { provider_job_id: providerJobId, job_id: job.id });
  return { status: 'queued', job_id: job.id, history_entry_id: history.id, cost_estimate: history.cost_estimate };
}
