import type * as Ai from 'ai';

/**
 * The AI SDK, loaded at the first model call. It and its providers are about 190 modules, 0.2 s of every start of
 * the service (measured), that a run without AI use never needs.
 */
let loaded: typeof Ai | undefined;
export const aiSdk = async (): Promise<typeof Ai> => (loaded ??= await import('ai'));

/** The SDK once a call has loaded it: before that, no error can be one of its own. */
export const loadedAiSdk = (): typeof Ai | undefined => loaded;
