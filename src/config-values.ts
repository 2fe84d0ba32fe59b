/** Readers of environment values shared by config.ts and the features' own config loaders. */

export class ConfigError extends Error {}

export function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

export function baseUrl(env: NodeJS.ProcessEnv, name: string, fallback: string): string;
export function baseUrl(env: NodeJS.ProcessEnv, name: string, fallback: undefined): string | undefined;
export function baseUrl(env: NodeJS.ProcessEnv, name: string, fallback: string | undefined): string | undefined {
  const raw = (env[name] ?? '').trim();
  if (!raw) return fallback;
  if (!/^https?:\/\/[^\s/]+/i.test(raw)) throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

/** One of `choices` (the first when unset). */
export function choice<T extends string>(env: NodeJS.ProcessEnv, name: string, choices: readonly T[]): T {
  const raw = (env[name] ?? '').trim();
  if (!raw) return choices[0];
  if (!(choices as readonly string[]).includes(raw))
    throw new ConfigError(`${name} must be one of ${choices.join(', ')}, got "${raw}"`);
  return raw as T;
}

export const key = (env: NodeJS.ProcessEnv, name: string) => (env[name] ?? '').trim() || undefined;
