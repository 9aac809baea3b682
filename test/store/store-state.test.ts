/** The JSON store's in-memory state: what it gives to be written as a snapshot. */
import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/core/model.js';
import { JsonState } from '../../src/store/json/json-state.js';

describe('JsonState', () => {
  it('gives a snapshot of an agent with 200,000 ledger entries (more than a call can take as arguments)', () => {
    const entries = 200_000;
    const ledger: LedgerEntry[] = Array.from({ length: entries }, (_, i) => ({
      id: `e${i}`,
      agentId: 'agent-1',
      at: new Date(Date.UTC(2026, 0, 1) + i).toISOString(),
      operation: i === 0 ? 'starter_credit' : 'memory_search',
      amountCents: i === 0 ? entries : -1,
      balanceAfterCents: entries - i,
    }));
    const state = JsonState.fromSnapshot({ format: 'agent-context/1', accounts: [], memories: [], ledger });
    const snapshot = state.toSnapshot();
    expect(snapshot.ledger).toHaveLength(entries);
    expect(snapshot.ledger.at(-1)).toEqual(ledger.at(-1));
  });
});
