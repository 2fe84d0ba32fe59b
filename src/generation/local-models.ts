import type { FastifyBaseLogger } from 'fastify';
import type { ProviderRegistry } from './providers.js';

/** How long a local server's model list is reused; it changes only when the user pulls or removes a model. */
const CACHE_MS = 30_000;
/** A local server that does not answer this fast is treated as having no models right now. */
const LIST_TIMEOUT_MS = 3_000;

/**
 * The models a local OpenAI-compatible server (Ollama, LM Studio) reports at `GET {base}/models`.
 * Unreachable or malformed answers give an empty list (logged once per change), never an error of the listing.
 */
export class LocalModels {
  private cached?: { at: number; version: number; ids: string[] };
  private warned?: string;

  constructor(
    private readonly providers: ProviderRegistry,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Model ids, or undefined when the provider is configured but its list could not be read. */
  async list(): Promise<string[] | undefined> {
    const s = this.providers.settings('openai-compatible');
    if (!s) return [];
    const now = Date.now();
    if (this.cached && this.cached.version === this.providers.version && now - this.cached.at < CACHE_MS)
      return this.cached.ids;
    try {
      const res = await s.fetch(`${s.baseUrl}/models`, {
        headers: s.apiKey ? { authorization: `Bearer ${s.apiKey}` } : {},
        signal: AbortSignal.timeout(LIST_TIMEOUT_MS),
      });
      if (!res.ok) throw new Error(`answered ${res.status}`);
      const body = (await res.json()) as { data?: { id?: unknown }[] };
      const ids = (body.data ?? [])
        .map((m) => m.id)
        .filter((id): id is string => typeof id === 'string' && id.length > 0);
      this.cached = { at: now, version: this.providers.version, ids };
      this.warned = undefined;
      return ids;
    } catch (err) {
      const why =
        err instanceof Error ? ((err.cause as { code?: string } | undefined)?.code ?? err.message) : String(err);
      if (this.warned !== why)
        this.log.warn({ base_url: s.baseUrl, why }, 'the OpenAI-compatible server did not list its models');
      this.warned = why;
      return undefined;
    }
  }
}
