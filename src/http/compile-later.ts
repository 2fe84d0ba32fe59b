import type { TSchema } from 'typebox';
import type { Validator } from 'typebox/compile';

/** What `Compile(schema)` answers (a validator with no context). */
type Compiled<T extends TSchema> = ReturnType<typeof import('typebox/compile').Compile<T>>;

/**
 * A TypeBox validator compiled at its first use. `typebox/compile` is about 300 modules past the type builder the
 * schemas need (0.17 s of every start of the service, measured), and only an agent's tool call and a board import
 * check a value with it.
 */
export function compileLater<T extends TSchema>(schema: T): () => Promise<Compiled<T> & Validator> {
  let compiled: Promise<Compiled<T>> | undefined;
  return () => (compiled ??= import('typebox/compile').then(({ Compile }) => Compile(schema)));
}
