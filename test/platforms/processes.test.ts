// Every child the service starts ends with its whole tree: on cancel, when it exits leaving helpers behind, at
// shutdown, and when the app that started the service goes away (EXIT_WITH_PARENT). Checked by pid.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Cancelled } from '../../src/errors.js';
import { runProcess } from '../../src/tools/ffmpeg.js';
import { endAllProcesses, liveProcesses, startProcess, windowsTreeKill } from '../../src/tools/process.js';
import { writeFakeTool } from '../helpers/fake-tool.js';
import { eventually, RUN_TS } from '../helpers/service.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * A program that starts a helper (a grandchild that would run forever) and reports both pids on stdout, or into the
 * file named by `file <path>`; `leave` exits at once, leaving the helper behind, like aerender's.
 */
const TREE = `
import { spawn } from 'node:child_process';
import fs from 'node:fs';
const helper = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e6)'], { stdio: 'ignore' });
const line = process.pid + ' ' + helper.pid + '\\n';
const at = process.argv.indexOf('file');
if (at >= 0) fs.writeFileSync(process.argv[at + 1], line);
else process.stdout.write(line);
if (process.argv.includes('leave')) setTimeout(() => process.exit(0), 100);
else setInterval(() => {}, 1e6);
`;

/** Whether a pid is a running process (a zombie, killed but not yet reaped by its parent, is not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return process.platform !== 'linux';
  }
}

const allGone = (pids: number[], what: string) =>
  eventually(() => (pids.some(alive) ? undefined : true), 15_000, `${what}: pids ${pids.join(', ')} to end`);

function pidsFrom(child: ChildProcess): Promise<number[]> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('\n')) resolve(out.trim().split(' ').map(Number));
    });
    child.once('exit', () => reject(new Error(`exited before reporting its pids: ${out}`)));
  });
}

let dir: string;
let tree: string;
before(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'bms-tree-'));
  tree = await writeFakeTool(dir, 'tree', TREE);
});
after(() => fsp.rm(dir, { recursive: true, force: true }));

describe(
  'the one way to start a program',
  { skip: process.platform === 'win32' && 'pids checked through POSIX' },
  () => {
    it('cancel ends the program and the helper it started', async () => {
      const abort = new AbortController();
      const child = startProcess(tree, [], { signal: abort.signal });
      const pids = await pidsFrom(child);
      assert.ok(pids.every(alive), 'both run');
      abort.abort();
      await allGone(pids, 'after cancel');
    });

    it("ffmpeg's runner, cancelled, answers Cancelled and leaves no process", async () => {
      const abort = new AbortController();
      const file = path.join(dir, 'pids-ffmpeg');
      const run = runProcess(tree, ['file', file], { signal: abort.signal }, 'ffmpeg');
      const pids = await eventually(async () => {
        const text = await fsp.readFile(file, 'utf8').catch(() => '');
        return text.includes(' ') ? text.trim().split(' ').map(Number) : undefined;
      });
      abort.abort();
      await assert.rejects(run, Cancelled);
      await allGone(pids, 'after the ffmpeg runner was cancelled');
    });

    it('a program that exits leaving a helper: the helper goes too with endTreeOnExit, and stays without', async () => {
      const kept = startProcess(tree, ['leave']);
      const [, keptHelper] = await pidsFrom(kept);
      const ended = startProcess(tree, ['leave'], { endTreeOnExit: true });
      const [leader, helper] = await pidsFrom(ended);
      await allGone([leader, helper], 'after the leader exited');
      await eventually(() => (kept.exitCode !== null ? true : undefined));
      assert.ok(alive(keptHelper), 'without the option the helper is left running (what aerender did on Windows)');
      process.kill(-kept.pid!, 'SIGKILL');
      await allGone([keptHelper], 'cleanup');
    });

    it('shutdown ends every child with its tree and removes their temp folders', async () => {
      const profile = await fsp.mkdtemp(path.join(dir, 'profile-'));
      const a = startProcess(tree, [], { tempDirs: [profile] });
      const b = startProcess(tree, []);
      const pids = [...(await pidsFrom(a)), ...(await pidsFrom(b))];
      assert.deepEqual(liveProcesses().sort(), [a.pid, b.pid].sort());
      await endAllProcesses();
      await allGone(pids, 'after endAllProcesses');
      assert.deepEqual(liveProcesses(), []);
      assert.equal(fs.existsSync(profile), false, 'the temp folder is gone');
    });
  },
);

it('Windows ends a tree with taskkill /T, and finds the orphans of a leader that is gone by their parent id', () => {
  assert.deepEqual(windowsTreeKill(1234, false), ['taskkill', ['/pid', '1234', '/T', '/F']]);
  const [file, args] = windowsTreeKill(1234, true);
  assert.equal(file, 'powershell.exe');
  assert.match(args.at(-1)!, /ParentProcessId=1234'.*taskkill \/pid \$_\.ProcessId \/T \/F/);
});

/** Starts `board-media serve` as a desktop app would, with a sound player that leaves a tree behind. */
async function startServe(env: Record<string, string>, stdio: 'stdin' | 'ipc') {
  const dataDir = await fsp.mkdtemp(path.join(dir, 'data-'));
  const pidFile = path.join(dir, `player-${path.basename(dataDir)}`);
  const q = (s: string) => `'${s}'`;
  const child = spawn(process.execPath, [...RUN_TS, path.join(root, 'src', 'main.ts'), 'serve'], {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      API_TOKEN: '',
      SOUND_PLAYER: `${q(process.execPath)} ${q(tree)} file ${q(pidFile)}`,
      ...env,
    },
    stdio: stdio === 'ipc' ? ['pipe', 'pipe', 'pipe', 'ipc'] : ['pipe', 'pipe', 'pipe'],
  });
  let log = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (log += d));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      log += d;
      const m = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`serve exited (${code}): ${log}`)));
  });
  const res = await fetch(`http://127.0.0.1:${port}/api/sounds/play`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sound: 'notice' }),
  });
  assert.equal(res.status, 200, await res.text());
  const pids = await eventually(
    async () => {
      const text = await fsp.readFile(pidFile, 'utf8').catch(() => '');
      return text.includes(' ') ? text.trim().split(' ').map(Number) : undefined;
    },
    60_000,
    'the sound player to start',
  );
  assert.ok(pids.every(alive));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, pids, exited, log: () => log };
}

describe(
  'the service ends with the app that started it',
  { skip: process.platform === 'win32' && 'pids checked through POSIX' },
  () => {
    it('EXIT_WITH_PARENT=stdin: the app closes (or loses) the pipe, and the service exits with its children', async () => {
      const s = await startServe({ EXIT_WITH_PARENT: 'stdin' }, 'stdin');
      s.child.stdin!.end();
      assert.equal(await s.exited, 0, s.log());
      await allGone([s.child.pid!, ...s.pids], 'after stdin closed');
    });

    it('EXIT_WITH_PARENT=ipc: the IPC channel goes, and so do the service and its children', async () => {
      const s = await startServe({ EXIT_WITH_PARENT: 'ipc' }, 'ipc');
      s.child.disconnect();
      assert.equal(await s.exited, 0, s.log());
      await allGone([s.child.pid!, ...s.pids], 'after the channel closed');
    });

    it('without the option, closing stdin changes nothing; SIGTERM still shuts down, children and all', async () => {
      const s = await startServe({}, 'stdin');
      s.child.stdin!.end();
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(s.child.exitCode, null, 'still serving');
      assert.ok(s.pids.every(alive));
      s.child.kill('SIGTERM');
      assert.equal(await s.exited, 0, s.log());
      await allGone(s.pids, 'after SIGTERM');
    });
  },
);
