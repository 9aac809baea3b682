/**
 * The json the charge functions (migration 0009) answer, as the model's records: memory values in hex (bytea,
 * which may hold NUL), instants as ISO text, refusals as the port's.
 */
import type { ChargeRefusal } from '../../core/charge-port.js';
import type { Memory, MemoryVersion } from '../../core/model.js';
import { int, type Row, toMemory, toMemoryVersion } from './postgres-rows.js';

/**
 * A refusal as the functions answer it: the port's, or `stale` (what the operation planned on, read before
 * the statement, changed since: postgres-charges.ts plans again or takes the transaction path).
 */
export type StatementRefusal = ChargeRefusal | { refused: 'stale' };

/** A refusal as the functions answer it. */
export function toRefusal(r: Row): StatementRefusal {
  switch (r.refused) {
    case 'insufficient_credits':
      return { refused: 'insufficient_credits', balanceCents: int(r.balance) };
    case 'daily_limit_reached':
      return { refused: 'daily_limit_reached', spentCents: int(r.spent), limitCents: int(r.limit) };
    case 'version_conflict':
      return {
        refused: 'version_conflict',
        key: String(r.key),
        currentVersion: r.current === null ? null : int(r.current),
      };
    case 'import_quota_exceeded':
      return { refused: 'import_quota_exceeded', held: int(r.held), created: int(r.created) };
    default:
      // unauthorized, not_found, quota_exceeded, version_not_found, version_deleted, stale: nothing more.
      return { refused: r.refused } as StatementRefusal;
  }
}

/** A value the functions send as hex (bytea, which may hold NUL), as the bytes a row's bytea column holds. */
const bytesOf = (value: unknown) => Buffer.from(String(value), 'hex');

/** A memory as the functions answer it (ac_memory_json): the columns of its row, but the agent's id. */
export function memoryOf(agentId: string, m: Row): Memory {
  return toMemory({ ...m, agent_id: agentId, value: bytesOf(m.value) });
}

/** A history entry as the functions answer it (ac_version_json): its row's columns, but the agent and key. */
export function versionOf(agentId: string, key: string, h: Row): MemoryVersion {
  return toMemoryVersion({ ...h, agent_id: agentId, key, value: bytesOf(h.value) });
}

/** The json of a memory_store's results. */
export function storeResultsOf(agentId: string, r: Row) {
  return (r.results as Row[]).map((item) => ({
    memory: memoryOf(agentId, item.memory as Row),
    created: item.created === true,
  }));
}
