/**
 * A stand-in for Adobe's aerender, for tests only (never a default): started through a wrapper set as AERENDER_PATH.
 * It speaks aerender's command line and prints its transcript (PROGRESS lines with timecodes and frame numbers,
 * `aerender ERROR` lines, exit codes of AE's startup script); instead of After Effects it runs the `-r` script in the
 * stand-in object model built from the project copy, then writes the composition (as the script left it) with ffmpeg.
 * FAKE_AE_MODE: ok | slow | hang | nofile | half | noflag. FAKE_AE_LOG: a file that receives the edited model as JSON (with each footage item's file and its hash).
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { parseProject } from '../../src/motion/read.js';
import { Tools } from '../../src/tools/locate.js';
import { buildModel, runScript, TextDocument, type Layer } from './ae-model.js';

const mode = process.env.FAKE_AE_MODE ?? 'ok';
const argv = process.argv.slice(2);
const say = (line: string) => process.stdout.write(`${line}\n`);
const flag = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};

function timecode(frame: number, fps: number): string {
  const r = Math.round(fps);
  const s = Math.floor(frame / r);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${Math.floor(s / 3600)}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}:${pad(frame % r)}`;
}

async function main(): Promise<number> {
  if (argv[0] === '-version') {
    say('aerender version 24.0x45');
    return 0;
  }
  say('PROGRESS: Launching After Effects...');
  if (mode === 'noflag' && argv.includes('-r')) {
    say('aerender SYNTAX ERROR: Illegal argument flag: -r');
    return 3;
  }
  say('PROGRESS: ...After Effects successfully launched');
  const project = parseProject(fs.readFileSync(flag('-project')!));
  const model = buildModel(project);
  const script = flag('-r');
  if (script) {
    say(`Running Script: ${script}`);
    try {
      runScript(model, fs.readFileSync(script, 'utf8'));
    } catch (err) {
      say(`aerender ERROR: Error executing script: ${script}`);
      say(`Error: ${(err as Error).message}`);
      return 9;
    }
    for (const m of model.logged) say(m);
  }
  const comp = model.comps.find((c) => c.name === flag('-comp'));
  if (!comp) {
    say('aerender ERROR: No comp was found with the given name.');
    return 7;
  }
  if (process.env.FAKE_AE_LOG) {
    const layers = comp.layerList.map((l: Layer) => {
      const text = l.property('ADBE Text Properties')?.property('ADBE Text Document');
      return {
        name: l.name,
        source: l.source && 'file' in l.source ? l.source.file : null,
        text: text ? (text.value as TextDocument).text : undefined,
        position_expression: l.property('ADBE Transform Group')!.property('ADBE Position')!.expression,
      };
    });
    fs.writeFileSync(
      process.env.FAKE_AE_LOG,
      JSON.stringify({
        argv,
        comp: { name: comp.name, width: comp.width, height: comp.height, frameRate: comp.frameRate },
        layers,
        // what After Effects would read for each footage item: the file, and its bytes' hash when it is there
        footage: model.footage.map((f) => ({
          id: f.id,
          name: f.name,
          file: f.file,
          sha256:
            f.file && fs.existsSync(f.file) ? createHash('sha256').update(fs.readFileSync(f.file)).digest('hex') : null,
        })),
      }),
    );
  }
  const fps = comp.frameRate;
  const all = Math.round(comp.duration * fps);
  const start = Number(flag('-s') ?? 0);
  const end = Math.min(Number(flag('-e') ?? all - 1), all - 1);
  say(`PROGRESS:  11/22/26 12:00:00 PM UTC: Starting composition ${comp.name}.`);
  say('PROGRESS:  Render Settings: Best Settings');
  say(`PROGRESS:  Start: ${timecode(start, fps)}`);
  say(`PROGRESS:  End: ${timecode(end, fps)}`);
  say(`PROGRESS:  Duration: ${timecode(end - start + 1, fps)}`);
  say(`PROGRESS:  Frame Rate: ${fps.toFixed(2)} (comp)`);
  say(`PROGRESS:  Output To: ${flag('-output')}`);
  const frames = end - start + 1;
  for (let f = start; f <= end; f++) {
    say(`PROGRESS:  ${timecode(f, fps)} (${f - start + 1}): 0 Seconds`);
    if (mode === 'hang' && f - start + 1 >= Math.ceil(frames / 3)) {
      // aerender stuck at N % with a helper process still running (nexrender #239, #883)
      const helper = spawn('sleep', ['300'], { stdio: 'ignore' });
      if (process.env.FAKE_AE_LOG) fs.writeFileSync(`${process.env.FAKE_AE_LOG}.helper-pid`, String(helper.pid));
      await new Promise(() => undefined);
    }
    // a render that takes a while: 0.4 s a frame
    if (mode === 'slow') await new Promise((r) => setTimeout(r, 400));
  }
  if (mode !== 'nofile') {
    const written = mode === 'half' ? Math.max(1, Math.floor(frames / 2)) : frames;
    const ffmpeg = (await new Tools(process.env).require('ffmpeg')).path;
    await promisify(execFile)(ffmpeg, [
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'lavfi',
      '-i',
      `color=c=0x3060c0:size=${comp.width}x${comp.height}:rate=${fps}`,
      '-frames:v',
      String(written),
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      flag('-output')!,
    ]);
  }
  say(`PROGRESS:  11/22/26 12:00:01 PM UTC: Finished composition ${comp.name}.`);
  say('PROGRESS:  Total Time Elapsed: 1 Seconds');
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    say(`aerender ERROR: ${(err as Error).message}`);
    process.exit(9);
  },
);
