import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ConfigError, defaultDataDir, loadConfig } from '../../src/config.js';
import { hostnameOf, isLoopbackHost } from '../../src/http/loopback.js';

test('defaults: loopback bind on 4100, 4 GiB uploads, per-user data folder', () => {
  const c = loadConfig({ HOME: '/home/u' });
  assert.equal(c.port, 4100);
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.maxUploadBytes, 4 * 1024 ** 3);
  assert.equal(c.apiToken, undefined);
  assert.deepEqual(c.allowedOrigins, []);
  assert.equal(c.downloadMaxBytes, c.maxUploadBytes);
  assert.equal(c.downloadTimeoutMs, 600_000);
  assert.equal(c.htmlRenderTimeoutMs, 600_000);
  assert.equal(c.soundPlayerTimeoutMs, 10_000);
  assert.equal(
    loadConfig({ MAX_UPLOAD_BYTES: '1000' }).downloadMaxBytes,
    1000,
    'downloads follow the upload limit by default',
  );
  assert.equal(c.dataDir, path.resolve(defaultDataDir({ HOME: '/home/u' })));
});

test('per-user data folder follows the platform conventions', () => {
  assert.match(defaultDataDir({ XDG_DATA_HOME: '/x' }, 'linux'), /^\/x\/board-media$/);
  assert.match(defaultDataDir({}, 'darwin'), /Library\/Application Support\/board-media$/);
  assert.match(defaultDataDir({ APPDATA: 'C:\\Users\\u\\AppData\\Roaming' }, 'win32'), /board-media$/);
});

test('a non-loopback HOST without API_TOKEN is refused with a readable message', () => {
  assert.throws(
    () => loadConfig({ HOST: '0.0.0.0' }),
    (e: unknown) => e instanceof ConfigError && /API_TOKEN/.test(e.message),
  );
  const ok = loadConfig({ HOST: '0.0.0.0', API_TOKEN: 'a-long-enough-secret-token' });
  assert.equal(ok.host, '0.0.0.0');
});

test('malformed numbers, short tokens and bad origins are refused', () => {
  assert.throws(() => loadConfig({ PORT: 'eighty' }), /PORT must be a whole number/);
  assert.throws(() => loadConfig({ PORT: '70000' }), /PORT must be between/);
  assert.throws(() => loadConfig({ MAX_UPLOAD_BYTES: '-5' }), /MAX_UPLOAD_BYTES/);
  assert.throws(() => loadConfig({ API_TOKEN: 'short' }), /at least 16/);
  assert.throws(() => loadConfig({ ALLOWED_ORIGINS: 'not an origin' }), /ALLOWED_ORIGINS/);
  assert.throws(() => loadConfig({ LOG_LEVEL: 'loud' }), /LOG_LEVEL must be one of/);
  assert.throws(() => loadConfig({ DOWNLOAD_MAX_BYTES: 'abc' }), /DOWNLOAD_MAX_BYTES must be a whole number/);
  assert.throws(() => loadConfig({ DOWNLOAD_TIMEOUT_MS: '5' }), /DOWNLOAD_TIMEOUT_MS must be between/);
  assert.throws(
    () => loadConfig({ HTML_RENDER_TIMEOUT_SECONDS: '-3' }),
    /HTML_RENDER_TIMEOUT_SECONDS must be a whole number/,
  );
  assert.throws(() => loadConfig({ HTML_RENDER_RANGES: '0' }), /HTML_RENDER_RANGES must be between 1 and 16/);
  assert.equal(loadConfig({ HTML_RENDER_RANGES: '3' }).htmlRenderRanges, 3);
  assert.ok(loadConfig({}).htmlRenderRanges >= 1, 'one range at least by default');
  assert.equal(loadConfig({}).htmlCapture, 'auto');
  assert.equal(loadConfig({ HTML_CAPTURE: 'screenshot' }).htmlCapture, 'screenshot');
  assert.throws(() => loadConfig({ HTML_CAPTURE: 'beginframe' }), /HTML_CAPTURE must be one of auto, screenshot/);
  assert.throws(
    () => loadConfig({ SOUND_PLAYER_TIMEOUT_MS: '50' }),
    /SOUND_PLAYER_TIMEOUT_MS must be between 100 and 600000/,
  );
  assert.deepEqual(loadConfig({ ALLOWED_ORIGINS: 'app://board, null ,http://localhost:5173' }).allowedOrigins, [
    'app://board',
    'null',
    'http://localhost:5173',
  ]);
});

test('loopback detection covers names, IPv4 and IPv6 forms', () => {
  for (const h of ['localhost', 'app.localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]'])
    assert.ok(isLoopbackHost(h), h);
  for (const h of ['0.0.0.0', '192.168.1.2', 'example.com', 'localhost.evil.com', '::', '10.0.0.1'])
    assert.ok(!isLoopbackHost(h), h);
  assert.equal(hostnameOf('127.0.0.1:4100'), '127.0.0.1');
  assert.equal(hostnameOf('[::1]:4100'), '::1');
  assert.equal(hostnameOf('localhost'), 'localhost');
});
