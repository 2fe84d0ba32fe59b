import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startService, type TestService } from '../helpers/service.js';

/**
 * Generic checks over the served OpenAPI document, so routes added later are covered without touching this file:
 * every JSON body field refuses a value of the wrong JSON type (bodies are never converted), and every number a
 * request can carry has both bounds.
 */

type Schema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  minItems?: number;
  pattern?: string;
  default?: unknown;
};
interface Operation {
  parameters?: { in: string; name: string; schema: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
}

const jsonType = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** The JSON types a schema accepts (integer counts as number); undefined when it accepts anything. */
function allowedTypes(s: Schema): Set<string> | undefined {
  const branches = s.anyOf ?? s.oneOf;
  if (branches) {
    const all = new Set<string>();
    for (const b of branches) {
      const t = allowedTypes(b);
      if (!t) return undefined;
      for (const x of t) all.add(x);
    }
    return all;
  }
  if (s.enum) return new Set(s.enum.map(jsonType));
  if ('const' in s) return new Set([jsonType(s.const)]);
  if (s.type === undefined) return s.properties ? new Set(['object']) : undefined;
  const types = Array.isArray(s.type) ? s.type : [s.type];
  return new Set(types.map((t) => (t === 'integer' ? 'number' : t)));
}

/**
 * A value of the wrong type, the kind a careless client sends: a number for a string, a numeric string for a
 * number, "true" for a boolean, a scalar for an array, an array for an object.
 */
function wrongValue(s: Schema): unknown {
  const allowed = allowedTypes(s);
  if (!allowed) return undefined;
  const candidates: unknown[] = [];
  if (allowed.has('string')) candidates.push(42);
  if (allowed.has('number')) candidates.push('42');
  if (allowed.has('boolean')) candidates.push('true');
  if (allowed.has('array')) candidates.push('a');
  if (allowed.has('object')) candidates.push(['a']);
  candidates.push(42, '42', ['a'], true);
  return candidates.find((c) => !allowed.has(jsonType(c)));
}

/** A value the schema accepts (for the other required fields, so that only the wrong one can fail). */
function validValue(s: Schema): unknown {
  if (s.default !== undefined) return s.default;
  if (s.enum) return s.enum[0];
  if ('const' in s) return s.const;
  const branches = s.anyOf ?? s.oneOf;
  if (branches) return validValue(branches.find((b) => b.type !== 'null') ?? branches[0]);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'string': {
      const candidates = ['x'.repeat(Math.max(1, s.minLength ?? 1)), 'pty-x', 'a1', '/media/x', '1:1'];
      return s.pattern ? (candidates.find((c) => new RegExp(s.pattern!, 'u').test(c)) ?? candidates[0]) : candidates[0];
    }
    case 'number':
    case 'integer': {
      const low = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 0);
      const high = s.maximum ?? s.exclusiveMaximum ?? low;
      const step = s.multipleOf ?? 1;
      return Math.min(Math.ceil(low / step) * step, high);
    }
    case 'boolean':
      return false;
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => validValue(s.items ?? {}));
    case 'object':
    case undefined:
      return Object.fromEntries((s.required ?? []).map((k) => [k, validValue(s.properties?.[k] ?? {})]));
    default:
      return null;
  }
}

const routes = (doc: { paths: Record<string, Record<string, Operation>> }) =>
  Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  );

describe('every route, from the OpenAPI document', () => {
  let svc: TestService;
  let doc: { paths: Record<string, Record<string, Operation>> };
  before(async () => {
    svc = await startService();
    doc = (await svc.api('GET', '/api/openapi.json')).body;
  });
  after(() => svc.close());

  test('every typed field of every JSON body refuses a value of the wrong type with 400 naming it', async () => {
    let routesChecked = 0;
    let fieldsChecked = 0;
    for (const { path, method, op } of routes(doc)) {
      const schema = op.requestBody?.content['application/json']?.schema;
      if (!schema) continue; // no body, or multipart (its fields are text by nature)
      // Path parameters can be any valid placeholder: body validation runs before the handler looks anything up.
      const url = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
        const param = op.parameters?.find((p) => p.in === 'path' && p.name === name);
        return encodeURIComponent(String(param ? validValue(param.schema) : '1'));
      });
      const base = validValue(schema) as Record<string, unknown>;
      let fieldsHere = 0;
      for (const [field, fieldSchema] of Object.entries(schema.properties ?? {})) {
        const wrong = wrongValue(fieldSchema);
        if (wrong === undefined) continue; // accepts any JSON (free-form data)
        const res = await svc.api(method, url, { ...base, [field]: wrong });
        const what = `${method} ${path} ${field}=${JSON.stringify(wrong)}`;
        assert.equal(res.status, 400, `${what}: ${res.text}`);
        assert.equal(res.body.error.code, 'invalid_request', what);
        assert.equal(res.body.error.details?.[0]?.field, `body.${field}`, `${what}: ${res.text}`);
        fieldsHere++;
      }
      if (!schema.properties) {
        // A body that is not an object: send the wrong type for the body itself.
        const res = await svc.api(method, url, JSON.stringify(wrongValue(schema) ?? 42));
        assert.equal(res.status, 400, `${method} ${path}: ${res.text}`);
        fieldsHere++;
      }
      if (fieldsHere > 0) routesChecked++;
      fieldsChecked += fieldsHere;
    }
    // Not vacuous: the service has well over twenty JSON-body routes.
    assert.ok(routesChecked >= 20, `only ${routesChecked} JSON-body routes found`);
    assert.ok(fieldsChecked >= 60, `only ${fieldsChecked} fields checked`);
  });

  test('every number a request can carry (path, query, body) is bounded on both sides', () => {
    const unbounded: string[] = [];
    const walk = (s: unknown, where: string) => {
      if (!s || typeof s !== 'object') return;
      const node = s as Schema;
      const types = Array.isArray(node.type) ? node.type : [node.type];
      if (types.includes('number') || types.includes('integer')) {
        const low = node.minimum !== undefined || node.exclusiveMinimum !== undefined;
        const high = node.maximum !== undefined || node.exclusiveMaximum !== undefined;
        if (!low || !high) unbounded.push(where);
      }
      for (const [k, v] of Object.entries(node)) walk(v, `${where}/${k}`);
    };
    let numbers = 0;
    for (const { path, method, op } of routes(doc)) {
      for (const p of op.parameters ?? []) walk(p.schema, `${method} ${path} ${p.in} ${p.name}`);
      if (op.requestBody) walk(op.requestBody, `${method} ${path} body`);
      numbers += JSON.stringify(op.parameters ?? []).split('"type":"number"').length - 1;
      numbers += JSON.stringify(op.requestBody ?? {}).split(/"type":"(?:number|integer)"/).length - 1;
    }
    assert.deepEqual(unbounded, []);
    assert.ok(numbers > 10, 'request schemas with numbers were found');
  });
});
