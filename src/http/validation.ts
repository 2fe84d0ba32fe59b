import AjvCompiler from '@fastify/ajv-compiler';
import type { FastifyServerOptions } from 'fastify';
import { nonFinitePath } from './json-body.js';

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>;
type BuildFromPool = ReturnType<typeof AjvCompiler>;
type Validate = ((data: unknown, dataCtx?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };

/**
 * Ajv converts "Infinity" and "1e400" to Infinity and then skips `minimum`/`maximum` (it checks them only for finite
 * numbers), so a converted value is checked once more: a number must be finite.
 */
function finiteOnly(validate: Validate): Validate {
  const checked: Validate = (data, dataCtx) => {
    if (!validate(data, dataCtx)) return false;
    const at = nonFinitePath(data);
    if (at === undefined) return true;
    return {
      error: [
        {
          instancePath: at.map((s) => `/${s}`).join(''),
          keyword: 'type',
          params: {},
          message: 'must be a finite number',
        },
      ],
    };
  };
  Object.defineProperty(checked, 'errors', { get: () => validate.errors });
  // Fastify passes the parent object to validators that have a schemaEnv (Ajv's), so defaults can be set on it.
  checked.schemaEnv = validate.schemaEnv;
  return checked;
}

/**
 * A validator compiled at its first use. Ajv turns each schema into code; for every route of the service that took
 * about 0.4 CPU-s at each start (a profile of a test service's start), most of it for routes a run never calls. Fastify
 * reads `errors` and `schemaEnv` only when it validates a request, so the compiled validator's are passed through
 * then. Every route's schema is still compiled by the error-model test, which calls every operation.
 */
function compiledOnUse(compile: () => Validate): Validate {
  let compiled: Validate | undefined;
  const validator = () => (compiled ??= compile());
  const validate: Validate = (data, dataCtx) => validator()(data, dataCtx);
  Object.defineProperty(validate, 'errors', { get: () => validator().errors });
  Object.defineProperty(validate, 'schemaEnv', { get: () => validator().schemaEnv });
  return validate;
}

/**
 * Validators per part of the request. Query strings, path parameters and headers are text, so their values are
 * converted to the schema's types ("5" -> 5, `?a=1&a=2` -> [1, 2]), and must end finite. A JSON body is already
 * typed: it is validated exactly as sent, because a conversion there turns client mistakes into stored data
 * (`{"name": 42}` became a board named "42", `"Infinity"` a width no answer could serialise). Both use Fastify's own
 * Ajv pool and the server's `ajv` options; ajv's `strictNumbers` (its default) refuses NaN and Infinity in bodies.
 */
export function perPartValidation(): SchemaController {
  const pool = AjvCompiler();
  const buildValidator = (externalSchemas: Parameters<BuildFromPool>[0], options: Parameters<BuildFromPool>[1]) => {
    const build = (coerceTypes: 'array' | false) =>
      pool(externalSchemas, {
        ...options,
        customOptions: { ...options?.customOptions, coerceTypes },
      } as Parameters<BuildFromPool>[1]);
    const converting = build('array');
    const exact = build(false);
    // At run time Fastify passes the route definition ({schema, method, url, httpPart}); the pool's types name only the schema.
    return ((route: { httpPart?: string }) =>
      compiledOnUse(() =>
        route.httpPart === 'body'
          ? (exact(route as never) as unknown as Validate)
          : finiteOnly(converting(route as never) as unknown as Validate),
      )) as unknown as ReturnType<BuildFromPool>;
  };
  return { compilersFactory: { buildValidator } };
}
