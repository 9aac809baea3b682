#!/usr/bin/env node
/**
 * The agent-context command: `serve` runs the REST API and MCP over HTTP; `mcp` runs MCP over stdio;
 * `credits add` and `accounts plan` are the operator's; `setup` attaches a desktop client. The only module
 * with start-up side effects. stdout is kept for command output and the MCP protocol; logs go to stderr.
 */
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { ConfigError, type ConfigFlags, loadConfig } from './config.js';
import { AppError } from './core/errors.js';
import { PLANS } from './core/model.js';
import { SERVICE_VERSION } from './core/pricing.js';
import { exportMemoriesCommand } from './export-command.js';
import { ensureLocalAgent } from './local-agent.js';
import { createLogger } from './logger.js';
import { runOperatorOperation } from './operator.js';
import { openService, openUnavailableService, serviceLogger } from './service.js';
import { setupCommand } from './setup/setup-command.js';
import { StoreOpenError } from './store/store-open-error.js';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new InvalidArgumentError('must be a positive whole number of cents.');
  return n;
}

function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/u.test(host);
}

function fail(err: unknown): never {
  const known = err instanceof ConfigError || err instanceof StoreOpenError || err instanceof AppError;
  if (known) process.stderr.write(`agent-context: ${(err as Error).message}\n`);
  else process.stderr.write(`agent-context: unexpected failure: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
}

/** The flags of `command` and the program's (`--data-dir`), as loadConfig takes them. */
function flagsOf(command: Command): ConfigFlags {
  const { dataDir, defaultDataDir, host, port, publicUrl } = command.optsWithGlobals<ConfigFlags>();
  return Object.fromEntries(
    Object.entries({ dataDir, defaultDataDir, host, port, publicUrl }).filter(
      ([, value]) => value !== undefined,
    ),
  );
}

const program = new Command()
  .name('agent-context')
  .description('Memory and live data for AI agents: a REST API and an MCP server over one credit ledger.')
  .version(SERVICE_VERSION)
  .option(
    '--data-dir <dir>',
    'where the store lives (env DATA_DIR; default: the user data directory, e.g. ~/.local/share/agent-context)',
  )
  .option(
    '--default-data-dir <dir>',
    "where the store lives when neither --data-dir, DATA_DIR nor DATABASE_URL says (npm start: the checkout's data/)",
  )
  .showHelpAfterError();

program
  .command('serve')
  .description('Serve the REST API and MCP over HTTP on HOST:PORT with the store in the data directory.')
  .option('--host <host>', 'interface to listen on (env HOST, default 127.0.0.1)')
  .option('--port <port>', 'port to listen on, 0 for any free port (env PORT, default 8787)')
  .option('--public-url <url>', 'public base URL behind a proxy (env PUBLIC_URL)')
  .action(async (_opts, command: Command) => {
    const { startServer } = await import('./http/http-server.js');
    const config = loadConfig(process.env, flagsOf(command));
    const running = await startServer(await openService(config, { command: 'serve' }), { command: 'serve' });
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      running.service.logger.info({ signal }, 'shutting down');
      running.close().then(
        () => process.exit(0),
        (err) => fail(err),
      );
    };
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
    // On a loopback address this is the store owner's own server: make sure their local agent exists, for
    // `agent-context mcp` to relay as. A server on a public address, or on a shared database, makes no
    // unlimited account by itself.
    if (isLoopbackHost(config.host) && !config.database) {
      await ensureLocalAgent(running.service.core, config.dataDir).catch((err) =>
        running.service.logger.warn({ err }, 'the local agent could not be made ready'),
      );
    }
  });

program
  .command('mcp')
  .description(
    'Serve MCP over stdio for desktop clients (key from AC_API_KEY, else the local agent); beside a running ' +
      'server on the same data directory, relay to it.',
  )
  .action(async (_opts, command: Command) => {
    console.log = console.error; // stdout carries the protocol: nothing else may write to it
    const { runStdioServer } = await import('./mcp/mcp-stdio.js');
    let config: ReturnType<typeof loadConfig> | Error;
    try {
      config = loadConfig(process.env, flagsOf(command));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      config = err;
    }
    const logger = config instanceof Error ? createLogger('info', { format: 'auto' }) : serviceLogger(config);
    await runStdioServer(config, logger, {
      open: (valid) => openService(valid, { command: 'mcp', logger }),
      unavailable: (message, limits) => openUnavailableService(message, limits, logger),
    });
  });

const credits = program.command('credits').description('Manage account credit.');
credits
  .command('add')
  .description('Add credit to the account registered with an e-mail address (a top_up ledger entry).')
  .requiredOption('--email <email>', 'e-mail address of the account')
  .requiredOption('--cents <cents>', 'cents to add', positiveInt)
  .action(async (opts: { email: string; cents: number }, command: Command) => {
    const config = loadConfig(process.env, flagsOf(command));
    const result = await runOperatorOperation(config, 'admin_credits', {
      email: opts.email,
      cents: opts.cents,
    });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  });

const accounts = program.command('accounts').description('Manage accounts.');
accounts
  .command('plan')
  .description(
    'Move the account registered with an e-mail address to a plan: pay-as-you-go (paid from the balance) or ' +
      'unlimited (never refused for credit; costs still recorded).',
  )
  .requiredOption('--email <email>', 'e-mail address of the account')
  .argument('<plan>', PLANS.join(' | '))
  .action(async (plan: string, opts: { email: string }, command: Command) => {
    const config = loadConfig(process.env, flagsOf(command));
    const result = await runOperatorOperation(config, 'admin_plan', { email: opts.email, plan });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  });

const memories = program.command('memories').description("Move an agent's memories.");
memories
  .command('export')
  .description(
    'Write the live memories of the account registered with an e-mail address to stdout as NDJSON (one ' +
      'memory per line, in key order), as GET /api/ac/memory/export does; POST /api/ac/memory/import reads it back.',
  )
  .requiredOption('--email <email>', 'e-mail address of the account')
  .action(async (opts: { email: string }, command: Command) => {
    const config = loadConfig(process.env, flagsOf(command));
    const count = await exportMemoriesCommand(config, opts.email, process.stdout);
    process.stderr.write(`agent-context: exported ${count} memories\n`);
  });

program.addCommand(
  setupCommand({
    platform: process.platform,
    env: process.env,
    homedir: os.homedir(),
    cliPath: fileURLToPath(import.meta.url),
    nodePath: process.execPath,
    stdout: (text) => {
      process.stdout.write(text);
    },
    stderr: (text) => {
      process.stderr.write(text);
    },
  }),
);

program.parseAsync(process.argv).catch(fail);
