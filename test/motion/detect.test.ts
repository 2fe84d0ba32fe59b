import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterEffectsInstalls } from '../../src/tools/locate.js';
import { tempDir } from '../helpers/fixtures.js';

describe('After Effects install folders', () => {
  it('lists every "Adobe After Effects <version>" folder, newest version first', async () => {
    const root = await tempDir();
    try {
      for (const name of [
        'Adobe After Effects 2024',
        'Adobe After Effects (Beta)',
        'Adobe After Effects CC 2019',
        'Adobe After Effects 2025',
        'Adobe Photoshop 2025',
        'Adobe After Effects 24.6',
      ]) {
        await fsp.mkdir(path.join(root, name));
      }
      const found = afterEffectsInstalls([root, path.join(root, 'missing')], ['Support Files', 'aerender.exe']);
      assert.deepEqual(
        found.map((f) => path.relative(root, f)),
        [
          'Adobe After Effects 2025',
          'Adobe After Effects 2024',
          'Adobe After Effects CC 2019',
          'Adobe After Effects 24.6',
          'Adobe After Effects (Beta)',
        ].map((n) => path.join(n, 'Support Files', 'aerender.exe')),
      );
    } finally {
      await fsp.rm(root, { recursive: true, force: true });
    }
  });
});
