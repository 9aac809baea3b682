/**
 * What the operator (AC_ADMIN_TOKEN) sees: the accounts with their balances and plans, page by page, and
 * the service's live-data health: each provider's breaker, recent failures and token bucket (this
 * process's), the cache's size, and how today's answers were served (every instance's, from the store).
 */
import type { Clock } from './clock.js';
import type { LiveCache, LiveDataSource } from './live-port.js';
import { readCursor, writeCursor } from './page-cursor.js';
import type { Input, Output } from './schemas.js';
import type { StorePort } from './store-port.js';
import { type LiveUsageTally, liveSummary } from './usage.js';

export function createOperatorViews(
  store: StorePort,
  live: LiveDataSource,
  cache: LiveCache,
  clock: Clock,
  tally: LiveUsageTally,
) {
  async function accounts(input: Input<'AdminAccountsInput'>): Promise<Output<'AdminAccountsOutput'>> {
    const after =
      input.cursor === undefined
        ? undefined
        : readCursor(input.cursor, (body) => (typeof body.e === 'string' ? body.e : undefined));
    const page = await store.listAccounts({
      limit: input.limit + 1,
      ...(after === undefined ? {} : { after }),
      ...(input.email === undefined ? {} : { emailContains: input.email }),
    });
    const shown = page.accounts.slice(0, input.limit);
    const last = shown.at(-1);
    return {
      accounts: shown.map((account) => ({
        email: account.email,
        name: account.name,
        plan: account.plan,
        credit_balance_cents: account.balanceCents,
        created_at: account.createdAt,
      })),
      total: page.total,
      next_cursor: last && page.accounts.length > input.limit ? writeCursor({ e: last.email }) : null,
    };
  }

  async function status(): Promise<Output<'AdminStatusOutput'>> {
    const today = clock.now().toISOString().slice(0, 10);
    await tally.flush();
    const [entries, counts] = await Promise.all([cache.entries(), store.liveUsageTotals(today)]);
    const answers = liveSummary(counts);
    return {
      providers: (live.status?.() ?? []).map((provider) => ({
        chain: provider.chain,
        id: provider.id,
        breaker: provider.breaker,
        recent_failures: provider.recentFailures,
        tokens: {
          available: Math.floor(provider.tokens.available * 100) / 100,
          capacity: provider.tokens.capacity,
        },
      })),
      cache: {
        entries,
        day: today,
        hits: answers.answers - answers.fresh,
        misses: answers.fresh,
        hit_rate: answers.cache_hit_rate,
      },
    };
  }

  return { accounts, status };
}
