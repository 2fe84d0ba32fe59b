import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('sharing configuration', () => {
  it('takes the worker URL and token together, and bounds the part size', () => {
    const ok = loadConfig({
      SHARE_WORKER_URL: 'https://board-share.example.workers.dev',
      SHARE_WORKER_TOKEN: 'x'.repeat(16),
      SHARE_UPLOAD_PART_BYTES: String(8 * 1024 * 1024),
    });
    assert.equal(ok.shareWorkerUrl, 'https://board-share.example.workers.dev');
    assert.equal(ok.shareUploadPartBytes, 8 * 1024 * 1024);
    assert.equal(loadConfig({}).shareWorkerUrl, undefined);
    assert.equal(loadConfig({}).shareUploadPartBytes, 64 * 1024 * 1024);
    assert.throws(
      () => loadConfig({ SHARE_WORKER_URL: 'https://w.example' }),
      (e) => e instanceof ConfigError && /set together/.test(e.message),
    );
    assert.throws(() => loadConfig({ SHARE_WORKER_TOKEN: 'x'.repeat(16) }), /set together/);
    assert.throws(
      () => loadConfig({ SHARE_WORKER_URL: 'ftp://w.example', SHARE_WORKER_TOKEN: 'x'.repeat(16) }),
      /http\(s\) URL/,
    );
    assert.throws(
      () => loadConfig({ SHARE_WORKER_URL: 'https://w.example', SHARE_WORKER_TOKEN: 'short' }),
      /at least 16/,
    );
    assert.throws(() => loadConfig({ SHARE_UPLOAD_PART_BYTES: '1024' }), /SHARE_UPLOAD_PART_BYTES must be between/);
    assert.throws(
      () => loadConfig({ SHARE_UPLOAD_PART_BYTES: String(200 * 1024 * 1024) }),
      /SHARE_UPLOAD_PART_BYTES must be between/,
    );
  });
});
