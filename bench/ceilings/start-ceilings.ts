/**
 * The ceilings started as child processes, each on a free loopback port, registered for cleanup: bare Express 5
 * (bare-express.ts; stock, or on the app's prototypes) and the textbook Express + pg transaction
 * (textbook-express.ts).
 */
import path from 'node:path';
import { minimalEnv, spawnWithLog } from '../shared/processes.js';

export interface Ceiling {
  url: string;
  /** Its process, for its processor time. */
  pid: number;
  stop: () => Promise<number | null>;
}

async function startCeiling(
  name: string,
  script: string,
  env: Record<string, string>,
  logFile: string,
): Promise<Ceiling> {
  const ceiling = spawnWithLog({
    name,
    args: ['--import', 'tsx', path.join(import.meta.dirname, script)],
    env: minimalEnv({ NODE_ENV: 'production', ...env }),
    logFile,
  });
  const { url } = await ceiling.ready;
  return { url, pid: ceiling.child.pid as number, stop: ceiling.stop };
}

/**
 * Bare Express 5, stock (the ceiling of the ratios), or with `appPrototypes` its server making messages
 * with the app's prototypes, as the service's server does (the second ceiling, for information).
 */
export function startBareExpress(logFile: string, appPrototypes = false): Promise<Ceiling> {
  return appPrototypes
    ? startCeiling('bare Express, app prototypes', 'bare-express.ts', { BARE_APP_PROTOTYPES: 'on' }, logFile)
    : startCeiling('bare Express', 'bare-express.ts', {}, logFile);
}

/** The textbook transaction by hand in Express with pg, on `databaseUrl` with a pool of `poolMax`. */
export function startTextbookExpress(
  logFile: string,
  databaseUrl: string,
  poolMax: number,
): Promise<Ceiling> {
  return startCeiling(
    'textbook Express + pg',
    'textbook-express.ts',
    { DATABASE_URL: databaseUrl, POOL_MAX: String(poolMax) },
    logFile,
  );
}
