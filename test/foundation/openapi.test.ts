import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startService, type TestService } from '../helpers/service.js';

let svc: TestService;
before(async () => {
  svc = await startService();
});
after(() => svc.close());

test('the committed docs/openapi.json is the document the service serves (run `npm run openapi` after an API change)', async () => {
  const committed = JSON.parse(
    await fsp.readFile(path.join(import.meta.dirname, '..', '..', 'docs', 'openapi.json'), 'utf8'),
  );
  const served = await svc.api('GET', '/api/openapi.json');
  assert.equal(served.status, 200);
  assert.deepEqual(served.body, committed);
});
