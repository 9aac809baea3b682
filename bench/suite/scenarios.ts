/**
 * `npm run bench`'s scenarios at one store size, in the order a round measures them: the ceilings (bare Express 5,
 * the stock one right before the scenarios it is the ceiling of), the JSON store's scenarios, then the PostgreSQL
 * instances' (each behind its textbook Express + pg ceiling); and the PostgreSQL instances' warm-up before the
 * rounds. Each load's result goes to the collector.
 */
import type { Ceiling } from '../ceilings/start-ceilings.js';
import { type LoadSettings, load, loadParallel } from '../http/load.js';
import {
  bareGetRequests,
  barePostRequests,
  cachedDataRequests,
  MCP_ERAS,
  mcpRetrieveRequests,
  memoryRetrieveRequests,
  memorySearchRequests,
  memoryStoreRequests,
} from '../http/requests.js';
import type { BenchAgent } from '../shared/prefill.js';
import type { Collector } from './collector.js';
import type { PostgresBench } from './postgres-instances.js';
import { withCpu } from './processor-time.js';
import { progress } from './progress.js';
import { mcpHttpScenario, PG_SCENARIOS, TUNED_CEILINGS } from './scenario-names.js';
import { PG_WARMUP_MIN_SECONDS } from './settings.js';

/** What every load at one store size shares. */
export interface AtSize {
  /** The store's size, in memories. */
  size: number;
  agents: readonly BenchAgent[];
  settings: LoadSettings;
  collector: Collector;
}

/** The two bare Express ceilings: the stock one (the targets') and the one on the app's prototypes. */
export interface BareCeilings {
  stock: Ceiling;
  tuned: Ceiling;
}

/** The ceilings, the second (for information) first, so that the stock one stays right before the scenarios. */
export async function measureCeilings(at: AtSize, round: number, ceilings: BareCeilings): Promise<void> {
  const { agents, settings, collector } = at;
  const tags = { ceilingFor: at.size, round };
  collector.note(
    await load(TUNED_CEILINGS.post, ceilings.tuned.url, barePostRequests(agents), settings, tags),
  );
  collector.note(await load(TUNED_CEILINGS.get, ceilings.tuned.url, bareGetRequests(agents), settings, tags));
  collector.note(
    await load('bare Express POST', ceilings.stock.url, barePostRequests(agents), settings, tags),
  );
  collector.note(await load('bare Express GET', ceilings.stock.url, bareGetRequests(agents), settings, tags));
}

/**
 * The JSON store's scenarios: reads first, so that the first round sees the store at its nominal size;
 * memory_store (which adds keys) last. memory_retrieve and memory_store with their processor time.
 */
export async function measureJsonStore(
  at: AtSize,
  round: number,
  server: { url: string; pid: number },
): Promise<void> {
  const { agents, settings, collector } = at;
  const { url, pid } = server;
  const tags = { memories: at.size, round };
  collector.note(
    await withCpu(() => load('memory_retrieve', url, memoryRetrieveRequests(agents), settings, tags), [pid]),
  );
  collector.note(await load('memory_search', url, memorySearchRequests(agents), settings, tags));
  collector.note(await load('data (cached)', url, cachedDataRequests(agents), settings, tags));
  for (const revision of MCP_ERAS) {
    const requests = mcpRetrieveRequests(agents, revision);
    collector.note(await load(mcpHttpScenario(revision), url, requests, settings, tags));
  }
  collector.note(
    await withCpu(() => load('memory_store', url, memoryStoreRequests(agents), settings, tags), [pid]),
  );
}

/**
 * A fresh instance on PostgreSQL measured slow for its first seconds of load: its first memory_retrieve load at
 * about half the next one, also when the other instance had just read the same data (so not the database's
 * buffers; likely the new pool's backends and code not yet optimised). So each instance gets one unrecorded
 * memory_retrieve load first. The JSON store's rows keep the conditions of the earlier runs (no such load).
 */
export async function warmUpPostgres(at: AtSize, pg: PostgresBench): Promise<void> {
  for (const instance of pg.urls) {
    const warmSeconds = Math.max(at.settings.seconds, PG_WARMUP_MIN_SECONDS);
    progress(`  warming ${instance} up: ${warmSeconds} s of memory_retrieve, not recorded`);
    const warm = await load(
      'warm-up (PostgreSQL)',
      instance,
      memoryRetrieveRequests(at.agents),
      { ...at.settings, seconds: warmSeconds },
      { memories: at.size, round: 0 },
    );
    if (warm.non2xx || warm.errors)
      at.collector.problems.push(
        `warm-up of ${instance}: ${warm.non2xx} non-2xx (${JSON.stringify(warm.statusCodes)}), ${warm.errors} errors`,
      );
  }
}

/**
 * The PostgreSQL scenarios, right after the JSON store's: each charged one right after its ceiling (the textbook
 * transaction by hand, issue 32), both with the processor time of their server and of the database; the one-instance
 * scenarios on the first instance, then cached data on every instance at once.
 */
export async function measurePostgres(at: AtSize, round: number, pg: PostgresBench): Promise<void> {
  const { agents, settings, collector } = at;
  const [first, ...others] = pg.urls as [string, ...string[]];
  const [firstPid] = pg.pids.instances as [number];
  const tags = { memories: at.size, round };
  const ceiling = { ceilingFor: at.size, round };
  const charged = (
    scenario: string,
    url: string,
    requests: typeof memoryRetrieveRequests,
    pid: number,
    of: typeof tags | typeof ceiling,
  ) => withCpu(() => load(scenario, url, requests(agents), settings, of), [pid], pg.database);
  collector.note(
    await charged(
      PG_SCENARIOS.textbookGet,
      pg.textbookUrl,
      memoryRetrieveRequests,
      pg.pids.textbook,
      ceiling,
    ),
  );
  collector.note(await charged(PG_SCENARIOS.retrieve, first, memoryRetrieveRequests, firstPid, tags));
  collector.note(await load(PG_SCENARIOS.cached, first, cachedDataRequests(agents), settings, tags));
  collector.note(
    await charged(PG_SCENARIOS.textbookPost, pg.textbookUrl, memoryStoreRequests, pg.pids.textbook, ceiling),
  );
  collector.note(await charged(PG_SCENARIOS.store, first, memoryStoreRequests, firstPid, tags));
  const targets = [first, ...others].map((target) => ({ url: target, requests: cachedDataRequests(agents) }));
  collector.note(await loadParallel(PG_SCENARIOS.cachedTwo, targets, settings, tags));
}
