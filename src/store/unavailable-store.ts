/**
 * A store port that cannot serve: every read and transaction fails with one AppError (`unavailable`)
 * whose message says what is wrong and what to do. The stdio MCP server runs its ordinary core over it
 * when the real store cannot be opened, so that the client still connects and every tool call shows the
 * person that message, instead of a process that dies with "Connection closed".
 */
import { AppError } from '../core/errors.js';
import type { StorePort } from '../core/store-port.js';

export function unavailableStore(message: string): StorePort {
  const fail = () => Promise.reject(new AppError('unavailable', message));
  return {
    charges: {
      retrieveMemory: fail,
      storeMemories: fail,
      memoryHistory: fail,
      restoreMemory: fail,
      importMemories: fail,
      charge: fail,
    },
    transact: fail,
    read: fail,
    ledgerPage: fail,
    ledgerUsage: fail,
    liveUsage: fail,
    liveUsageTotals: fail,
    listAccounts: fail,
    claimIdempotency: fail,
    releaseIdempotency: async () => undefined,
    close: async () => undefined,
    health: async () => 'failed',
    stats: () => ({}),
  };
}
