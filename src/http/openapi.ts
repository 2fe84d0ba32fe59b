/**
 * The OpenAPI document's names, given where @fastify/swagger leaves everything inline and unnamed: every schema with
 * a `title` (set once where the schema is declared, e.g. `Type.Object({...}, {title: 'Board'})`) moves to
 * `components.schemas` under that title and is referenced from where it was (a schema with `x-document-as` is
 * documented as that schema instead), and every operation gets an
 * `operationId`, so generated clients in any language get named types and methods.
 */

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The key of a response schema's documented form, where it differs from what serialises it. */
export const DOCUMENT_AS = 'x-document-as';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

const pascal = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');

/**
 * `POST /api/moodboards/{id}/elements` -> `postMoodboardsElements`; a path ending in a parameter names it
 * (`getMoodboardsById`), so the list and the item differ. `withParams` names every parameter, for paths whose short
 * names clash (`/api/sounds/{sound}/play` and `/api/sounds/play`). A route may set its own `operationId`.
 */
export function operationIdOf(method: string, url: string, withParams = false): string {
  const segments = url
    .replace(/^\/api\//, '/')
    .split('/')
    .filter(Boolean);
  const words = segments.map((s, i) =>
    !s.includes('{') ? pascal(s) : withParams || i === segments.length - 1 ? `By${pascal(s)}` : '',
  );
  return method + words.join('');
}

/** Same JSON, ignoring key order. */
function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b))
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return a === b;
}

/** Names the document's schemas and operations (the swagger plugin's `transformObject`); throws on a clash. */
export function nameSchemasAndOperations<D extends Json>(doc: D): D {
  const components = (isObject(doc.components) ? doc.components : {}) as Json;
  const named: Json = isObject(components.schemas) ? { ...components.schemas } : {};

  const hoist = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(hoist);
    if (!isObject(node)) return node;
    // A schema served one way and documented as another (free-form element data, with the keys the service fills).
    if (isObject(node[DOCUMENT_AS])) return hoist(node[DOCUMENT_AS]);
    const inner: Json = {};
    for (const [key, value] of Object.entries(node))
      inner[key] = key === 'properties' && isObject(value) ? mapValues(value, hoist) : hoist(value);
    const title = inner.title;
    if (typeof title !== 'string' || typeof inner.$ref === 'string') return inner;
    // Where it is used, a named schema may be nullable (a union with null) or described: those stay at the use.
    const { nullable, description, ...schema } = inner;
    const seen = named[title] as Json | undefined;
    if (seen === undefined) named[title] = description === undefined ? schema : { ...schema, description };
    else {
      const { description: _d, ...seenSchema } = seen;
      if (!sameJson(seenSchema, schema))
        throw new Error(`two different schemas are named ${title} (a schema's title must name one schema)`);
    }
    const ref = { $ref: `#/components/schemas/${title}` };
    const stored = named[title] as Json;
    const local = {
      ...(nullable === true ? { nullable } : {}),
      ...(description !== undefined && description !== stored.description ? { description } : {}),
    };
    // OpenAPI 3.0 ignores the siblings of a $ref: a nullable or described use wraps it.
    return Object.keys(local).length > 0 ? { allOf: [ref], ...local } : ref;
  };

  const paths = isObject(doc.paths) ? doc.paths : {};
  const operations = Object.entries(paths).flatMap(([url, item]) =>
    isObject(item)
      ? METHODS.filter((m) => isObject(item[m])).map((method) => ({ url, method, op: item[method] as Json }))
      : [],
  );
  const short = new Map<string, number>();
  for (const { url, method } of operations) {
    const id = operationIdOf(method, url);
    short.set(id, (short.get(id) ?? 0) + 1);
  }
  const ids = new Map<string, string>();
  const newPaths: Json = Object.fromEntries(Object.entries(paths).map(([url, item]) => [url, { ...(item as Json) }]));
  for (const { url, method, op } of operations) {
    const shortId = operationIdOf(method, url);
    const operationId =
      typeof op.operationId === 'string'
        ? op.operationId
        : short.get(shortId) === 1
          ? shortId
          : operationIdOf(method, url, true);
    const other = ids.get(operationId);
    if (other) throw new Error(`${method.toUpperCase()} ${url} and ${other} both have operationId ${operationId}`);
    ids.set(operationId, `${method.toUpperCase()} ${url}`);
    (newPaths[url] as Json)[method] = { operationId, ...mapValues(op, hoist) };
  }
  const sorted = Object.fromEntries(
    Object.keys(named)
      .sort()
      .map((k) => [k, named[k]]),
  );
  return { ...doc, paths: newPaths, components: { ...components, schemas: sorted } };
}

const mapValues = (o: Json, f: (v: unknown) => unknown): Json =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));
