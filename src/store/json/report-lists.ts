/**
 * The JSON store's reports (StoreReports) over its in-memory lists: ledger pages and per-day usage of one
 * agent's entries (kept in append order, which is time order), live-data answer counts, and accounts in
 * e-mail order.
 */
import { type Account, CREDIT_KINDS, costOf, type LedgerEntry } from '../../core/model.js';
import type { AccountPage, LedgerPage, LedgerUsage, LiveUsageCount } from '../../core/store-port.js';

const CREDITS: ReadonlySet<string> = new Set(CREDIT_KINDS);

/** The index of the first entry at or after `since` (entries are in time order). */
export function firstAtOrAfter(entries: readonly LedgerEntry[], since: string): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((entries[mid] as LedgerEntry).at < since) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A page newest first; positions are 1-based indexes into `entries` (the PostgreSQL store's `seq`). */
export function ledgerPageOf(
  entries: readonly LedgerEntry[],
  page: { limit: number; before?: number },
): LedgerPage {
  const end = Math.min(entries.length, page.before === undefined ? entries.length : page.before - 1);
  const start = Math.max(0, end - page.limit);
  const slice = entries.slice(start, Math.max(start, end)).reverse();
  return start > 0 && slice.length > 0 ? { entries: slice, next: start + 1 } : { entries: slice };
}

/** Charges at or after `since`, summed per UTC day and operation, in day then operation order. */
export function ledgerUsageOf(entries: readonly LedgerEntry[], since: string): LedgerUsage[] {
  const rows = new Map<string, LedgerUsage>();
  for (let i = firstAtOrAfter(entries, since); i < entries.length; i++) {
    const entry = entries[i] as LedgerEntry;
    if (CREDITS.has(entry.operation)) continue;
    const day = entry.at.slice(0, 10);
    const slot = `${day} ${entry.operation}`;
    const row = rows.get(slot) ?? { day, operation: entry.operation, charges: 0, spentCents: 0 };
    row.charges += 1;
    row.spentCents += costOf(entry);
    rows.set(slot, row);
  }
  return [...rows.values()];
}

/** Per agent, `day state` → count: the live-data answer counts a store keeps. */
export type LiveUsageTable = Map<string, Map<string, number>>;

export function addLiveUsage(table: LiveUsageTable, counts: readonly LiveUsageCount[]): void {
  for (const { agentId, day, state, count } of counts) {
    let perAgent = table.get(agentId);
    if (!perAgent) {
      perAgent = new Map();
      table.set(agentId, perAgent);
    }
    const slot = `${day} ${state}`;
    perAgent.set(slot, (perAgent.get(slot) ?? 0) + count);
  }
}

/** Drops the counts of days before `before` (YYYY-MM-DD); returns how many rows went. */
export function dropLiveUsage(table: LiveUsageTable, before: string): number {
  let dropped = 0;
  for (const [agentId, perAgent] of table) {
    for (const slot of perAgent.keys()) {
      if (slot.slice(0, 10) < before) {
        perAgent.delete(slot);
        dropped++;
      }
    }
    if (perAgent.size === 0) table.delete(agentId);
  }
  return dropped;
}

/** Whether any count is of a day before `before`. */
export function hasLiveUsageBefore(table: LiveUsageTable, before: string): boolean {
  for (const perAgent of table.values())
    for (const slot of perAgent.keys()) if (slot.slice(0, 10) < before) return true;
  return false;
}

/** The counts of one agent (or of every agent: for the snapshot) from `sinceDay` on. */
export function liveUsageOf(
  table: LiveUsageTable,
  agentId: string | undefined,
  sinceDay: string,
): LiveUsageCount[] {
  const agents = agentId === undefined ? [...table.keys()] : [agentId];
  const counts: LiveUsageCount[] = [];
  for (const id of agents) {
    for (const [slot, count] of table.get(id) ?? []) {
      const [day, state] = slot.split(' ') as [string, LiveUsageCount['state']];
      if (day >= sinceDay) counts.push({ agentId: id, day, state, count });
    }
  }
  return counts;
}

/** Every agent's counts from `sinceDay` on, summed per day and state. */
export function liveUsageTotalsOf(
  table: LiveUsageTable,
  sinceDay: string,
): Omit<LiveUsageCount, 'agentId'>[] {
  const totals = new Map<string, Omit<LiveUsageCount, 'agentId'>>();
  for (const { day, state, count } of liveUsageOf(table, undefined, sinceDay)) {
    const row = totals.get(`${day} ${state}`) ?? { day, state, count: 0 };
    row.count += count;
    totals.set(`${day} ${state}`, row);
  }
  return [...totals.values()];
}

export function accountPageOf(
  accounts: Iterable<Account>,
  page: { limit: number; after?: string; emailContains?: string },
): AccountPage {
  const matching = [...accounts].filter(
    (account) => page.emailContains === undefined || account.email.includes(page.emailContains),
  );
  matching.sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0));
  const { after } = page;
  const from = after === undefined ? 0 : matching.findIndex((account) => account.email > after);
  return {
    accounts: from < 0 ? [] : matching.slice(from, from + page.limit),
    total: matching.length,
  };
}
