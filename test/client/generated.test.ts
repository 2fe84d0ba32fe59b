import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import { describe, it } from 'node:test';
import { GENERATED, generateTypes } from '../../client/scripts/generate.js';

describe('client: the generated types', () => {
  it('are what the generator makes of the committed OpenAPI document (run `npm run client:generate`)', async () => {
    const committed = await fsp.readFile(GENERATED, 'utf8');
    const fresh = await generateTypes();
    // A line-by-line look first: the first differing line says what drifted, not just that something did.
    const a = committed.split('\n');
    const b = fresh.split('\n');
    const differs = a.findIndex((line, i) => line !== b[i]);
    const at = differs === -1 ? Math.min(a.length, b.length) : differs;
    assert.ok(
      committed === fresh,
      `client/src/generated/openapi.ts differs from docs/openapi.json at line ${at + 1}: ` +
        `${JSON.stringify(a[at])} committed, ${JSON.stringify(b[at])} generated. Run npm run client:generate.`,
    );
  });
});
