import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sanitizeFilename } from '../../src/files/names.js';

test('names are single safe segments', () => {
  assert.equal(sanitizeFilename('../../etc/passwd'), 'passwd');
  assert.equal(sanitizeFilename('..\\..\\boot.ini'), 'boot.ini');
  assert.equal(sanitizeFilename('...'), 'file');
  assert.equal(sanitizeFilename('.env'), 'env');
  assert.equal(sanitizeFilename('a\u0000b\u001b[31m\u0085.txt'), 'a_b_[31m_.txt');
  assert.equal(sanitizeFilename('shot%03d.png'), 'shot_03d.png');
});

test('Windows device names are defused whatever follows them', () => {
  for (const n of ['con.txt', 'CON', 'con.tar.gz', 'aux .png', 'COM\u00b9.png', 'lpt3.log', 'CONIN$.txt', 'conout$']) {
    assert.match(sanitizeFilename(n), /^_/, n);
  }
  assert.equal(sanitizeFilename('console.log'), 'console.log');
  assert.equal(sanitizeFilename('auxiliary.png'), 'auxiliary.png');
});

test('long names are cut between characters to at most 180 bytes of valid UTF-8', () => {
  const emoji = sanitizeFilename(`a${'\u{1F600}'.repeat(60)}.png`);
  assert.ok(Buffer.byteLength(emoji) <= 180);
  assert.ok(emoji.endsWith('.png'));
  assert.doesNotThrow(() => encodeURIComponent(emoji));
  assert.equal(Buffer.from(emoji, 'utf8').toString('utf8'), emoji);
  const lone = sanitizeFilename('x\uD800y.png');
  assert.doesNotThrow(() => encodeURIComponent(lone));
});

test('names of any length are cut to their first 180 bytes, dots and spaces anywhere', () => {
  assert.equal(sanitizeFilename(`${'A'.repeat(102_400)}.png`), `${'A'.repeat(176)}.png`);
  assert.equal(sanitizeFilename(`${' '.repeat(102_400)}x`), 'x');
  assert.equal(sanitizeFilename(`a${' .'.repeat(51_200)}`), 'a');
  assert.equal(sanitizeFilename(`con${' '.repeat(102_400)}.txt`), '_con .txt');
});
