export interface ClientOptions {
  /** The service's origin, e.g. `http://127.0.0.1:4100`. */
  baseUrl: string;
  /** API_TOKEN when the service has one: sent as `Authorization: Bearer` (`process.env.API_TOKEN` may be unset). */
  token?: string | undefined;
  /** A fetch to use instead of the global one (tests, proxies, Electron's net.fetch). */
  fetch?: typeof fetch | undefined;
  /**
   * `api` throws a BoardMediaError for every 4xx and 5xx answer, as the helpers do, instead of answering
   * `{error}`; a call that resolves then always has its `data`.
   */
  throwOnError?: boolean | undefined;
}

/** Where the service is and how to talk to it: shared by the typed calls and the hand-written helpers. */
export class Connection {
  readonly baseUrl: string;
  readonly fetch: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    // Called through a wrapper: a browser's fetch throws "Illegal invocation" when called as another object's method.
    const f = options.fetch ?? globalThis.fetch;
    this.fetch = (input, init) => f(input, init);
  }

  url(path: string, query: Record<string, string | undefined> = {}): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, value);
    const search = params.toString();
    return `${this.baseUrl}${path}${search ? `?${search}` : ''}`;
  }

  headers(): Record<string, string> {
    return this.options.token ? { authorization: `Bearer ${this.options.token}` } : {};
  }
}
