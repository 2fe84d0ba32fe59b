import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { eventually, processGone, startService, waitForJob, type TestService } from '../helpers/service.js';
import { makeImage, probeFile, tempDir } from '../helpers/fixtures.js';
import { aerenderArgs, runAerender } from '../../src/motion/aerender.js';
import { generateScript } from '../../src/motion/script.js';
import { bundleFakeAerender, fakeAerender } from './fake-aerender-setup.js';
import { sampleProject } from './project-builder.js';

const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

interface Setup {
  t: TestService;
  board: string;
  project: { id: string; url: string };
  image: { id: string; url: string };
}

async function setup(env: Record<string, string>): Promise<Setup> {
  const t = await startService(env);
  const board = await t.createBoard('Motion render');
  const up = await t.upload(board, { name: 'template.aep', data: sampleProject() }, { addToBoard: true });
  assert.equal(up.status, 200, up.text);
  const dir = await tempDir();
  const img = await t.upload(board, await makeImage(path.join(dir, 'new-logo.png'), { width: 64, height: 32 }), {
    addToBoard: true,
  });
  assert.equal(img.status, 200, img.text);
  await fsp.rm(dir, { recursive: true, force: true });
  return {
    t,
    board,
    project: { id: up.body.element.id, url: up.body.url },
    image: { id: img.body.element.id, url: img.body.url },
  };
}

describe('motion render through aerender', () => {
  let work: string;
  let bundle: string;
  let s: Setup;
  let log: string;

  before(async () => {
    work = await tempDir('bms-motion-');
    bundle = await bundleFakeAerender(work);
    log = path.join(work, 'ok.json');
    s = await setup({ AERENDER_PATH: await fakeAerender(work, bundle, 'ok', log), MOTION_RENDER_STALL_SECONDS: '30' });
  });
  after(async () => {
    await s.t.close();
    await fsp.rm(work, { recursive: true, force: true });
  });

  const render = (body: Record<string, unknown>, t = s.t) =>
    t.api('POST', '/api/motion/projects/render', { board_id: s.board, element_id: s.project.id, ...body });

  it('detect finds the aerender of AERENDER_PATH and its version', async () => {
    const res = await s.t.api('GET', '/api/motion/detect');
    assert.equal(res.status, 200);
    assert.equal(res.body.installed, true);
    assert.match(res.body.binaryPath, /ae-ok[\\/]aerender\.mjs$/);
    assert.equal(res.body.version, 'aerender version 24.0x45');
  });

  it('renders a copy with every edit applied, transcodes it and adds it to the board; the original is untouched', async () => {
    const original = path.join(s.t.dataDir, 'media', 'admin', s.board, 'template.aep');
    const before = sha(await fsp.readFile(original));
    const res = await render({
      composition: 'Main',
      textEdits: [{ layer: 'Title', text: 'Hello "there"\\ \u2028 ok' }],
      mediaEdits: [{ layer: 2, element_id: s.image.id }],
      expressionEdits: [{ layer: 'Bar', property: 'Transform>Position', expression: '[time * 10, 0]' }],
      addLayers: [{ type: 'solid', name: 'Flash', color: '#ff0000', position: [5, 5] }],
      width: 160,
      height: 90,
      fps: 10,
      output_format: 'webm',
    });
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.url, new RegExp(`^/media/${s.board}/template - Main\\.webm$`.replace(/ /g, '(%20| )')));
    assert.equal(res.body.element.type, 'video');
    assert.equal(res.body.element.data.motion_project_element_id, s.project.id);
    const file = path.join(s.t.dataDir, 'media', 'admin', s.board, decodeURIComponent(res.body.url.split('/').pop()));
    const info = await probeFile(file);
    assert.equal(info.formatName.split(',')[0], 'matroska');
    assert.deepEqual([info.video?.codec, info.video?.width, info.video?.height], ['vp9', 160, 90]);
    assert.ok(Math.abs((info.duration ?? 0) - 2) < 0.15, `duration ${info.duration}`);
    // what the stand-in After Effects saw after running our script
    const seen = JSON.parse(await fsp.readFile(log, 'utf8'));
    assert.deepEqual(seen.comp, { name: 'Main', width: 160, height: 90, frameRate: 10 });
    assert.deepEqual(
      seen.layers.map((l: any) => l.name),
      ['Flash', 'Title', 'logo.png', 'Backdrop', 'Bar'],
    );
    assert.equal(seen.layers[1].text, 'Hello "there"\\ \u2028 ok');
    assert.match(seen.layers[2].source, /media\/001-new-logo\.png$/, 'the footage layer shows the copied board image');
    assert.equal(seen.layers[4].position_expression, '[time * 10, 0]');
    const argv: string[] = seen.argv;
    assert.deepEqual([argv[0], argv[2], argv[3], argv[4], argv[6]], ['-project', '-comp', 'Main', '-output', '-r']);
    assert.match(argv[1], /job-motionjob_[a-z0-9]+\/project\.aep$/, 'aerender opened the copy in the job folder');
    assert.match(argv[7], /edits\.jsx$/);
    assert.equal(sha(await fsp.readFile(original)), before, 'the original project is unchanged');
    const leftovers = (await fsp.readdir(path.join(s.t.dataDir, 'tmp')).catch(() => [])).filter((n) =>
      n.startsWith('job-'),
    );
    assert.deepEqual(leftovers, [], 'the job folder is removed');
  });

  it('runs as a job with progress and the -s/-e range; mov is ProRes', async () => {
    const res = await s.t.api('POST', '/api/motion/render-jobs', {
      board_id: s.board,
      url: s.project.url,
      composition: 'Main',
      fps: 10,
      start_frame: 5,
      end_frame: 14,
      output_format: 'mov',
    });
    assert.equal(res.status, 202, res.text);
    assert.match(res.body.id, /^motionjob_[a-z0-9]{12}$/);
    assert.equal(res.body.status, 'queued');
    const done = await waitForJob(s.t, `/api/motion/render-jobs/${res.body.id}`, {
      each: (poll) => assert.ok(poll.progress >= 0 && poll.progress <= 1),
      what: 'the motion job',
    });
    assert.equal(done.status, 'complete', done.error);
    assert.equal(done.progress, 1);
    const seen = JSON.parse(await fsp.readFile(log, 'utf8'));
    assert.deepEqual(seen.argv.slice(-4), ['-s', '5', '-e', '14']);
    const info = await probeFile(
      path.join(s.t.dataDir, 'media', 'admin', s.board, decodeURIComponent(done.result.url.split('/').pop())),
    );
    assert.equal(info.video?.codec, 'prores');
    assert.ok(Math.abs((info.duration ?? 0) - 1) < 0.15, `10 frames at 10 fps, got ${info.duration}`);
    const other = await s.t.api('GET', '/api/motion/render-jobs/job_notmotion1');
    assert.equal(other.status, 404);
  });

  it('checks every edit against the project first: 400 naming it, nothing launched', async () => {
    const jobsBefore = (await s.t.api('GET', '/api/jobs?kind=motion.render')).body.jobs.length;
    const deleted = await s.t.upload(
      s.board,
      { name: 'gone.png', data: await fsp.readFile(path.join(s.t.dataDir, 'media', 'admin', s.board, 'new-logo.png')) },
      { addToBoard: true },
    );
    await fsp.rm(path.join(s.t.dataDir, 'media', 'admin', s.board, 'gone.png'));
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ composition: 'Nope' }, 'composition', /no composition named "Nope"/],
      [{}, 'composition', /required: the project has 2 compositions \("Main", "Outro"\)/],
      [
        { composition: 'Main', textEdits: [{ layer: 'Ghost', text: 'x' }] },
        'textEdits[0].layer',
        /composition "Main" has no layer named "Ghost"/,
      ],
      [
        { composition: 'Main', textEdits: [{ layer: 9, text: 'x' }] },
        'textEdits[0].layer',
        /has 4 layers, there is no layer 9/,
      ],
      [
        {
          composition: 'Main',
          textEdits: [
            { layer: 'Title', text: 'ok' },
            { layer: 'Bar', text: 'x' },
          ],
        },
        'textEdits[1].layer',
        /layer 4 "Bar" is a shape layer, not a text layer/,
      ],
      [
        { composition: 'Main', mediaEdits: [{ layer: 'Title', element_id: s.image.id }] },
        'mediaEdits[0].layer',
        /text layer; only footage, solid and precomp/,
      ],
      [
        { composition: 'Main', mediaEdits: [{ layer: 2, element_id: deleted.body.element.id }] },
        'mediaEdits[0].element_id',
        /No media file/,
      ],
      [
        { composition: 'Main', mediaEdits: [{ layer: 2, element_id: 'el_missing' }] },
        'mediaEdits[0].element_id',
        /not found/,
      ],
      [
        { composition: 'Main', mediaEdits: [{ layer: 2, element_id: s.project.id }] },
        'mediaEdits[0].element_id',
        /is file, not an image, video or audio/,
      ],
      [{ composition: 'Main', mediaEdits: [{ layer: 2 }] }, 'mediaEdits[0]', /give either element_id or url/],
      [
        { composition: 'Main', expressionEdits: [{ layer: 1, property: 'Transform>>Position', expression: '1' }] },
        'expressionEdits[0].property',
        /empty name/,
      ],
      [{ composition: 'Main', addLayers: [{ type: 'text', name: 'T' }] }, 'addLayers[0].text', /needs its text/],
      [
        { composition: 'Main', addLayers: [{ type: 'media', name: 'M' }] },
        'addLayers[0].element_id',
        /needs the element/,
      ],
      [{ composition: 'Main', fps: 10, start_frame: 20 }, 'start_frame', /last frame is 19/],
    ];
    for (const [body, field, message] of cases) {
      const res = await render(body);
      assert.equal(res.status, 400, `${field}: ${res.text}`);
      assert.equal(res.body.error.code, 'invalid_edit', field);
      assert.equal(res.body.error.details[0].field, `body.${field}`);
      assert.ok(res.body.error.message.startsWith(`${field}: `), res.body.error.message);
      assert.match(res.body.error.message, message);
    }
    const typed = await render({ composition: 'Main', width: { px: 160 } });
    assert.equal(typed.status, 400);
    assert.equal(typed.body.error.code, 'invalid_request');
    const unknownField = await render({ composition: 'Main', colour: 'red' });
    assert.equal(unknownField.status, 400);
    const jobsAfter = (await s.t.api('GET', '/api/jobs?kind=motion.render')).body.jobs.length;
    assert.equal(jobsAfter, jobsBefore, 'no render was queued');
  });

  it("renders the project's footage in the media root where it is; footage outside it is refused", async () => {
    const boardDir = await fsp.realpath(path.join(s.t.dataDir, 'media', 'admin', s.board));
    const logo = path.join(boardDir, 'new-logo.png');
    const linked = await s.t.upload(
      s.board,
      { name: 'linked.aep', data: sampleProject({ logoPath: logo }) },
      { addToBoard: true },
    );
    const res = await render({ element_id: linked.body.element.id, composition: 'Main' });
    assert.equal(res.status, 200, res.text);
    const seen = JSON.parse(await fsp.readFile(log, 'utf8'));
    const item = seen.footage.find((f: any) => f.id === 20);
    assert.equal(item.file, logo, 'on the service the footage is read where it is, not relinked');
    assert.equal(item.sha256, sha(await fsp.readFile(logo)));

    const jobsBefore = (await s.t.api('GET', '/api/jobs?kind=motion.render')).body.jobs.length;
    const outside = path.join(work, 'outside.png');
    await fsp.writeFile(outside, 'not in the media root');
    await fsp.symlink(outside, path.join(boardDir, 'escape.png'));
    for (const stored of [outside, path.join(boardDir, 'escape.png')]) {
      const up = await s.t.upload(
        s.board,
        { name: 'outside.aep', data: sampleProject({ logoPath: stored }) },
        { addToBoard: true },
      );
      const refused = await render({ element_id: up.body.element.id, composition: 'Main' });
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.body.error.code, 'footage_outside_media_root');
      assert.equal(refused.body.error.info.footage, stored);
      assert.match(refused.body.error.message, /is not a file of the media root/);
    }
    const jobsAfter = (await s.t.api('GET', '/api/jobs?kind=motion.render')).body.jobs.length;
    assert.equal(jobsAfter, jobsBefore, 'nothing queued');
    await fsp.rm(path.join(boardDir, 'escape.png'));
  });

  it('fails with the script error when After Effects refuses an edit', async () => {
    const res = await render({
      composition: 'Main',
      expressionEdits: [{ layer: 'Bar', property: 'Transform>Wobble', expression: '1' }],
    });
    assert.equal(res.status, 422, res.text);
    assert.equal(res.body.error.code, 'render_failed');
    assert.match(res.body.error.message, /exit code 9/);
    assert.match(res.body.error.message, /motion: layer "Bar" has no property "Transform>Wobble"/);
  });

  describe('aerender that misbehaves', () => {
    const variants: [string, 'hang' | 'nofile' | 'half' | 'noflag', string, RegExp][] = [
      ['hangs', 'hang', 'render_stalled', /printed nothing for 2 s \(MOTION_RENDER_STALL_SECONDS\)/],
      ['exits 0 without a file', 'nofile', 'render_truncated', /exited without error but wrote no output file/],
      [
        'writes half the duration',
        'half',
        'render_truncated',
        /output is 1\.000 s long, the render should be 2\.000 s \(50 frames at 25 fps\)/,
      ],
      ['has no -r flag', 'noflag', 'startup_script_missing', /does not know -r.*Illegal argument flag: -r/],
    ];
    for (const [what, mode, code, message] of variants) {
      it(`fails when aerender ${what}`, async () => {
        const modeLog = path.join(work, `${mode}.json`);
        const bad = await setup({
          AERENDER_PATH: await fakeAerender(work, bundle, mode, modeLog),
          MOTION_RENDER_STALL_SECONDS: '2',
        });
        try {
          const res = await bad.t.api('POST', '/api/motion/projects/render', {
            board_id: bad.board,
            element_id: bad.project.id,
            composition: 'Main',
          });
          assert.equal(res.status, 422, res.text);
          assert.equal(res.body.error.code, code);
          assert.match(res.body.error.message, message);
          if (mode === 'hang') {
            // the helper aerender started is gone with it: the whole process tree was killed
            await processGone(Number(fs.readFileSync(`${modeLog}.helper-pid`, 'utf8')));
          }
          const board = await bad.t.api('GET', `/api/moodboards/${bad.board}`);
          assert.equal(
            board.body.elements.filter((e: any) => e.type === 'video').length,
            0,
            'nothing added to the board',
          );
          const files = await fsp.readdir(path.join(bad.t.dataDir, 'media', 'admin', bad.board));
          assert.deepEqual(
            files.filter((f) => f.startsWith('.tmp-') || f.endsWith('.mp4')),
            [],
            'no partial output left',
          );
          const leftovers = (await fsp.readdir(path.join(bad.t.dataDir, 'tmp')).catch(() => [])).filter((n) =>
            n.startsWith('job-'),
          );
          assert.deepEqual(leftovers, []);
        } finally {
          await bad.t.close();
        }
      });
    }
  });

  it('follows PROGRESS frame lines to a fraction of the frames to render', async () => {
    const dir = path.join(work, 'progress');
    await fsp.mkdir(dir, { recursive: true });
    const project = path.join(dir, 'p.aep');
    await fsp.writeFile(project, sampleProject());
    const script = path.join(dir, 's.jsx');
    await fsp.writeFile(
      script,
      generateScript({
        composition: 'Main',
        layerNames: ['Title', 'logo.png', 'Backdrop', 'Bar'],
        relink: [],
        text: [],
        media: [],
        expressions: [],
        add: [],
        fps: 10,
      }),
    );
    const seen: number[] = [];
    await runAerender({
      binary: await fakeAerender(dir, bundle, 'ok'),
      args: aerenderArgs({
        project,
        comp: 'Main',
        output: path.join(dir, 'out.mov'),
        script,
        startFrame: 4,
        endFrame: 7,
      }),
      totalFrames: 4,
      stallMs: 30_000,
      onProgress: (f) => seen.push(f),
    });
    assert.deepEqual(seen, [0.25, 0.5, 0.75, 1]);
  });

  describe('cancelling', () => {
    let c: Setup;
    let helperFile: string;
    before(async () => {
      const dir = path.join(work, 'cancel');
      const modeLog = path.join(dir, 'hang.json');
      helperFile = `${modeLog}.helper-pid`;
      c = await setup({
        AERENDER_PATH: await fakeAerender(dir, bundle, 'hang', modeLog),
        MOTION_RENDER_STALL_SECONDS: '60',
      });
    });
    after(() => c.t.close());

    async function helperStarted(): Promise<number> {
      return eventually(
        () => (fs.existsSync(helperFile) ? Number(fs.readFileSync(helperFile, 'utf8')) : undefined),
        20_000,
        'aerender to hang',
      );
    }

    it('a cancelled job kills aerender with its helpers and leaves nothing behind', async () => {
      await fsp.rm(helperFile, { force: true });
      const res = await c.t.api('POST', '/api/motion/render-jobs', {
        board_id: c.board,
        element_id: c.project.id,
        composition: 'Main',
      });
      assert.equal(res.status, 202, res.text);
      const pid = await helperStarted();
      const running = await c.t.api('GET', `/api/motion/render-jobs/${res.body.id}`);
      assert.equal(running.body.status, 'running');
      assert.ok(running.body.progress > 0 && running.body.progress < 0.9, `progress ${running.body.progress}`);
      assert.equal((await c.t.api('POST', `/api/jobs/${res.body.id}/cancel`)).status, 200);
      const done = await waitForJob(c.t, `/api/motion/render-jobs/${res.body.id}`, {
        until: (poll) => poll.status !== 'running',
        timeoutMs: 10_000,
        what: 'the cancel',
      });
      assert.equal(done.status, 'cancelled');
      await processGone(pid);
      const leftovers = (await fsp.readdir(path.join(c.t.dataDir, 'tmp')).catch(() => [])).filter((n) =>
        n.startsWith('job-'),
      );
      assert.deepEqual(leftovers, []);
    });

    it('a client that leaves a waiting render cancels it', async () => {
      await fsp.rm(helperFile, { force: true });
      const controller = new AbortController();
      const request = fetch(`${c.t.baseUrl}/api/motion/projects/render`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ board_id: c.board, element_id: c.project.id, composition: 'Main' }),
        signal: controller.signal,
      }).catch(() => 'aborted');
      const pid = await helperStarted();
      controller.abort();
      assert.equal(await request, 'aborted');
      const job = await eventually(
        async () => {
          const latest = (await c.t.api('GET', '/api/jobs?kind=motion.render&limit=1')).body.jobs[0];
          return latest.status === 'cancelled' ? latest : undefined;
        },
        10_000,
        'the render to be cancelled',
      );
      assert.match(job.id, /^motionjob_/);
      await processGone(pid);
    });
  });

  it('answers 400 motion_editor_missing before anything else when aerender is not found', async () => {
    const none = await startService({ AERENDER_PATH: path.join(work, 'no-such-aerender') });
    try {
      // even a body naming a board that does not exist gets the missing-editor answer first
      const res = await none.api('POST', '/api/motion/projects/render', {
        board_id: 'bd_nothere',
        element_id: 'el_nothere',
        composition: 'Main',
      });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'motion_editor_missing');
      const job = await none.api('POST', '/api/motion/render-jobs', {
        board_id: 'bd_nothere',
        element_id: 'el_nothere',
      });
      assert.equal(job.body.error.code, 'motion_editor_missing');
      assert.equal((await none.api('GET', '/api/jobs')).body.jobs.length, 0);
    } finally {
      await none.close();
    }
  });
});
