import type { FastifyInstance } from 'fastify';
import { InvalidInput } from '../errors.js';

/** Deeper documents are refused: no client sends them, and serialising them would overflow the stack. */
export const MAX_JSON_DEPTH = 64;

/**
 * Values (objects, arrays, numbers, strings, ...) a JSON body may hold unless its route sets `config.maxJsonValues`.
 * Parsing, checking and storing cost about 1 ms per 5,000 values whatever their bytes: 8 MiB of `[0]` is 4 million
 * values and held the loop 3.5 s. Counted on the text before it is parsed.
 */
export const DEFAULT_MAX_JSON_VALUES = 100_000;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route's own limit on the values of its JSON body (DEFAULT_MAX_JSON_VALUES otherwise). */
    maxJsonValues?: number;
  }
}

/**
 * The values of a JSON text, counted without parsing it: one, plus one for each `[`, `{` and `,` outside strings
 * (an empty array or object counts one too many). One pass over the characters.
 */
export function jsonValueCount(text: string): number {
  let count = 1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x2c || c === 0x5b || c === 0x7b) count++;
  }
  return count;
}

/**
 * Fields one JSON object may hold. Copying an object of 100,000 fields (a video project's channel, spread when it is
 * read) held the loop 0.5 s, and a project holding one blocked every read of it for 1 to 3 s (bench/probe). No
 * client's object comes near: element data, project items and parameters have tens of fields.
 */
export const MAX_OBJECT_KEYS = 10_000;

type Segment = string | number;

/**
 * The first object of a JSON text with more than `limit` fields, found without parsing it (parsing an object of
 * 100,000 fields held the loop up to 0.75 s): its path and its field count so far. One pass over the characters; a
 * key's text is decoded only for the path of the object found. The text is assumed to be JSON (a malformed one is
 * refused by the parse that follows).
 */
export function widestObject(text: string, limit: number): { at: Segment[]; fields: number } | undefined {
  // One frame per open object or array: its fields or its current index, and where its current key's text is.
  const frames: { object: boolean; n: number; keyStart: number; keyEnd: number }[] = [];
  let inString = false;
  let start = 0;
  let end = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) {
        inString = false;
        end = i + 1;
      }
    } else if (c === 0x22) {
      inString = true;
      start = i;
    } else if (c === 0x7b || c === 0x5b) frames.push({ object: c === 0x7b, n: 0, keyStart: 0, keyEnd: 0 });
    else if (c === 0x7d || c === 0x5d) frames.pop();
    else if (frames.length > 0) {
      const top = frames[frames.length - 1];
      if (c === 0x3a && top.object) {
        top.keyStart = start;
        top.keyEnd = end;
        if (++top.n > limit) {
          try {
            const at = frames
              .slice(0, -1)
              .map((f): Segment => (f.object ? (JSON.parse(text.slice(f.keyStart, f.keyEnd)) as string) : f.n));
            return { at, fields: top.n };
          } catch {
            // A key that is not a JSON string: the text is malformed, which its parse refuses.
            return undefined;
          }
        }
      } else if (c === 0x2c && !top.object) top.n++;
    }
  }
  return undefined;
}

/** A 400 for an object of more than MAX_OBJECT_KEYS fields, at `field`. */
function tooManyFields(field: string, fields: number): InvalidInput {
  return new InvalidInput(
    `${field} has ${fields} fields or more; an object may have at most ${MAX_OBJECT_KEYS}`,
    [{ field, message: `must have at most ${MAX_OBJECT_KEYS} fields` }],
    'too_many_fields',
  );
}

/**
 * Walks a parsed JSON value without recursion: its nesting depth (stops counting past MAX_JSON_DEPTH), and the path
 * of the first number that is not finite (JSON.parse turns `1e400` into Infinity; stored, it comes back as null or
 * breaks every answer that serialises it). Paths are built only when `withPaths` is set (the rare second pass).
 * Objects and arrays go on parallel stacks and other values are checked where they are found: a body of 100,000
 * small objects is walked in a few milliseconds rather than allocating a frame for every value.
 */
function walk(
  value: unknown,
  withPaths: boolean,
  maxKeys = Infinity,
): { depth: number; nonFinite?: Segment[]; wide?: { at: Segment[]; keys: number } } {
  let depth = 0;
  const values: unknown[] = [value];
  const depths: number[] = [1];
  const paths: Segment[][] = withPaths ? [[]] : [];
  while (values.length > 0) {
    const v = values.pop();
    const d = depths.pop()!;
    const at = withPaths ? paths.pop()! : [];
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return { depth, nonFinite: at };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (d > depth) depth = d;
    if (depth > MAX_JSON_DEPTH) return { depth };
    const array = Array.isArray(v);
    const keys = array ? undefined : Object.keys(v);
    const n = array ? v.length : keys!.length;
    if (!array && n > maxKeys) return { depth, wide: { at, keys: n } };
    for (let i = 0; i < n; i++) {
      const key = array ? i : keys![i];
      const item: unknown = array ? v[i] : (v as Record<string, unknown>)[key];
      if (typeof item === 'number') {
        if (!Number.isFinite(item)) return { depth, nonFinite: withPaths ? [...at, key] : [] };
      } else if (item !== null && typeof item === 'object') {
        values.push(item);
        depths.push(d + 1);
        if (withPaths) paths.push([...at, key]);
      }
    }
  }
  return { depth };
}

/** The path of the first non-finite number in a value (query strings and params after conversion), if any. */
export function nonFinitePath(value: unknown): Segment[] | undefined {
  return walk(value, false).nonFinite === undefined ? undefined : walk(value, true).nonFinite;
}

/**
 * What the service refuses in any JSON it parses (request bodies, multipart `data` fields, files it reads back):
 * nesting deeper than MAX_JSON_DEPTH (400 `too_deep`), objects of more than MAX_OBJECT_KEYS fields (400
 * `too_many_fields` naming the object) and non-finite numbers (400 `invalid_request` naming the field). `where`
 * prefixes the field name, as in validation errors (`body`, `data`).
 */
export function checkJson(value: unknown, where: string): InvalidInput | undefined {
  const first = walk(value, false, MAX_OBJECT_KEYS);
  if (first.depth > MAX_JSON_DEPTH)
    return new InvalidInput(`JSON nesting deeper than ${MAX_JSON_DEPTH} levels is not accepted`, undefined, 'too_deep');
  if (first.wide)
    return tooManyFields([where, ...(walk(value, true, MAX_OBJECT_KEYS).wide?.at ?? [])].join('.'), first.wide.keys);
  if (first.nonFinite === undefined) return undefined;
  const field = [where, ...(walk(value, true, MAX_OBJECT_KEYS).nonFinite ?? [])].join('.');
  return new InvalidInput(
    `${field} must be a finite number`,
    [{ field, message: 'must be a finite number' }],
    'invalid_request',
  );
}

/** Bodies larger than this are a 413 before they are read to the end, unless a route sets its own `bodyLimit`. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * The JSON text of a state the service stores, refused past `maxBytes` (400 naming the field and the limit): state
 * that grows by merges (element data) or arrives whole (projects) stays small enough to read back and answer.
 */
export function storedJson(value: unknown, field: string, maxBytes: number): string {
  const text = JSON.stringify(value);
  // UTF-8 is at most 3 bytes per UTF-16 unit: most texts are decided without counting.
  const bytes = text.length * 3 <= maxBytes ? text.length : Buffer.byteLength(text);
  if (bytes > maxBytes)
    throw new InvalidInput(
      `${field} is ${bytes} bytes of JSON; at most ${maxBytes} bytes are stored`,
      [{ field, message: `must be at most ${maxBytes} bytes of JSON` }],
      'invalid_request',
    );
  return text;
}

/** A 400 for JSON of more values than `limit`, naming where it came from. */
function tooManyValues(values: number, limit: number, field: string, what: string): InvalidInput {
  return new InvalidInput(
    `${what} holds ${values} JSON values; at most ${limit} are accepted`,
    [{ field, message: `must hold at most ${limit} JSON values` }],
    'too_many_values',
  );
}

/** JSON.parse with the limits of checkJson and the default value limit, for JSON that is not a request body. */
export function parseJson(text: string, where: string): unknown {
  const values = jsonValueCount(text);
  if (values > DEFAULT_MAX_JSON_VALUES) throw tooManyValues(values, DEFAULT_MAX_JSON_VALUES, where, where);
  const wide = values > MAX_OBJECT_KEYS ? widestObject(text, MAX_OBJECT_KEYS) : undefined;
  if (wide) throw tooManyFields([where, ...wide.at].join('.'), wide.fields);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidInput(`${where} is not valid JSON`, undefined, 'malformed_json');
  }
  const problem = checkJson(value, where);
  if (problem) throw problem;
  return value;
}

/**
 * Fastify's own JSON parser (prototype-poisoning protection included), plus checkJson, so that an absurdly deep
 * body is a 400 rather than a stack overflow later and `1e400` never reaches a handler as Infinity. A body of more
 * values than its route takes is a 400 before it is parsed.
 */
export function installJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const limit = req.routeOptions.config.maxJsonValues ?? DEFAULT_MAX_JSON_VALUES;
    const values = jsonValueCount(body as string);
    if (values > limit)
      return done(tooManyValues(values, limit, 'body', `the body of ${req.method} ${req.routeOptions.url}`), undefined);
    // An object has a field per value at least: only a body of that many values can hold one too wide.
    const wide = values > MAX_OBJECT_KEYS ? widestObject(body as string, MAX_OBJECT_KEYS) : undefined;
    if (wide) return done(tooManyFields(['body', ...wide.at].join('.'), wide.fields), undefined);
    parse(req, body as string, (err, value) => {
      if (err) return done(err, undefined);
      const problem = checkJson(value, 'body');
      if (problem) return done(problem, undefined);
      done(null, value);
    });
  });
}
