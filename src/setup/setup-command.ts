/**
 * `agent-context setup <client>`: attaches this installation to a desktop MCP client without hand-edited
 * JSON. Prints the client's configuration entry (stdout stays pasteable; where it goes is said on stderr),
 * or with --write merges it into the client's file. Everything about the machine comes in the context, so
 * the command reads no process.env and runs the same in tests with a temporary HOME.
 */
import path from 'node:path';
import { Command } from 'commander';
import {
  CLIENT_NAMES,
  CLIENT_TITLES,
  type ClientName,
  containerKey,
  DEFAULT_ENTRY_NAME,
  defaultConfigPath,
  type HostInfo,
  isClientName,
  serverEntry,
} from './client-configs.js';
import { chooseLaunch } from './launch.js';
import { type MergeOutcome, mergeServerEntry } from './merge-config.js';
import { SetupError } from './setup-error.js';
import { renderSetup } from './setup-output.js';

export type Writer = (text: string) => void;

export interface SetupContext extends HostInfo {
  /** Absolute path of the running dist/cli.js (from cli.ts's import.meta.url). */
  cliPath: string;
  /** process.execPath. */
  nodePath: string;
  stdout: Writer;
  stderr: Writer;
  /** Base for relative --config and --data-dir; process.cwd() when absent. */
  cwd?: string;
  /** Names backups; the real clock when absent. */
  now?: () => Date;
}

interface SetupOptions {
  write?: boolean;
  config?: string;
  name: string;
  npx?: boolean;
  dataDir?: string;
}

function whereItGoes(client: ClientName, file: string | undefined): string {
  const title = CLIENT_TITLES[client];
  if (client === 'generic' || file === undefined) {
    return (
      'Add it to your MCP client\'s configuration file (most read "mcpServers"), ' +
      'or run again with --write --config <file> to merge it there.\n'
    );
  }
  if (client === 'claude-code') {
    return `Run it to add the server to ${file} (user scope), or run again with --write to edit that file directly.\n`;
  }
  return (
    `Put it in ${file} (merge it into "${containerKey(client)}" if the file exists) and restart ${title}, ` +
    'or run again with --write to do it for you.\n'
  );
}

function describeOutcome(client: ClientName, name: string, outcome: MergeOutcome): string {
  const { file, backup } = outcome;
  const restart = `Restart ${CLIENT_TITLES[client]} to load it.`;
  switch (outcome.status) {
    case 'created':
      return `Created ${file} with the "${name}" server. ${restart}\n`;
    case 'added':
      return `Added the "${name}" server to ${file} (previous file saved as ${backup}). ${restart}\n`;
    case 'updated':
      return `Updated the "${name}" server in ${file} (previous file saved as ${backup}). ${restart}\n`;
    case 'unchanged':
      return `The "${name}" server in ${file} is already up to date; nothing was written.\n`;
  }
}

async function runSetup(ctx: SetupContext, client: string, options: SetupOptions): Promise<void> {
  if (!isClientName(client)) {
    throw new SetupError(`unknown client "${client}"; use one of: ${CLIENT_NAMES.join(', ')}.`);
  }
  const name = options.name.trim();
  if (name === '') throw new SetupError('--name must not be empty.');
  const cwd = ctx.cwd ?? process.cwd();
  const dataDir = options.dataDir === undefined ? undefined : path.resolve(cwd, options.dataDir);
  const choice = chooseLaunch({
    cliPath: ctx.cliPath,
    nodePath: ctx.nodePath,
    npx: options.npx === true,
    dataDir,
  });
  if (choice.portable === 'npx-cache') {
    ctx.stderr("Running from npx's cache, whose paths do not last: using the portable npx form.\n");
  }
  if (choice.portable === undefined && ctx.cliPath.endsWith('.ts')) {
    ctx.stderr(
      `Warning: ${ctx.cliPath} is a source file; build (npm run build) and run setup from dist/cli.js.\n`,
    );
  }
  const entry = serverEntry(client, choice.launch, ctx.platform);
  const file =
    options.config === undefined ? defaultConfigPath(client, ctx) : path.resolve(cwd, options.config);
  if (client === 'claude-code' && options.config === undefined && ctx.env.CLAUDE_CONFIG_DIR) {
    ctx.stderr(
      'Note: CLAUDE_CONFIG_DIR is set; if Claude Code keeps its .claude.json there, pass --config.\n',
    );
  }
  if (options.write !== true) {
    ctx.stdout(renderSetup(client, name, entry, ctx.platform));
    ctx.stderr(whereItGoes(client, file));
    return;
  }
  if (file === undefined) {
    throw new SetupError(
      '--write for a generic client needs --config <file>: there is no standard file to merge into.',
    );
  }
  try {
    const outcome = await mergeServerEntry({
      file,
      containerKey: containerKey(client),
      name,
      entry,
      now: ctx.now,
    });
    ctx.stdout(describeOutcome(client, name, outcome));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (err instanceof SetupError || typeof code !== 'string') throw err;
    throw new SetupError(`could not update ${file}: ${(err as Error).message}`);
  }
}

/** The `setup` command, to be added to the program with `program.addCommand(setupCommand(context))`. */
export function setupCommand(ctx: SetupContext): Command {
  const command = new Command('setup');
  return command
    .description('Print the configuration that attaches this server to an MCP client, or --write it there.')
    .argument('<client>', CLIENT_NAMES.join(' | '))
    .option(
      '--write',
      "merge the entry into the client's configuration file (the old file is backed up beside it)",
    )
    .option('--config <file>', "use this configuration file instead of the client's standard one")
    .option('--name <entry-name>', 'name of the server entry', DEFAULT_ENTRY_NAME)
    .option('--npx', 'use the portable form: npx -y agent-context mcp')
    .option('--data-dir <dir>', 'run the server with DATA_DIR set to this directory')
    .configureOutput({ writeOut: ctx.stdout, writeErr: ctx.stderr })
    .action(async (client: string, options: SetupOptions) => {
      // Added to the program, `--data-dir` is the program's option (also after `setup`): read it from there.
      // `npm run cli -- setup` passes the checkout's data/ as --default-data-dir: the entry keeps it.
      const globals = command.optsWithGlobals<SetupOptions & { defaultDataDir?: string }>();
      const dataDir = options.dataDir ?? globals.dataDir ?? globals.defaultDataDir;
      try {
        await runSetup(ctx, client, { ...options, ...(dataDir === undefined ? {} : { dataDir }) });
      } catch (err) {
        if (err instanceof SetupError) command.error(`agent-context setup: ${err.message}`);
        throw err;
      }
    });
}
