#!/usr/bin/env node
import { ConfigError, loadConfig } from './config.js';
import { buildService } from './app.js';

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
  const service = await buildService(config);
  await service.app.listen({ port: config.port, host: config.host });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    service.app.log.info({ signal }, 'shutting down');
    service.close().then(
      () => process.exit(0),
      (err) => {
        service.app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
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
