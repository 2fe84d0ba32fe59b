import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { AiConfig } from './config.js';
import { replaceFileAtomic } from '../files/atomic.js';
import { badRequest } from '../http/errors.js';
import { InvalidInput } from '../errors.js';
import { refuseForbiddenHost } from '../net/address-policy.js';

export const PROVIDERS = ['openai', 'anthropic', 'google', 'replicate', 'fal', 'openai-compatible'] as const;
export type ProviderId = (typeof PROVIDERS)[number];

/** The environment variables that configure each provider (named in errors and in GET /api/ai/providers). */
export const PROVIDER_ENV: Record<ProviderId, { key: string; baseUrl: string }> = {
  openai: { key: 'OPENAI_API_KEY', baseUrl: 'OPENAI_BASE_URL' },
  anthropic: { key: 'ANTHROPIC_API_KEY', baseUrl: 'ANTHROPIC_BASE_URL' },
  google: { key: 'GOOGLE_GENERATIVE_AI_API_KEY', baseUrl: 'GOOGLE_BASE_URL' },
  replicate: { key: 'REPLICATE_API_TOKEN', baseUrl: 'REPLICATE_BASE_URL' },
  fal: { key: 'FAL_KEY', baseUrl: 'FAL_QUEUE_URL' },
  'openai-compatible': { key: 'OPENAI_COMPATIBLE_API_KEY', baseUrl: 'OPENAI_COMPATIBLE_BASE_URL' },
};

/** What a call to a provider needs. `apiKey` is absent only for a keyless local OpenAI-compatible server. */
export interface ProviderSettings {
  provider: ProviderId;
  apiKey: string | undefined;
  baseUrl: string;
  /** Every call to the provider goes through it: the address policy (src/net), as a base URL can be set by a request. */
  fetch: typeof fetch;
}

/** The public view of a provider: never the key itself. */
export interface ProviderView {
  provider: ProviderId;
  configured: boolean;
  /** Where the key (or, for openai-compatible, the base URL) comes from. */
  source: 'runtime' | 'env' | null;
  key_last4: string | null;
  base_url: string | null;
  env: { key: string; base_url: string };
}

interface StoredProvider {
  api_key?: string;
  base_url?: string;
}

/** Keys set at run time, in DATA_DIR; readable by the user only. */
const FILE_NAME = 'ai-providers.json';
const FILE_MODE = 0o600;

/** Last four characters, and only of keys long enough that four characters give little away. */
const last4 = (key: string | undefined) => (key && key.length >= 12 ? key.slice(-4) : null);

/**
 * Provider keys and base URLs: the environment's, overridden per provider by what a user set at run time
 * (PUT /api/ai/providers/{provider}). Keys never leave this class except into a provider call.
 */
export class ProviderRegistry {
  private runtime: Partial<Record<ProviderId, StoredProvider>> = {};
  private readonly file: string;
  /** Bumped on every change, so cached provider clients built from older settings are rebuilt. */
  version = 0;

  constructor(
    private readonly env: AiConfig,
    dataDir: string,
    private readonly log: FastifyBaseLogger,
    private readonly fetch: typeof globalThis.fetch,
  ) {
    this.file = path.join(dataDir, FILE_NAME);
    this.load();
  }

  /** Synchronous on purpose: it runs once at start, before any route can ask for a key. */
  private load(): void {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        this.log.warn(
          { file: this.file, code: (err as NodeJS.ErrnoException).code },
          'cannot read the AI provider keys',
        );
      return;
    }
    try {
      // A copy restored from a backup may have wider permissions than the file we write.
      if (process.platform !== 'win32' && (fs.statSync(this.file).mode & 0o077) !== 0)
        fs.chmodSync(this.file, FILE_MODE);
      const parsed = JSON.parse(text) as { providers?: Record<string, StoredProvider> };
      for (const id of PROVIDERS) {
        const p = parsed.providers?.[id];
        if (p && typeof p === 'object') this.runtime[id] = { api_key: str(p.api_key), base_url: str(p.base_url) };
      }
    } catch {
      // The message of a JSON error quotes the file's text, which holds keys: say only that it is unreadable.
      this.log.warn({ file: this.file }, 'the AI provider keys file is not valid JSON; it is ignored until replaced');
    }
  }

  private envOf(id: ProviderId): { apiKey: string | undefined; baseUrl: string | undefined } {
    return id === 'openai-compatible' ? this.env.openaiCompatible : this.env[id];
  }

  /** The settings a call uses, or undefined when the provider is not configured. */
  settings(id: ProviderId): ProviderSettings | undefined {
    const env = this.envOf(id);
    const rt = this.runtime[id] ?? {};
    const apiKey = rt.api_key ?? env.apiKey;
    const baseUrl = rt.base_url ?? env.baseUrl;
    if (!baseUrl) return undefined;
    if (id !== 'openai-compatible' && !apiKey) return undefined;
    return { provider: id, apiKey, baseUrl, fetch: this.fetch };
  }

  /** The settings, or 400 naming what configures the provider. */
  require(id: ProviderId, what: string): ProviderSettings {
    const s = this.settings(id);
    if (!s) throw notConfigured(id, what);
    return s;
  }

  isConfigured(id: ProviderId): boolean {
    return this.settings(id) !== undefined;
  }

  view(id: ProviderId): ProviderView {
    const env = this.envOf(id);
    const rt = this.runtime[id] ?? {};
    const s = this.settings(id);
    const keyFromRuntime = rt.api_key !== undefined;
    const source = !s
      ? null
      : id === 'openai-compatible'
        ? rt.base_url !== undefined
          ? 'runtime'
          : 'env'
        : keyFromRuntime
          ? 'runtime'
          : 'env';
    return {
      provider: id,
      configured: s !== undefined,
      source,
      key_last4: last4(rt.api_key ?? env.apiKey),
      base_url: rt.base_url ?? env.baseUrl ?? null,
      env: { key: PROVIDER_ENV[id].key, base_url: PROVIDER_ENV[id].baseUrl },
    };
  }

  list(): ProviderView[] {
    return PROVIDERS.map((id) => this.view(id));
  }

  /** Sets a runtime key and/or base URL; the file is replaced atomically and created readable by the user only. */
  async set(id: ProviderId, input: { api_key?: string; base_url?: string }): Promise<ProviderView> {
    if (input.api_key === undefined && input.base_url === undefined)
      throw badRequest('Send api_key, base_url or both', [
        { field: 'body', message: 'api_key or base_url is required' },
      ]);
    if (input.base_url !== undefined) checkBaseUrl(input.base_url);
    const next = {
      ...this.runtime,
      [id]: {
        ...this.runtime[id],
        ...input,
        ...(input.base_url ? { base_url: input.base_url.replace(/\/+$/, '') } : {}),
      },
    };
    await this.save(next);
    this.log.info({ provider: id, fields: Object.keys(input) }, 'AI provider settings changed');
    return this.view(id);
  }

  /** Forgets the runtime settings of a provider; the environment's (if any) apply again. */
  async remove(id: ProviderId): Promise<ProviderView> {
    const next = { ...this.runtime };
    delete next[id];
    await this.save(next);
    this.log.info({ provider: id }, 'AI provider runtime settings removed');
    return this.view(id);
  }

  private async save(next: Partial<Record<ProviderId, StoredProvider>>): Promise<void> {
    await replaceFileAtomic(this.file, JSON.stringify({ version: 1, providers: next }, null, 2), { mode: FILE_MODE });
    // Replacing keeps the temp file's mode, but an older file may have been created before this rule.
    if (process.platform !== 'win32') await fsp.chmod(this.file, FILE_MODE);
    this.runtime = next;
    this.version++;
  }
}

const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);

function checkBaseUrl(url: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw badRequest(`base_url "${url}" is not an absolute URL`, [
      { field: 'body.base_url', message: 'must be an http(s) URL' },
    ]);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw badRequest(`base_url must be an http(s) URL, not ${u.protocol}`, [
      { field: 'body.base_url', message: 'must be an http(s) URL' },
    ]);
  }
  refuseForbiddenHost(u); // said now; a name is checked at each call's connection
}

/** 400 saying which setting enables the provider. */
export function notConfigured(id: ProviderId, what: string): InvalidInput {
  const env = PROVIDER_ENV[id];
  const how =
    id === 'openai-compatible'
      ? `set ${env.baseUrl} (and ${env.key} if the server needs one) or PUT /api/ai/providers/${id} with a base_url`
      : `set ${env.key} or PUT /api/ai/providers/${id} with an api_key`;
  return new InvalidInput(
    `${what} needs the ${id} provider, which is not configured: ${how}`,
    { provider: id, env: [env.key, env.baseUrl] },
    'provider_not_configured',
  );
}
