/**
 * The JSON store's server at one store size in `npm run bench`: its prefill (generated once, for the PostgreSQL
 * database too), its start (time to ready, RSS), its memory after the load and once idle, and its stop; what it
 * makes is the start-up table's row.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { primeWeatherCache } from '../http/weather-cache.js';
import type { StartupResult } from '../report/results.js';
import { errorLogLines, spawnBenchServer } from '../shared/bench-server.js';
import { makeTempDir } from '../shared/cleanup.js';
import { formatNumber } from '../shared/number-format.js';
import { generatePrefill, type PrefillData, writeSnapshot } from '../shared/prefill.js';
import { residentMemory } from '../shared/process-usage.js';
import { sleep } from '../shared/processes.js';
import { progress } from './progress.js';
import { SERVER_LOG_LEVEL } from './settings.js';

export interface JsonStoreServer {
  /** The prefill, as generated: the PostgreSQL database at the largest size gets the same. */
  data: PrefillData;
  url: string;
  pid: number;
  /** Reads its RSS right after its own last load, before the PostgreSQL scenarios leave it idle. */
  loadEnded: () => Promise<void>;
  /**
   * Idles until `settleSeconds` after its load ended, reads its RSS again and stops it: its start-up row, and
   * the problems seen (error log lines, an exit code other than 0).
   */
  stop: (settleSeconds: number) => Promise<{ startup: StartupResult; problems: string[] }>;
  /** Removes its data. */
  remove: () => Promise<void>;
}

/** Prefills a JSON store of `size` memories over `agents` agents and starts its server, the weather cache primed. */
export async function startJsonStoreServer(
  size: number,
  agents: number,
  upstreamUrl: string,
): Promise<JsonStoreServer> {
  progress(`agent-context REST with ${formatNumber(size)} memories over ${formatNumber(agents)} agents`);
  const { dir, remove } = await makeTempDir(`rest-${size}`);
  const dataDir = path.join(dir, 'data');
  await mkdir(dataDir);
  const data = generatePrefill(size, agents);
  const written = await writeSnapshot(dataDir, data);
  const prefill = { fileBytes: written.fileBytes, ms: data.ms + written.ms };
  progress(`  prefilled ${(prefill.fileBytes / 1e6).toFixed(1)} MB in ${formatNumber(prefill.ms)} ms`);
  const server = spawnBenchServer({
    name: 'agent-context serve',
    dataDir,
    upstreamUrl,
    logFile: path.join(dir, 'server.log'),
    logLevel: SERVER_LOG_LEVEL,
  });
  const { ms: readyMs, url } = await server.ready;
  const pid = server.child.pid as number;
  const atReady = await residentMemory(pid);
  progress(`  ready in ${formatNumber(readyMs)} ms at ${url}, RSS ${atReady?.rssMb.toFixed(0)} MB`);

  await primeWeatherCache(url, data.agents[0] as (typeof data.agents)[number]);

  let afterLoad: Awaited<ReturnType<typeof residentMemory>>;
  let loadEnded = performance.now();
  return {
    data,
    url,
    pid,
    loadEnded: async () => {
      afterLoad = await residentMemory(pid);
      loadEnded = performance.now();
    },
    stop: async (settleSeconds) => {
      progress(`  RSS ${afterLoad?.rssMb.toFixed(0)} MB after the load; idle ${settleSeconds} s`);
      // Counted from the server's own last load (the PostgreSQL scenarios after it are idle time for it).
      await sleep(Math.max(0, settleSeconds * 1000 - (performance.now() - loadEnded)));
      const settled = await residentMemory(pid);
      const stopping = performance.now();
      const exitCode = await server.stop();
      const shutdownMs = performance.now() - stopping;
      const errors = await errorLogLines(server.logFile);
      const problems: string[] = [];
      if (errors.count)
        problems.push(
          `server @${formatNumber(size)} logged ${errors.count} error lines; first: ${errors.first}`,
        );
      if (exitCode !== 0)
        problems.push(`server @${formatNumber(size)} exited with code ${exitCode} after SIGTERM.`);
      const startup: StartupResult = {
        memories: size,
        snapshotMb: prefill.fileBytes / 1e6,
        prefillMs: prefill.ms,
        readyMs,
        rssReadyMb: atReady?.rssMb ?? Number.NaN,
        rssAfterLoadMb: afterLoad?.rssMb ?? Number.NaN,
        rssSettledMb: settled?.rssMb ?? Number.NaN,
        peakRssMb: afterLoad?.peakMb ?? Number.NaN,
        shutdownMs,
        exitCode,
        errorLogLines: errors.count,
        ...(errors.first === undefined ? {} : { firstErrorLog: errors.first }),
      };
      return { startup, problems };
    },
    remove,
  };
}
