// Writes the OpenAPI document the service serves to docs/openapi.json, so every API change is a visible diff in
// review; test/foundation/openapi.test.ts fails when the two differ.
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildService } from '../src/app.js';
import { loadConfig } from '../src/config.js';

const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-openapi-'));
try {
  const service = await buildService(
    loadConfig({ ...process.env, LOG_LEVEL: 'silent', API_TOKEN: '', DATA_DIR: dataDir }),
    { logger: false },
  );
  await service.app.ready();
  const doc = service.app.swagger();
  await service.close();
  const out = path.join(import.meta.dirname, '..', 'docs', 'openapi.json');
  await fsp.writeFile(out, JSON.stringify(doc, null, 2) + '\n');
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
} finally {
  await fsp.rm(dataDir, { recursive: true, force: true });
}
