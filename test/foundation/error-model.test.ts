import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ERROR_CODES } from '../../src/http/error-codes.js';
import { JOB_RESULTS } from '../../src/features.js';
import { startService, type TestService } from '../helpers/service.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** The one error body: a code from the table, a message, `details` only as `[{field, message}]`. */
function assertErrorBody(res: { status: number; body: any; text: string }, codes: Set<string>, what: string) {
  const error = res.body?.error;
  assert.ok(error && typeof error.message === 'string', `${what}: the error body, got ${res.text.slice(0, 300)}`);
  assert.ok(codes.has(error.code), `${what}: code ${error.code} is in the table`);
  if (error.details !== undefined) {
    assert.ok(Array.isArray(error.details) && error.details.length > 0, `${what}: details is a non-empty list`);
    for (const d of error.details) {
      assert.deepEqual(Object.keys(d).sort(), ['field', 'message'], `${what}: ${JSON.stringify(d)}`);
      assert.ok(typeof d.field === 'string' && typeof d.message === 'string', what);
    }
  }
}

describe('one error model over every operation of the OpenAPI document', () => {
  let svc: TestService;
  let doc: any;
  let codes: Set<string>;
  before(async () => {
    svc = await startService();
    doc = (await svc.api('GET', '/api/openapi.json')).body;
    codes = new Set(doc.components.schemas.Error.properties.error.properties.code.enum);
  });
  after(() => svc.close());

  it('the document enumerates the codes of src/http/error-codes.ts, and docs/errors.md lists each with its meaning', async () => {
    assert.deepEqual([...codes].sort(), Object.keys(ERROR_CODES).sort());
    const table = await fsp.readFile(path.join(import.meta.dirname, '..', '..', 'docs', 'errors.md'), 'utf8');
    const listed = [...table.matchAll(/^\| `([a-z_]+)`\s+\|/gm)].map((m) => m[1]);
    assert.deepEqual(listed.sort(), Object.keys(ERROR_CODES).sort(), 'docs/errors.md: run the table from ERROR_CODES');
  });

  it('every job kind the service defines has its typed result in the Job union', () => {
    const defined = [...(svc.service.ctx.jobs as unknown as { handlers: Map<string, unknown> }).handlers.keys()];
    assert.deepEqual(
      defined.filter((k) => !(k in JOB_RESULTS)),
      [],
      'kinds without a result schema (src/features.ts)',
    );
    const union = doc.components.schemas.Job.anyOf.map((r: { $ref: string }) => r.$ref.split('/').pop());
    assert.equal(union.length, Object.keys(JOB_RESULTS).length);
  });

  it('every operation: a wrong body, an unknown id, a missing query field answer 4xx with the one body', async () => {
    let checked = 0;
    for (const [url, item] of Object.entries<any>(doc.paths)) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        const what = `${method.toUpperCase()} ${url} (${op.operationId})`;
        const target = url.replace(/\{[^}]+\}/g, 'nothere').replace(/\*$/, 'nothere/x.png');
        const answers = [];
        // A body of the wrong type (a list where every body is an object): refused before anything runs.
        if (op.requestBody?.content?.['application/json']) {
          const res = await svc.api(method.toUpperCase(), target, []);
          assert.ok(res.status >= 400 && res.status < 500, `${what}: ${res.status} for a list body`);
          if (res.status === 400) {
            assert.equal(res.body.error.code, 'invalid_request', what);
            assert.match(
              res.body.error.details?.[0]?.field ?? '',
              /^(body|params)/,
              `${what}: the body's (or path's) field`,
            );
          }
          answers.push(res);
        } else if (url.includes('{') && method !== 'post') {
          answers.push(await svc.api(method.toUpperCase(), target));
        }
        // A required query field left out.
        if ((op.parameters ?? []).some((p: any) => p.in === 'query' && p.required)) {
          const res = await svc.api(method.toUpperCase(), target);
          if (res.status === 400)
            assert.match(res.body.error.details?.[0]?.field ?? '', /^querystring\./, `${what}: the query field`);
          answers.push(res);
        }
        for (const res of answers) {
          if (res.status < 400 || res.status >= 500) continue;
          assertErrorBody(res, codes, `${what} ${res.status}`);
          checked++;
        }
      }
    }
    console.log(`${checked} 4xx answers checked`);
    assert.ok(checked > 80, `${checked} answers checked`);
  });

  it('the same mistake, the same code: an unknown event type and an upload without a file are invalid_request', async () => {
    const types = await svc.api('GET', '/api/events?types=nope');
    assert.equal(types.status, 400);
    assert.equal(types.body.error.code, 'invalid_request');
    assert.deepEqual(
      types.body.error.details.map((d: any) => d.field),
      ['querystring.types'],
    );
  });

  it("a kind's poll asked about another kind's job answers wrong_job_kind, naming the generic poll", async () => {
    const board = await svc.createBoard('Kinds');
    const up = await svc.upload(board, { name: 'dot.png', data: Buffer.from(PNG, 'base64') });
    const queued = await svc.api('POST', '/api/download', {
      board_id: board,
      url: svc.baseUrl + up.body.url,
      async: true,
    });
    assert.equal(queued.status, 202);
    assert.deepEqual(Object.keys(queued.body).sort(), ['job_id', 'kind', 'status']);
    assert.equal(queued.body.kind, 'media.download');
    const res = await svc.api('GET', `/api/mockup/render/${queued.body.job_id}`);
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'wrong_job_kind');
    assert.match(res.body.error.message, new RegExp(`GET /api/jobs/${queued.body.job_id}`));
    assert.deepEqual(res.body.error.details, [
      { field: 'params.job_id', message: 'is a media.download job, not mockups.render' },
    ]);
  });
});

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
