/**
 * The json the charge functions (migration 0009) answer, as the model's records: memory values in hex (bytea,
 * which may hold NUL), instants as ISO text, refusals as the port's.
 */
import type { ChargeRefusal } from '../../core/charge-port.js';
import type { JsonObject, Memory, MemoryVersion } from '../../core/model.js';
import { int, iso } from './postgres-rows.js';

export type Row = Record<string, unknown>;

/** A refusal as the functions answer it, as the port's. */
export function toRefusal(r: Row): ChargeRefusal {
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
      return { refused: r.refused } as ChargeRefusal;
  }
}

/** A value the functions send as hex (bytea, which may hold NUL), as text. */
function fromHex(value: unknown): string {
  return Buffer.from(String(value), 'hex').toString('utf8');
}

/** A memory as the functions answer it (ac_memory_json). */
export function memoryOf(agentId: string, m: Row): Memory {
  return {
    agentId,
    key: String(m.key),
    value: fromHex(m.value),
    type: m.type as Memory['type'],
    metadata: m.metadata as JsonObject,
    createdAt: iso(m.created_at),
    updatedAt: iso(m.updated_at),
    version: int(m.version),
    ...(m.expires_at === null ? {} : { expiresAt: iso(m.expires_at) }),
    ...(m.ttl_seconds === null ? {} : { ttlSeconds: int(m.ttl_seconds) }),
  };
}

/** A history entry as the functions answer it (ac_version_json). */
export function versionOf(agentId: string, key: string, h: Row): MemoryVersion {
  const base = { agentId, key, version: int(h.version), at: iso(h.at) };
  if (h.deleted === true) return { ...base, deleted: true };
  return {
    ...base,
    value: fromHex(h.value),
    type: h.type as Memory['type'],
    metadata: h.metadata as JsonObject,
    ...(h.ttl_seconds === null ? {} : { ttlSeconds: int(h.ttl_seconds) }),
  };
}

/** The json of a memory_store's results. */
export function storeResultsOf(agentId: string, r: Row) {
  return (r.results as Row[]).map((item) => ({
    memory: memoryOf(agentId, item.memory as Row),
    created: item.created === true,
  }));
}
