// Windows' path rules checked on any OS: the rules are pure functions of a platform, with path.win32 underneath.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import {
  fitNameToPath,
  isInside,
  isWindowsDevice,
  segmentProblem,
  WINDOWS_MAX_PATH,
} from '../../src/files/path-rules.js';
import { sanitizeFilename } from '../../src/files/names.js';

test('URL segments Windows would read differently are refused there, and allowed elsewhere where they are names', () => {
  const refusedEverywhere = ['', '.', '..', '.git', '..\\secret', 'a\\b', 'a/b', 'C:', 'c:evil', 'D:\\x', 'a\u0000b'];
  for (const seg of refusedEverywhere) {
    assert.ok(segmentProblem(seg, 'win32'), `win32 refuses ${JSON.stringify(seg)}`);
    assert.ok(segmentProblem(seg, 'linux'), `linux refuses ${JSON.stringify(seg)}`);
  }
  // UNC paths and `..\` arrive as one segment only with a backslash in them: refused above; as URL segments the
  // leading `//server` is an empty segment.
  assert.ok(segmentProblem('\\\\server\\share', 'win32'));
  const windowsOnly: [string, RegExp][] = [
    ['con', /device/],
    ['CON.txt', /device/],
    ['aux .png', /device/],
    ['com1.tar.gz', /device/],
    ['LPT\u00b9.jpg', /device/],
    ['conin$', /device/],
    ['report.pdf.', /trailing/],
    ['report.pdf ', /trailing/],
    ['photo...', /trailing/],
    ['a.txt:secret', /stream/],
    ['a.txt::$DATA', /stream/],
    ['GIT~1', /short/],
    ['PROGRA~1', /short/],
    ['REPORT~12.PDF', /short/],
  ];
  for (const [seg, why] of windowsOnly) {
    assert.match(segmentProblem(seg, 'win32') ?? '', why, `win32 refuses ${JSON.stringify(seg)}`);
    assert.equal(segmentProblem(seg, 'linux'), undefined, `linux serves a file named ${JSON.stringify(seg)}`);
  }
  for (const seg of ['photo.png', 'contact.png', 'console.log', 'com10.png', 'a~b.png', 'x~1y.png', 'naïve café.jpg'])
    assert.equal(segmentProblem(seg, 'win32'), undefined, `win32 serves ${JSON.stringify(seg)}`);
});

test('device names are found before the first dot and after trimming, as Windows does; sanitizing prefixes them', () => {
  for (const name of ['nul', 'NUL.txt', 'prn .x', 'com\u00b2', 'conout$.log']) assert.ok(isWindowsDevice(name), name);
  for (const name of ['null', 'nul_x', 'com', 'com0x.png', 'xcon']) assert.ok(!isWindowsDevice(name), name);
  assert.equal(sanitizeFilename('aux.png'), '_aux.png');
  assert.equal(sanitizeFilename('con.tar.gz'), '_con.tar.gz');
});

test('containment on the resolved path: drive letters and case on Windows, dotfiles anywhere on the way', () => {
  const base = 'C:\\Users\\Ann\\AppData\\Roaming\\board-media\\media';
  assert.ok(isInside(`${base}\\admin\\bd_1\\a.png`, base, 'win32'));
  assert.ok(isInside('c:\\users\\ann\\appdata\\roaming\\BOARD-MEDIA\\media\\a.png', base, 'win32'), 'case differs');
  assert.ok(!isInside('D:\\Users\\Ann\\AppData\\Roaming\\board-media\\media\\a.png', base, 'win32'), 'other drive');
  assert.ok(!isInside(`${base}-old\\a.png`, base, 'win32'), 'a sibling with the base as prefix');
  assert.ok(!isInside(base, base, 'win32'), 'the base itself');
  // A short name (GIT~1) or a link in the request resolves to .git: the resolved path decides.
  assert.ok(!isInside('D:\\Projects\\site\\.git\\config', 'D:\\Projects\\site', 'win32'));
  assert.ok(!isInside('D:\\Projects\\site\\assets\\.env', 'D:\\Projects\\site', 'win32'));
  assert.ok(isInside('D:\\Projects\\site\\assets\\logo.v2.png', 'D:\\Projects\\site', 'win32'));
  assert.ok(isInside('D:\\a.png', 'D:\\', 'win32'), 'a base that ends with its separator');
  // POSIX: case matters, `/` separates.
  assert.ok(isInside('/data/media/a.png', '/data/media', 'linux'));
  assert.ok(!isInside('/data/Media/a.png', '/data/media', 'linux'));
  assert.ok(!isInside('/data/media/x/.ssh/id', '/data/media', 'linux'));
  assert.ok(!isInside('/data/media/a.png', undefined, 'linux'));
});

test('names are cut so that a new file and its temp name stay within 259 characters on Windows', () => {
  const dir = 'C:\\Users\\Someone With A Long Name\\AppData\\Roaming\\board-media\\media\\admin\\bd_0123456789ab';
  const long = `${'Very long title of a downloaded video '.repeat(5).trim()}.mp4`;
  const fitted = fitNameToPath(dir, long, 'win32');
  assert.ok(fitted.endsWith('.mp4'), fitted);
  assert.ok(fitted.length < long.length);
  // The temp prefix (`.tmp-` + 12 hex + `-`) and a `(9999)` number still fit.
  const worst = path.win32.join(dir, `.tmp-0123456789ab-${fitted.replace(/\.mp4$/, ' (9999).mp4')}`);
  assert.ok(worst.length <= WINDOWS_MAX_PATH, `${worst.length} characters`);
  assert.equal(fitNameToPath(dir, 'short.png', 'win32'), 'short.png');
  assert.equal(fitNameToPath(dir, long, 'linux'), long, 'other systems keep the 180-byte cap alone');
  // A surrogate pair is never split, and a stem never drops below 8 characters even in a very deep folder.
  const emoji = fitNameToPath(dir, `${'😀'.repeat(100)}.png`, 'win32');
  assert.doesNotMatch(emoji, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  assert.equal(fitNameToPath(`C:\\${'d'.repeat(250)}`, 'abcdefghijkl.png', 'win32'), 'abcdefgh.png');
});
