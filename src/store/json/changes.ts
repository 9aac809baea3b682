/**
 * A transaction's writes as plain records. The state applies them at commit; being plain JSON, they are
 * also what a journal would record.
 */
import type { Account, IdempotencyRecord, LedgerEntry, Memory, MemoryVersion } from '../../core/model.js';
import type { LiveUsageCount } from '../../core/store-port.js';

export type Change =
  | { op: 'account.put'; account: Account }
  | { op: 'ledger.append'; entry: LedgerEntry }
  | { op: 'memory.put'; memory: Memory }
  | { op: 'memory.delete'; agentId: string; key: string }
  | { op: 'memory.expiry'; agentId: string; key: string; expiresAt: string }
  | { op: 'idempotency.put'; record: IdempotencyRecord }
  | { op: 'history.put'; entry: MemoryVersion; keep: number }
  | { op: 'history.drop'; agentId: string; key: string }
  | { op: 'usage.add'; counts: LiveUsageCount[] }
  | { op: 'usage.drop'; before: string };
