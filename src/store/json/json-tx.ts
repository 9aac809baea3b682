/**
 * A transaction over JsonState: writes are recorded as Changes and kept in an overlay, so the
 * transaction reads its own writes while the committed state stays untouched until commit.
 */
import {
  type Account,
  costOf,
  type IdempotencyRecord,
  isLive,
  type LedgerEntry,
  type Memory,
  type MemoryVersion,
} from '../../core/model.js';
import type { LiveUsageCount, StoreTx } from '../../core/store-port.js';
import type { MemoryFilter, MemoryQuery } from '../../core/store-reader.js';
import type { Change } from './changes.js';
import { idempotencySlot, type JsonState } from './json-state.js';
import { runMemoryQuery } from './memory-query.js';
import { MemorySearchIndex } from './memory-search-index.js';
import { byKey, newestFirst, newestVersions, withVersion } from './record-lists.js';

export class JsonTx implements StoreTx {
  readonly changes: Change[] = [];
  private readonly accounts = new Map<string, Account>();
  /** agentId → key → memory written in this transaction, or null when deleted. */
  private readonly memories = new Map<string, Map<string, Memory | null>>();
  private readonly ledger: LedgerEntry[] = [];
  private readonly idempotency = new Map<string, IdempotencyRecord>();
  /** Histories written in this transaction, whole (oldest first), by slot. */
  private readonly history = new Map<string, MemoryVersion[]>();

  constructor(private readonly state: JsonState) {}

  async getAccount(id: string) {
    return this.accounts.get(id) ?? this.state.getAccount(id);
  }

  async findAccountByKeyHash(keyHash: string) {
    for (const account of this.accounts.values()) if (account.keyHash === keyHash) return account;
    const found = await this.state.findAccountByKeyHash(keyHash);
    return found && !this.accounts.has(found.id) ? found : undefined;
  }

  async findAccountByEmail(email: string) {
    for (const account of this.accounts.values()) if (account.email === email) return account;
    const found = await this.state.findAccountByEmail(email);
    return found && !this.accounts.has(found.id) ? found : undefined;
  }

  async listLedger(agentId: string, limit: number) {
    const mine = this.ledger.filter((entry) => entry.agentId === agentId);
    return [...this.state.ledgerInOrder(agentId), ...mine].slice(-limit).reverse();
  }

  async getMemory(agentId: string, key: string) {
    const written = this.memories.get(agentId)?.get(key);
    if (written !== undefined) return written ?? undefined;
    return this.state.getMemory(agentId, key);
  }

  async getMemories(agentId: string, keys: readonly string[]) {
    // A transaction that wrote none of the agent's memories (a search's) reads the committed ones at once.
    if (!this.memories.has(agentId)) return this.state.getMemories(agentId, keys);
    const out: Memory[] = [];
    for (const key of keys) {
      const memory = await this.getMemory(agentId, key);
      if (memory !== undefined) out.push(memory);
    }
    return out;
  }

  async listMemories(agentId: string, filter: MemoryFilter) {
    const merged = this.mergedMemories(agentId);
    return merged ? newestFirst(merged, filter) : this.state.listMemories(agentId, filter);
  }

  async listMemoriesByKey(agentId: string, page: { after?: string; limit: number; liveAt: string }) {
    const merged = this.mergedMemories(agentId);
    return merged ? byKey(merged, page) : this.state.listMemoriesByKey(agentId, page);
  }

  async queryMemories(agentId: string, query: MemoryQuery) {
    const merged = this.mergedMemories(agentId);
    if (!merged) return this.state.queryMemories(agentId, query);
    // Rare (a search after a write in one transaction): a throwaway index of what this transaction sees.
    return runMemoryQuery(merged, query, () => new MemorySearchIndex(merged));
  }

  /** The agent's memories in update order as this transaction sees them; undefined when it wrote none. */
  private mergedMemories(agentId: string): Memory[] | undefined {
    const written = this.memories.get(agentId);
    if (!written) return undefined;
    const merged = [...this.state.memoriesInUpdateOrder(agentId)].filter(
      (memory) => !written.has(memory.key),
    );
    for (const memory of written.values()) if (memory) merged.push(memory);
    return merged;
  }

  async countMemories(agentId: string, liveAt?: string) {
    let count = await this.state.countMemories(agentId, liveAt);
    for (const [key, memory] of this.memories.get(agentId) ?? []) {
      const committed = await this.state.getMemory(agentId, key);
      count += (memory && isLive(memory, liveAt) ? 1 : 0) - (committed && isLive(committed, liveAt) ? 1 : 0);
    }
    return count;
  }

  async spentSince(agentId: string, since: string) {
    let spent = await this.state.spentSince(agentId, since);
    for (const entry of this.ledger)
      if (entry.agentId === agentId && entry.at >= since) spent += costOf(entry);
    return spent;
  }

  async getIdempotency(agentId: string, key: string) {
    return this.idempotency.get(idempotencySlot(agentId, key)) ?? this.state.getIdempotency(agentId, key);
  }

  async putIdempotency(record: IdempotencyRecord) {
    this.idempotency.set(idempotencySlot(record.agentId, record.key), record);
    this.changes.push({ op: 'idempotency.put', record });
  }

  async putAccount(account: Account) {
    this.accounts.set(account.id, account);
    this.changes.push({ op: 'account.put', account });
  }

  async appendLedger(entry: LedgerEntry) {
    this.ledger.push(entry);
    this.changes.push({ op: 'ledger.append', entry });
  }

  async putMemory(memory: Memory) {
    this.written(memory.agentId).delete(memory.key);
    this.written(memory.agentId).set(memory.key, memory);
    this.changes.push({ op: 'memory.put', memory });
  }

  async deleteMemory(agentId: string, key: string) {
    if ((await this.getMemory(agentId, key)) === undefined) return false;
    this.written(agentId).set(key, null);
    this.changes.push({ op: 'memory.delete', agentId, key });
    return true;
  }

  async setMemoryExpiry(agentId: string, key: string, expiresAt: string) {
    const memory = await this.getMemory(agentId, key);
    if (!memory) return false;
    // The overlay keeps the memory where it was (Map.set of an existing key keeps its place).
    this.written(agentId).set(key, { ...memory, expiresAt });
    this.changes.push({ op: 'memory.expiry', agentId, key, expiresAt });
    return true;
  }

  async listMemoryVersions(agentId: string, key: string, limit: number) {
    const written = this.history.get(idempotencySlot(agentId, key));
    return written ? newestVersions(written, limit) : this.state.listMemoryVersions(agentId, key, limit);
  }

  async putMemoryVersion(entry: MemoryVersion, keep: number) {
    const slot = idempotencySlot(entry.agentId, entry.key);
    const current = this.history.get(slot) ?? this.state.versionsOf(entry.agentId, entry.key);
    this.history.set(slot, withVersion(current, entry, keep));
    this.changes.push({ op: 'history.put', entry, keep });
  }

  async dropMemoryVersions(agentId: string, key: string) {
    this.history.set(idempotencySlot(agentId, key), []);
    this.changes.push({ op: 'history.drop', agentId, key });
  }

  async addLiveUsage(counts: readonly LiveUsageCount[]) {
    if (counts.length > 0) this.changes.push({ op: 'usage.add', counts: [...counts] });
  }

  /** Drops the live-data answer counts of days before `before` (the JSON store's purge; not in the port). */
  dropLiveUsageBefore(before: string) {
    this.changes.push({ op: 'usage.drop', before });
  }

  private written(agentId: string): Map<string, Memory | null> {
    let perAgent = this.memories.get(agentId);
    if (!perAgent) {
      perAgent = new Map();
      this.memories.set(agentId, perAgent);
    }
    return perAgent;
  }
}
