/**
 * The whole store held in memory, with the indexes that keep every lookup to one agent's data: accounts
 * by id, key hash and e-mail; memories per agent in a Map (so `__proto__` and friends are ordinary keys)
 * whose insertion order is update order; ledger entries per agent in append order.
 */
import type { Account, LedgerEntry, Memory, MemoryType } from '../core/model.js';
import type { StoreReader } from '../core/store-port.js';
import type { Change } from './changes.js';

/** The file format: arrays of records, readable by a person. */
export interface Snapshot {
  format: 'agent-context/1';
  /** The journal sequence number the snapshot includes; later journal entries are replayed on top. */
  lastSeq?: number;
  accounts: Account[];
  memories: Memory[];
  ledger: LedgerEntry[];
}

export const EMPTY_SNAPSHOT: Snapshot = { format: 'agent-context/1', accounts: [], memories: [], ledger: [] };

export class StoreState implements StoreReader {
  private readonly accounts = new Map<string, Account>();
  private readonly idByKeyHash = new Map<string, string>();
  private readonly idByEmail = new Map<string, string>();
  private readonly memories = new Map<string, Map<string, Memory>>();
  private readonly ledger = new Map<string, LedgerEntry[]>();

  static fromSnapshot(snapshot: Snapshot): StoreState {
    const state = new StoreState();
    for (const account of snapshot.accounts) state.apply({ op: 'account.put', account });
    for (const memory of snapshot.memories) state.apply({ op: 'memory.put', memory });
    for (const entry of snapshot.ledger) state.apply({ op: 'ledger.append', entry });
    return state;
  }

  /** The state as a file snapshot, with `pending` changes applied to the snapshot only. */
  toSnapshot(pending: readonly Change[] = []): Snapshot {
    const accounts = new Map(this.accounts);
    const ledger: LedgerEntry[] = [];
    for (const entries of this.ledger.values()) ledger.push(...entries);
    const changed = new Map<string, Map<string, Memory>>();
    const memoriesOf = (agentId: string) => {
      let copy = changed.get(agentId);
      if (!copy) {
        copy = new Map(this.memories.get(agentId));
        changed.set(agentId, copy);
      }
      return copy;
    };
    for (const change of pending) {
      if (change.op === 'account.put') accounts.set(change.account.id, change.account);
      else if (change.op === 'ledger.append') ledger.push(change.entry);
      else if (change.op === 'memory.put')
        memoriesOf(change.memory.agentId).set(change.memory.key, change.memory);
      else memoriesOf(change.agentId).delete(change.key);
    }
    const memories: Memory[] = [];
    for (const [agentId, perAgent] of this.memories)
      memories.push(...(changed.get(agentId) ?? perAgent).values());
    for (const [agentId, perAgent] of changed)
      if (!this.memories.has(agentId)) memories.push(...perAgent.values());
    return { format: 'agent-context/1', accounts: [...accounts.values()], memories, ledger };
  }

  apply(change: Change): void {
    switch (change.op) {
      case 'account.put': {
        const previous = this.accounts.get(change.account.id);
        if (previous) {
          this.idByKeyHash.delete(previous.keyHash);
          this.idByEmail.delete(previous.email);
        }
        this.accounts.set(change.account.id, change.account);
        this.idByKeyHash.set(change.account.keyHash, change.account.id);
        this.idByEmail.set(change.account.email, change.account.id);
        return;
      }
      case 'ledger.append': {
        const entries = this.ledger.get(change.entry.agentId);
        if (entries) entries.push(change.entry);
        else this.ledger.set(change.entry.agentId, [change.entry]);
        return;
      }
      case 'memory.put': {
        let perAgent = this.memories.get(change.memory.agentId);
        if (!perAgent) {
          perAgent = new Map();
          this.memories.set(change.memory.agentId, perAgent);
        }
        perAgent.delete(change.memory.key); // re-insert, so that Map order stays update order
        perAgent.set(change.memory.key, change.memory);
        return;
      }
      case 'memory.delete':
        this.memories.get(change.agentId)?.delete(change.key);
        return;
    }
  }

  async getAccount(id: string) {
    return this.accounts.get(id);
  }

  async findAccountByKeyHash(keyHash: string) {
    const id = this.idByKeyHash.get(keyHash);
    return id === undefined ? undefined : this.accounts.get(id);
  }

  async findAccountByEmail(email: string) {
    const id = this.idByEmail.get(email);
    return id === undefined ? undefined : this.accounts.get(id);
  }

  async listLedger(agentId: string, limit: number) {
    const entries = this.ledger.get(agentId) ?? [];
    return entries.slice(-limit).reverse();
  }

  async getMemory(agentId: string, key: string) {
    return this.memories.get(agentId)?.get(key);
  }

  async listMemories(agentId: string, filter: { type?: MemoryType; limit: number }) {
    return newestFirst(this.memories.get(agentId)?.values() ?? [], filter);
  }

  async countMemories(agentId: string) {
    return this.memories.get(agentId)?.size ?? 0;
  }

  /** Memories of an agent in update order (oldest first), for a transaction's overlay. */
  memoriesInUpdateOrder(agentId: string): Iterable<Memory> {
    return this.memories.get(agentId)?.values() ?? [];
  }

  /** Ledger entries of an agent in append order, for a transaction's overlay. */
  ledgerInOrder(agentId: string): readonly LedgerEntry[] {
    return this.ledger.get(agentId) ?? [];
  }
}

/** Walks memories given oldest first and returns the newest `limit` of them matching `type`. */
export function newestFirst(
  oldestFirst: Iterable<Memory>,
  filter: { type?: MemoryType; limit: number },
): Memory[] {
  const all = [...oldestFirst];
  const out: Memory[] = [];
  for (let i = all.length - 1; i >= 0 && out.length < filter.limit; i--) {
    const memory = all[i] as Memory;
    if (filter.type === undefined || memory.type === filter.type) out.push(memory);
  }
  return out;
}
