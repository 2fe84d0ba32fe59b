import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { eventually, logCapture, startService } from '../helpers/service.js';
import { writeNamedFakeTool } from '../helpers/fake-tool.js';
import { alive, makeRecorder, type PlayEvent } from './recorder.js';

const NAMES = ['notice', 'error', 'success', 'message', 'complete', 'warning'];
const ends = (events: PlayEvent[]) => events.filter((e) => e.event === 'end');
const starts = (events: PlayEvent[]) => events.filter((e) => e.event === 'start');

describe('sound playback', () => {
  it('plays one sound at a time, in order, through both routes, and keeps at most 32 waiting', async () => {
    const rec = await makeRecorder('gate');
    const svc = await startService({ SOUND_PLAYER: rec.command });
    try {
      // The gate holds the first sound in the player, so the next 32 wait and the rest find the queue full.
      const answers = [];
      for (let i = 0; i < 40; i++) {
        const sound = NAMES[i % NAMES.length];
        const res =
          i % 2 === 0
            ? await svc.api('POST', '/api/sounds/play', { sound })
            : await svc.api('POST', `/api/sounds/${sound}/play`);
        assert.equal(res.status, 200);
        answers.push(res.body);
      }
      answers
        .slice(0, 33)
        .forEach((a, i) =>
          assert.deepEqual(a, { ok: true, sound: NAMES[i % NAMES.length], queued: true }, `request ${i}`),
        );
      answers
        .slice(33)
        .forEach((a, i) =>
          assert.deepEqual(
            a,
            { ok: true, sound: NAMES[(33 + i) % NAMES.length], queued: false, reason: 'queue_full' },
            `request ${33 + i}`,
          ),
        );

      await rec.open();
      const played = await eventually(
        async () => {
          const e = await rec.events();
          return ends(e).length >= 33 ? e : undefined;
        },
        60_000,
        '33 sounds to play',
      );

      assert.deepEqual(
        starts(played).map((e) => e.sound),
        answers.slice(0, 33).map((a) => a.sound),
      );
      // Strictly alternating start/end of the same process: no two players ever ran at once.
      for (let i = 0; i < played.length; i += 2) {
        assert.equal(played[i].event, 'start');
        assert.equal(played[i + 1].event, 'end');
        assert.equal(played[i + 1].pid, played[i].pid);
        if (i > 0) assert.ok(played[i].t >= played[i - 1].t, `sound ${i / 2} started before the previous one ended`);
      }
      // The player got a complete WAV file each time.
      const listing = await svc.api('GET', '/api/sounds');
      const sizes = new Map<string, number>();
      for (const s of listing.body.sounds)
        sizes.set(s.name, Buffer.from(await (await fetch(svc.baseUrl + s.url)).arrayBuffer()).length);
      for (const e of starts(played)) {
        assert.equal(e.magic, 'RIFF');
        assert.equal(e.size, sizes.get(e.sound));
      }

      // Once drained, the queue takes sounds again.
      const more = await svc.api('POST', '/api/sounds/play', { sound: 'success' });
      assert.deepEqual(more.body, { ok: true, sound: 'success', queued: true });
      await eventually(
        async () => (ends(await rec.events()).length === 34 ? true : undefined),
        20_000,
        'the 34th sound',
      );
      assert.equal(starts(await rec.events()).at(-1)?.sound, 'success');
    } finally {
      await svc.close();
      await rec.remove();
    }
  });

  it('plays the default sound for an unknown name and says so', async () => {
    const rec = await makeRecorder('quick');
    const svc = await startService({ SOUND_PLAYER: rec.command });
    try {
      const a = await svc.api('POST', '/api/sounds/play', { sound: 'trumpet' });
      assert.deepEqual(a.body, { ok: true, sound: 'notice', queued: true });
      const b = await svc.api('POST', '/api/sounds/Error/play');
      assert.deepEqual(b.body, { ok: true, sound: 'error', queued: true });
      const c = await svc.api('POST', '/api/sounds/fanfare_2.x/play');
      assert.deepEqual(c.body, { ok: true, sound: 'notice', queued: true });
      const played = await eventually(
        async () => {
          const e = await rec.events();
          return ends(e).length === 3 ? e : undefined;
        },
        20_000,
        'three sounds',
      );
      assert.deepEqual(
        starts(played).map((e) => e.sound),
        ['notice', 'error', 'notice'],
      );
    } finally {
      await svc.close();
      await rec.remove();
    }
  });

  it('writes each WAV once under DATA_DIR/sounds and reuses it after a restart', async () => {
    const rec = await makeRecorder('quick');
    const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-sounds-'));
    const file = path.join(dataDir, 'sounds', 'complete.wav');
    try {
      const first = await startService({ SOUND_PLAYER: rec.command }, { dataDir });
      await first.api('POST', '/api/sounds/play', { sound: 'complete' });
      await first.api('POST', '/api/sounds/play', { sound: 'complete' });
      await eventually(async () => (ends(await rec.events()).length === 2 ? true : undefined), 20_000, 'two plays');
      const served = Buffer.from(await (await fetch(`${first.baseUrl}/api/sounds/complete.wav`)).arrayBuffer());
      assert.ok((await fsp.readFile(file)).equals(served));
      const before = await fsp.stat(file);
      await first.close();

      const second = await startService({ SOUND_PLAYER: rec.command }, { dataDir });
      await second.api('POST', '/api/sounds/play', { sound: 'complete' });
      await eventually(
        async () => (ends(await rec.events()).length === 3 ? true : undefined),
        20_000,
        'the third play',
      );
      await second.close();
      const afterRestart = await fsp.stat(file);
      assert.equal(afterRestart.ino, before.ino, 'an identical file is not rewritten');
      assert.equal(afterRestart.mtimeMs, before.mtimeMs);
      const names = await fsp.readdir(path.dirname(file));
      assert.deepEqual(names, ['complete.wav'], 'only the played sound, and no temp files');
    } finally {
      await fsp.rm(dataDir, { recursive: true, force: true });
      await rec.remove();
    }
  });

  it('kills a player that hangs past the time limit and goes on with the next sound', async () => {
    const rec = await makeRecorder('hang-on', 'error');
    const svc = await startService({ SOUND_PLAYER: rec.command, SOUND_PLAYER_TIMEOUT_MS: '500' });
    try {
      await svc.api('POST', '/api/sounds/play', { sound: 'error' });
      await svc.api('POST', '/api/sounds/play', { sound: 'notice' });
      const played = await eventually(
        async () => {
          const e = await rec.events();
          return ends(e).length === 1 ? e : undefined;
        },
        20_000,
        'the sound after the hung one',
      );
      // The hung player never ended on its own (no "end error"): it was killed, and only then did notice start.
      assert.deepEqual(
        played.map((e) => `${e.event} ${e.sound}`),
        ['start error', 'start notice', 'end notice'],
      );
      assert.equal(alive(played[0].pid), false, 'the hung player is gone');
    } finally {
      await svc.close();
      await rec.remove();
    }
  });

  it('kills the running player and drops the queue when the service closes', async () => {
    const rec = await makeRecorder('hang');
    const svc = await startService({ SOUND_PLAYER: rec.command });
    try {
      for (const sound of ['success', 'error', 'notice']) {
        assert.equal((await svc.api('POST', '/api/sounds/play', { sound })).body.queued, true);
      }
      const [first] = await eventually(
        async () => {
          const e = await rec.events();
          return e.length > 0 ? e : undefined;
        },
        20_000,
        'the first sound to start',
      );
      await svc.close();
      assert.equal(alive(first.pid), false, 'the player was killed on close');
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(
        (await rec.events()).map((e) => `${e.event} ${e.sound}`),
        ['start success'],
      );
    } finally {
      await svc.close();
      await rec.remove();
    }
  });

  it(
    'uses the first usual player on PATH when SOUND_PLAYER is not set',
    { skip: process.platform === 'win32' && 'the stand-in players are found by their bare names' },
    async () => {
      const bin = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-fake-bin-'));
      const log = path.join(bin, 'args.log');
      // pw-play comes after paplay in the order of preference.
      for (const name of ['pw-play', 'paplay']) {
        await writeNamedFakeTool(
          bin,
          name,
          `require('node:fs').appendFileSync(${JSON.stringify(log)}, ${JSON.stringify(name)} + ' ' + process.argv.slice(2).join(' ') + '\\n');\n`,
        );
      }
      const svc = await startService({ SOUND_PLAYER: '', PATH: bin });
      try {
        assert.deepEqual((await svc.api('GET', '/api/sounds')).body.player, { available: true, name: 'paplay' });
        assert.equal((await svc.api('POST', '/api/sounds/message/play')).body.queued, true);
        const line = await eventually(
          async () => (await fsp.readFile(log, 'utf8').catch(() => '')).trim() || undefined,
          20_000,
          'paplay to run',
        );
        assert.equal(line, `paplay ${path.join(svc.dataDir, 'sounds', 'message.wav')}`);
      } finally {
        await svc.close();
        await fsp.rm(bin, { recursive: true, force: true });
      }
    },
  );
  describe('without a player', () => {
    const cases: [string, Record<string, string>, RegExp][] = [
      [
        'SOUND_PLAYER names a program that does not exist',
        { SOUND_PLAYER: '/nonexistent/bin/player --quiet' },
        /SOUND_PLAYER program "\/nonexistent\/bin\/player" was not found/,
      ],
      ['SOUND_PLAYER uses a shell operator', { SOUND_PLAYER: `${process.execPath} -e 1 | cat` }, /shell operator "\|"/],
      ['SOUND_PLAYER is none', { SOUND_PLAYER: 'none' }, /turned off/],
    ];
    for (const [what, env, reason] of cases) {
      it(`answers ok: false when ${what}`, async () => {
        const svc = await startService(env);
        try {
          const res = await svc.api('POST', '/api/sounds/play', { sound: 'error' });
          assert.equal(res.status, 200);
          assert.deepEqual(res.body, { ok: false, sound: 'error', queued: false, reason: 'no_player' });
          const byPath = await svc.api('POST', '/api/sounds/nope/play');
          assert.deepEqual(byPath.body, { ok: false, sound: 'notice', queued: false, reason: 'no_player' });
          const list = await svc.api('GET', '/api/sounds');
          assert.equal(list.body.player.available, false);
          assert.match(list.body.player.reason, reason);
        } finally {
          await svc.close();
        }
      });
    }

    it('answers ok: false when no usual player is on PATH', async () => {
      const emptyDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-empty-path-'));
      const svc = await startService({ SOUND_PLAYER: '', PATH: emptyDir });
      try {
        const res = await svc.api('POST', '/api/sounds/play', { sound: 'success' });
        assert.deepEqual(res.body, { ok: false, sound: 'success', queued: false, reason: 'no_player' });
        const list = await svc.api('GET', '/api/sounds');
        assert.match(list.body.player.reason, /no sound player found on PATH \(tried aplay, paplay, pw-play, afplay/);
      } finally {
        await svc.close();
        await fsp.rm(emptyDir, { recursive: true, force: true });
      }
    });

    it('logs the missing player once, however many sounds are asked for', async () => {
      const log = logCapture();
      const svc = await startService(
        { SOUND_PLAYER: '/nonexistent/bin/player', LOG_LEVEL: 'info' },
        { logStream: log.stream },
      );
      try {
        for (const sound of ['error', 'notice', 'success']) {
          assert.equal((await svc.api('POST', '/api/sounds/play', { sound })).body.ok, false);
        }
      } finally {
        await svc.close();
      }
      const warnings = log
        .lines()
        .filter((l) => typeof l.msg === 'string' && /notification sounds cannot play/.test(l.msg));
      assert.equal(warnings.length, 1);
      assert.match(String(warnings[0].msg), /\/nonexistent\/bin\/player/);
    });
  });
});
