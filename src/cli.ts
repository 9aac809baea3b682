#!/usr/bin/env node
/**
 * The agent-context command: `serve` runs the REST API and MCP over HTTP; `mcp` runs MCP over stdio;
 * `credits add` tops up an account in the store. The only module with start-up side effects. stdout is
 * kept for command output and the MCP protocol; logs go to stderr.
 */
import { Command, InvalidArgumentError } from 'commander';
import { openService, startServer } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { AppError } from './core/errors.js';
import { SERVICE_VERSION } from './core/pricing.js';
import { runStdioServer } from './mcp/mcp-stdio.js';
import { DataDirLockedError } from './store/data-dir-lock.js';
import { StoreFileError } from './store/json-file-store.js';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new InvalidArgumentError('must be a positive whole number of cents.');
  return n;
}

function fail(err: unknown): never {
  const known =
    err instanceof ConfigError || err instanceof DataDirLockedError || err instanceof StoreFileError;
  if (known || err instanceof AppError) process.stderr.write(`agent-context: ${(err as Error).message}\n`);
  else process.stderr.write(`agent-context: unexpected failure: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
}

const program = new Command()
  .name('agent-context')
  .description('Memory and live data for AI agents: a REST API (and MCP server) over one credit ledger.')
  .version(SERVICE_VERSION)
  .showHelpAfterError();

program
  .command('serve')
  .description('Serve the REST API on HOST:PORT with the store in DATA_DIR.')
  .option('--host <host>', 'interface to listen on (env HOST, default 127.0.0.1)')
  .option('--port <port>', 'port to listen on, 0 for any free port (env PORT, default 8787)')
  .option('--data-dir <dir>', 'where the store lives (env DATA_DIR, default ./data)')
  .option('--public-url <url>', 'public base URL behind a proxy (env PUBLIC_URL)')
  .action(async (flags) => {
    const config = loadConfig(process.env, flags);
    const running = await startServer(config, { command: 'serve' });
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
  });

program
  .command('mcp')
  .description('Serve MCP over stdio for desktop clients (key from AC_API_KEY, else a local agent).')
  .option('--data-dir <dir>', 'where the store lives (env DATA_DIR, default ./data)')
  .action(async (opts: { dataDir?: string }) => {
    console.log = console.error; // stdout carries the protocol: nothing else may write to it
    const config = loadConfig(process.env, opts.dataDir === undefined ? {} : { dataDir: opts.dataDir });
    await runStdioServer(config);
  });

const credits = program.command('credits').description('Manage account credit.');
credits
  .command('add')
  .description('Add credit to the account registered with an e-mail address (a top_up ledger entry).')
  .requiredOption('--email <email>', 'e-mail address of the account')
  .requiredOption('--cents <cents>', 'cents to add', positiveInt)
  .option('--data-dir <dir>', 'where the store lives (env DATA_DIR, default ./data)')
  .action(async (opts: { email: string; cents: number; dataDir?: string }) => {
    const config = loadConfig(process.env, opts.dataDir === undefined ? {} : { dataDir: opts.dataDir });
    const service = await openService(config, { command: 'credits add' }).catch((err) => {
      if (!(err instanceof DataDirLockedError) || !err.holder.url) throw err;
      throw new DataDirLockedError(
        err.dataDir,
        err.holder,
        `To top up while it runs: POST ${err.holder.url}/api/ac/admin/credits with ` +
          '"Authorization: Bearer <AC_ADMIN_TOKEN>" and {"email", "cents"}.',
      );
    });
    try {
      const schema = service.core.schemas.AddCreditsInput;
      const input = schema.safeParse({ email: opts.email, cents: opts.cents });
      if (!input.success)
        throw new AppError('invalid_input', input.error.issues[0]?.message ?? 'invalid input');
      const result = await service.core.accounts.addCredits(input.data);
      process.stdout.write(`${JSON.stringify(result)}\n`);
    } finally {
      await service.close();
    }
  });

program.parseAsync(process.argv).catch(fail);
