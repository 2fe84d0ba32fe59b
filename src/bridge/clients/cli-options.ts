/** Thrown for a bad command line or environment; the CLI prints the message and exits with status 2. */
export class UsageError extends Error {}

interface CommonOptions {
  serviceUrl: string;
  botId: string;
  apiToken?: string;
}

const BOT_ID = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Reads `--name value` / `--name=value` flags until the first argument that is not a known flag (or after `--`);
 * the rest is returned as positionals (the terminal's command and its own arguments).
 */
export function parseFlags(args: string[], known: readonly string[]): { flags: Map<string, string>; rest: string[] } {
  const flags = new Map<string, string>();
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--') {
      i++;
      break;
    }
    if (!arg.startsWith('--')) break;
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (name === 'help') {
      flags.set('help', 'true');
      continue;
    }
    if (!known.includes(name)) throw new UsageError(`unknown option --${name}`);
    const value = eq < 0 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    flags.set(name, value);
  }
  return { flags, rest: args.slice(i) };
}

/** Service URL, bot id and API token from flags, then environment, then defaults. */
export function commonOptions(flags: Map<string, string>, env: NodeJS.ProcessEnv): CommonOptions {
  const botId = flags.get('bot-id') ?? env.BOT_ID ?? 'default';
  if (!BOT_ID.test(botId)) throw new UsageError(`bot id "${botId}" may only hold letters, digits, _ . - (at most 64)`);
  const serviceUrl = flags.get('url') ?? env.SERVICE_URL ?? `http://127.0.0.1:${env.PORT ?? 4100}`;
  try {
    new URL(serviceUrl);
  } catch {
    throw new UsageError(`service URL "${serviceUrl}" is not a URL`);
  }
  return { serviceUrl, botId, apiToken: env.API_TOKEN || undefined };
}

export function positiveInt(flags: Map<string, string>, name: string, fallback: number): number {
  const raw = flags.get(name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) <= 0) throw new UsageError(`--${name} must be a positive whole number`);
  return Number(raw);
}

/** Wraps a subcommand so that a usage mistake prints its message and exits with status 2 instead of a stack trace. */
export function command(run: (args: string[]) => Promise<void>): (args: string[]) => Promise<void> {
  return async (args) => {
    try {
      await run(args);
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      process.stderr.write(`${err.message}\n`);
      process.exitCode = 2;
    }
  };
}
