import type { ModelApi } from '../catalogue.js';
import { falClient } from './fal.js';
import { replicateClient } from './replicate.js';
import type { QueueClient } from './types.js';
import { veoClient } from './veo.js';

const CLIENTS: Partial<Record<ModelApi, QueueClient>> = { replicate: replicateClient, fal: falClient, veo: veoClient };

export function queueClient(api: ModelApi): QueueClient {
  const c = CLIENTS[api];
  if (!c) throw new Error(`${api} is not a queued API`);
  return c;
}
