import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The package version, read from package.json (two levels up from both src/ and dist/src/). */
function readVersion(): string {
  for (const candidate of ['../package.json', '../../package.json']) {
    try {
      const pkg = require(candidate) as { name?: string; version?: string };
      if (pkg.name === 'board-media-service' && pkg.version) return pkg.version;
    } catch {
      // try the next location
    }
  }
  return '0.0.0';
}

export const SERVICE_VERSION = readVersion();
