/** The report's heading and its setup: what ran, where, on which code, and how each kind of row was measured. */
import { formatNumber } from '../shared/number-format.js';
import { PG_SCENARIOS } from '../suite/scenario-names.js';
import type { BenchResults } from './results.js';

export function setupLines(results: BenchResults): string[] {
  const lines: string[] = [];
  const s = results.settings;
  lines.push('## agent-context benchmark (issues 5, 12 and 13)', '');
  lines.push(`- Command: \`${results.command}\``);
  lines.push(`- Date: ${results.date}; total ${Math.round(results.totalSeconds)} s`);
  lines.push(
    `- Machine: ${results.machine.cpu}, ${results.machine.cores} cores, ${results.machine.memoryGb.toFixed(1)} GB RAM, ` +
      `${results.machine.os}, Node ${results.machine.node}`,
  );
  lines.push(
    `- Disk: a journal commit (a 300-byte line written into a zero-filled file, then fdatasync) took ` +
      `${results.diskSync.medianUs} µs at the median, ${results.diskSync.p90Us} µs at p90 ` +
      `(${formatNumber(results.diskSync.commits)} in a row, before the loads); a sequential MCP caller waits for one per call`,
  );
  lines.push(
    `- Code: ${results.git.commit}` +
      (results.git.dirtyFiles.length
        ? ` with uncommitted changes in ${results.git.dirtyFiles.join(', ')}`
        : ' (clean)'),
  );
  lines.push(
    `- Versions: ${Object.entries(results.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  lines.push(
    `- HTTP: autocannon, ${s.connections} connections, ${s.rounds} rounds of ${s.warmupSeconds} s warm-up then ${s.seconds} s per scenario; ` +
      `${formatNumber(s.agents)} agents; NODE_ENV=production; server log level ${s.serverLogLevel} (stderr to a file). ` +
      `ops/s counts 2xx responses; latencies are of 2xx responses.`,
  );
  lines.push(
    `- MCP: SDK client over stdio, one call at a time, ${s.rounds} rounds of ${s.warmupSeconds} s warm-up then ${s.seconds} s per phase ` +
      `(server-memory: one round of ${s.seconds * s.rounds} s); ` +
      `agent-context on a fresh store of ${formatNumber(s.mcpMemories)} memories; server-memory with its graph built ` +
      `to ${formatNumber(s.peerEntities)} entities (${formatNumber(results.peerBuildMs)} ms in batches of 500).`,
  );
  const pgSetup = results.postgres;
  if (pgSetup) {
    const p = pgSetup.prefill;
    lines.push(
      `- PostgreSQL ${pgSetup.version}, at ${formatNumber(pgSetup.memories)} memories: a throwaway cluster on ` +
        `this machine (sharing its cores), ${pgSetup.durability}: a commit is on disk when acknowledged, as the ` +
        `JSON store's fdatasync makes it. Prefilled with the JSON store's data through ${p.method}: ` +
        `${formatNumber(p.writeMs)} ms (migrate ${formatNumber(p.migrateMs)} ms; then VACUUM ANALYZE and ` +
        `CHECKPOINT ${formatNumber(p.settleMs)} ms). ${pgSetup.instances.length} instances of agent-context ` +
        `serve on that database (AC_INSTANCES=${pgSetup.acInstances}, default pool), started once and ` +
        `idle when not loaded; the one-instance rows load the first. Before the rounds, each instance gets ` +
        `one unrecorded memory_retrieve load (a fresh instance measured at about half its speed for its first ` +
        `seconds of load). In each round, right after the JSON ` +
        `store's scenarios at that size: ${PG_SCENARIOS.textbookGet}, ${PG_SCENARIOS.retrieve}, ` +
        `${PG_SCENARIOS.cached}, ${PG_SCENARIOS.textbookPost}, ${PG_SCENARIOS.store}, then ` +
        `${PG_SCENARIOS.cachedTwo}: one autocannon load per instance at once, ` +
        `half the connections each, ops/s summed, p50 and p99 the larger of the two. Weather cache primed ` +
        `${pgSetup.weatherCache === 'shared' ? 'once, through the first instance (the cache is shared on the database)' : 'on each instance (no shared cache)'}. ` +
        'The textbook rows are the ceiling of issue 32: a bare Express 5 app with pg (bench/ceilings/textbook-express.ts) on ' +
        'the same database with the same pool (10), doing by hand BEGIN; the account by its key FOR UPDATE; the ' +
        'memory read (or upserted); the ledger entry; the balance; COMMIT.',
    );
    lines.push(
      `- PostgreSQL instances: ${pgSetup.instances
        .map(
          (i, n) =>
            `#${n + 1} ready in ${formatNumber(i.readyMs)} ms, RSS ${i.rssReadyMb.toFixed(0)} MB, shutdown ` +
            `${formatNumber(i.shutdownMs ?? Number.NaN)} ms (exit ${i.exitCode}), ${i.errorLogLines ?? '?'} error log lines`,
        )
        .join('; ')}`,
    );
  }
  return lines;
}
