#!/usr/bin/env node
import { ConfigError, loadConfig } from './config.js';
import { buildService } from './app.js';
import { endAllProcesses } from './tools/process.js';

async function serve(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const exitWithParent = process.env.EXIT_WITH_PARENT?.trim() || undefined;
  if (exitWithParent !== undefined && exitWithParent !== 'stdin' && exitWithParent !== 'ipc') {
    process.stderr.write(`Configuration error: EXIT_WITH_PARENT must be "stdin" or "ipc", not "${exitWithParent}"\n`);
    process.exit(2);
  }
  if (exitWithParent === 'ipc' && !process.send) {
    process.stderr.write('Configuration error: EXIT_WITH_PARENT=ipc needs the service started with an IPC channel\n');
    process.exit(2);
  }
  const service = await buildService(config);
  await service.app.listen({ port: config.port, host: config.host });
  let stopping = false;
  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    service.app.log.info({ reason }, 'shutting down');
    // A shutdown that hangs still ends every child and exits.
    const deadline = setTimeout(() => void endAllProcesses(1000).finally(() => process.exit(1)), 30_000);
    deadline.unref();
    service
      .close()
      .then(
        () => 0,
        (err) => {
          service.app.log.error({ err }, 'shutdown failed');
          return 1;
        },
      )
      .then(async (code) => {
        await endAllProcesses();
        process.exit(code);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => stop('SIGHUP'));
  // Windows: Ctrl+Break; it never delivers SIGTERM, so a desktop app uses one of the parent links below.
  if (process.platform === 'win32') process.on('SIGBREAK', () => stop('SIGBREAK'));
  // Tied to the app that started it: when the parent quits or crashes, the OS closes our stdin (or the IPC channel).
  if (exitWithParent === 'stdin') {
    process.stdin.on('end', () => stop('parent closed stdin'));
    process.stdin.on('error', () => stop('parent closed stdin'));
    process.stdin.on('data', () => undefined).resume();
  } else if (exitWithParent === 'ipc') {
    process.on('disconnect', () => stop('parent disconnected'));
  }
}

const commands: Record<string, (args: string[]) => Promise<void>> = {
  serve: () => serve(),
  // Loaded on demand, so `serve` never loads grammY or the native (optional) node-pty module.
  bot: async (args) => (await import('./bridge/clients/bot-cli.js')).botCommand(args),
  terminal: async (args) => (await import('./bridge/clients/terminal-cli.js')).terminalCommand(args),
  worker: async (args) => (await import('./workers/cli.js')).workerCommand(args),
};

const [command = 'serve', ...rest] = process.argv.slice(2);
const run = commands[command];
if (!run) {
  process.stderr.write(`Unknown command "${command}". Commands: ${Object.keys(commands).join(', ')}\n`);
  process.exit(2);
}
run(rest).catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
