import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startService, type TestService } from '../helpers/service.js';

describe('sound request validation', () => {
  let svc: TestService;
  before(async () => {
    // No player: a request that slipped through validation would answer 200 with ok: false, not 400.
    svc = await startService({ SOUND_PLAYER: 'none' });
  });
  after(() => svc.close());

  const badBodies: [string, unknown, RegExp][] = [
    ['a number', { sound: 5 }, /body\.sound must be string/],
    ['an array', { sound: ['error'] }, /body\.sound must be string/],
    ['null', { sound: null }, /body\.sound must be string/],
    ['too long', { sound: 'a'.repeat(257) }, /body\.sound must NOT have more than 256 characters/],
    ['missing', {}, /must have required property 'sound'/],
    ['beside an unknown field', { sound: 'error', volume: 3 }, /unknown field "volume"/],
    ['not an object', '"error"', /body must be object/],
  ];
  for (const [what, body, message] of badBodies) {
    it(`answers 400 for a sound that is ${what}`, async () => {
      const res = await svc.api('POST', '/api/sounds/play', body);
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'invalid_request');
      assert.match(res.body.error.message, message);
    });
  }

  it('answers 400 for malformed JSON', async () => {
    const res = await svc.api('POST', '/api/sounds/play', '{"sound":', { 'content-type': 'application/json' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'malformed_json');
  });

  it('answers 400 for an over-long name in the path, and for a malformed name of a .wav file', async () => {
    for (const [method, url] of [
      ['POST', `/api/sounds/${'x'.repeat(257)}/play`],
      ['GET', '/api/sounds/%20notice.wav'],
      ['GET', '/api/sounds/..%2Fnotice.wav'],
    ]) {
      const res = await svc.api(method, url);
      assert.equal(res.status, 400, `${method} ${url}`);
      assert.equal(typeof res.body.error.code, 'string');
      assert.match(res.body.error.message, /params\.sound|param length/);
    }
  });

  it('plays the default for any name it does not know, however it is spelled (unknown names are not errors)', async () => {
    for (const sound of ['Build_Finished-2.0', '', 'a b', '../notice', 'ünïcødé 🔔']) {
      const res = await svc.api('POST', '/api/sounds/play', { sound });
      assert.equal(res.status, 200, JSON.stringify(sound));
      assert.deepEqual(res.body, { ok: false, sound: 'notice', queued: false, reason: 'no_player' });
    }
    for (const url of ['/api/sounds/a%20b/play', '/api/sounds/%2E%2E%2Fnotice/play', '/api/sounds/-rf/play']) {
      const res = await svc.api('POST', url);
      assert.equal(res.status, 200, url);
      assert.equal(res.body.sound, 'notice');
    }
  });

  it('documents the four routes in the OpenAPI document', async () => {
    const doc = await svc.api('GET', '/api/openapi.json');
    const paths = doc.body.paths;
    assert.ok(paths['/api/sounds'].get);
    assert.ok(paths['/api/sounds/{sound}.wav'].get);
    assert.ok(paths['/api/sounds/play'].post);
    assert.ok(paths['/api/sounds/{sound}/play'].post);
  });
});
