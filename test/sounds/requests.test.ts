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
    ['a number', { sound: 5 }, /body\.sound must be a string/],
    ['an array', { sound: ['error'] }, /body\.sound must be a string/],
    ['null', { sound: null }, /body\.sound must be a string/],
    ['an empty string', { sound: '' }, /body\.sound must NOT have fewer than 1 characters/],
    ['too long', { sound: 'a'.repeat(65) }, /body\.sound must NOT have more than 64 characters/],
    ['with a space', { sound: 'a b' }, /body\.sound must match pattern/],
    ['a path', { sound: '../notice' }, /body\.sound must match pattern/],
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

  it('answers 400 for a bad name in the path of either route', async () => {
    for (const [method, url] of [
      ['POST', `/api/sounds/${'x'.repeat(65)}/play`],
      ['POST', '/api/sounds/%2E%2E%2Fnotice/play'],
      ['POST', '/api/sounds/-rf/play'],
      ['GET', '/api/sounds/%20notice.wav'],
    ]) {
      const res = await svc.api(method, url);
      assert.equal(res.status, 400, `${method} ${url}`);
      assert.match(res.body.error.message, /^params\.sound /);
    }
  });

  it('accepts names it does not know when they are well formed', async () => {
    const res = await svc.api('POST', '/api/sounds/play', { sound: 'Build_Finished-2.0' });
    assert.deepEqual(res.body, { ok: false, sound: 'notice', queued: false, reason: 'no_player' });
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
