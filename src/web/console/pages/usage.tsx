/**
 * Usage: spend per day over 30 days and per operation (GET /api/ac/account/usage), the live-data cache-hit
 * rate, and the ledger, a page at a time (GET /api/ac/account/transactions).
 */
import { ApiError, call } from '../api';
import { DayChart, InlineBar } from '../charts';
import { ErrorMessage, PageHeading, Pager, TableWrap, Time, useCursorPages, useLoad } from '../components';
import { cents, operationName, percent, signedCents } from '../format';
import type { Transaction, Transactions, Usage } from '../types';

const DAYS = 30;
const LEDGER_PAGE = 20;

export function UsagePage(props: { focus: boolean }) {
  const usage = useLoad(
    async () => (await call<Usage>('/api/ac/account/usage', { query: { days: DAYS } })).body,
    [],
  );
  return (
    <>
      <PageHeading title="Usage" focus={props.focus} />
      {usage.error instanceof ApiError && usage.error.status === 404 ? (
        <p class="message message-info">
          This server does not report usage figures yet; the ledger is below.
        </p>
      ) : (
        <ErrorMessage error={usage.error} />
      )}
      {usage.loading ? <p>Loading…</p> : null}
      {usage.data ? <UsageFigures usage={usage.data} /> : null}
      <Ledger />
    </>
  );
}

function UsageFigures({ usage }: { usage: Usage }) {
  const total = usage.days.reduce((sum, d) => sum + d.spent_cents, 0);
  const charges = usage.days.reduce((sum, d) => sum + d.charges, 0);
  const top = usage.days.reduce<Usage['days'][number] | undefined>(
    (best, d) => (!best || d.spent_cents > best.spent_cents ? d : best),
    undefined,
  );
  const label =
    `Bar chart of the spend per day over the last ${usage.days.length} days: ${cents(total)} in total` +
    (top && top.spent_cents > 0 ? `, most on ${top.date} (${cents(top.spent_cents)}).` : '.');
  const maxOp = Math.max(0, ...usage.operations.map((o) => o.spent_cents));
  const live = usage.live_data;
  return (
    <div class="grid">
      <section class="card wide" aria-labelledby="per-day-title">
        <h2 id="per-day-title">Spend per day, last {usage.days.length} days</h2>
        <p>
          <strong data-testid="window-spent">{cents(total)}</strong> in {charges}{' '}
          {charges === 1 ? 'charge' : 'charges'} since <Time iso={usage.since} /> (days in UTC).
        </p>
        <DayChart
          label={label}
          bars={usage.days.map((d) => ({
            date: d.date,
            value: d.spent_cents,
            detail: `${d.date}: ${cents(d.spent_cents)} in ${d.charges} ${d.charges === 1 ? 'charge' : 'charges'}`,
          }))}
        />
        <details>
          <summary>The figures as a table</summary>
          <TableWrap label="Spend per day">
            <table>
              <caption class="visually-hidden">Spend per day</caption>
              <thead>
                <tr>
                  <th scope="col">Day (UTC)</th>
                  <th scope="col" class="num">
                    Spent
                  </th>
                  <th scope="col" class="num">
                    Charges
                  </th>
                </tr>
              </thead>
              <tbody>
                {usage.days.map((d) => (
                  <tr key={d.date}>
                    <th scope="row">{d.date}</th>
                    <td class="num">{cents(d.spent_cents)}</td>
                    <td class="num">{d.charges}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        </details>
      </section>

      <section class="card" aria-labelledby="per-op-title">
        <h2 id="per-op-title">Spend per operation</h2>
        {usage.operations.length === 0 ? (
          <p>No charges in these {usage.days.length} days.</p>
        ) : (
          <TableWrap label="Spend per operation">
            <table class="ops">
              <thead>
                <tr>
                  <th scope="col">Operation</th>
                  <th scope="col" class="num">
                    Charges
                  </th>
                  <th scope="col" class="num">
                    Spent
                  </th>
                  <th scope="col" class="bar-col">
                    <span class="visually-hidden">Share</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {usage.operations.map((o) => (
                  <tr key={o.operation}>
                    <th scope="row">{operationName(o.operation)}</th>
                    <td class="num">{o.charges}</td>
                    <td class="num">{cents(o.spent_cents)}</td>
                    <td class="bar-col">
                      <InlineBar value={o.spent_cents} max={maxOp} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
      </section>

      <section class="card" aria-labelledby="live-usage-title">
        <h2 id="live-usage-title">Live data from the cache</h2>
        <p class="figure" data-testid="cache-hit-rate">
          {percent(live.cache_hit_rate)}
        </p>
        <p>
          {live.answers === 0
            ? 'No live-data answers in these days.'
            : `of ${live.answers} live-data ${live.answers === 1 ? 'answer was' : 'answers were'} served without a paid fetch.`}
        </p>
        <dl class="items compact">
          <div class="item">
            <dt>Fetched fresh (paid)</dt>
            <dd>{live.fresh}</dd>
          </div>
          <div class="item">
            <dt>From the cache</dt>
            <dd>{live.hit}</dd>
          </div>
          <div class="item">
            <dt>Joined another fetch</dt>
            <dd>{live.shared_flight}</dd>
          </div>
          <div class="item">
            <dt>Stale, upstream down</dt>
            <dd>{live.stale}</dd>
          </div>
        </dl>
      </section>
    </div>
  );
}

function concerning(t: Transaction): string {
  if (t.memory_key !== undefined) return t.memory_key;
  if (t.query !== undefined) return t.query_type ? `${t.query_type}: ${t.query}` : t.query;
  if (t.operation === 'plan_change' && t.plan) return `to ${t.plan}`;
  if (t.plan) return `covered by ${t.plan}`;
  return '';
}

function Ledger() {
  const pages = useCursorPages();
  const ledger = useLoad(
    async () =>
      (
        await call<Transactions>('/api/ac/account/transactions', {
          query: { limit: LEDGER_PAGE, cursor: pages.cursor },
        })
      ).body,
    [pages.cursor],
  );
  const next = ledger.data?.next_cursor ?? null;
  return (
    <section class="card wide ledger" aria-labelledby="ledger-title">
      <h2 id="ledger-title">Ledger</h2>
      <p>Every credit and charge of the account, newest first. Free operations leave no entry.</p>
      <ErrorMessage error={ledger.error} />
      {ledger.data ? (
        <TableWrap label="Ledger entries">
          <table data-testid="ledger" class="stack-table">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Operation</th>
                <th scope="col" class="num">
                  Amount
                </th>
                <th scope="col" class="num">
                  Balance after
                </th>
                <th scope="col">Memory key or query</th>
              </tr>
            </thead>
            <tbody>
              {ledger.data.transactions.map((t) => (
                <tr key={t.id}>
                  <td data-label="Time">
                    <Time iso={t.at} />
                  </td>
                  <td data-label="Operation">
                    {operationName(t.operation)}
                    {t.cost_cents !== undefined && t.cost_cents !== -t.amount_cents ? (
                      <span class="hint"> (cost {cents(t.cost_cents)})</span>
                    ) : null}
                  </td>
                  <td data-label="Amount" class={t.amount_cents < 0 ? 'num negative' : 'num'}>
                    {signedCents(t.amount_cents)}
                  </td>
                  <td data-label="Balance after" class="num">
                    {cents(t.balance_after_cents)}
                  </td>
                  <td data-label="Concerning" class="concerning">
                    {concerning(t)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      ) : ledger.loading ? (
        <p>Loading…</p>
      ) : null}
      <Pager
        label="Ledger pages"
        hasPrevious={pages.hasPrevious}
        hasNext={next !== null && !ledger.error}
        busy={ledger.loading}
        onPrevious={pages.back}
        onNext={() => pages.forward(next)}
        note={`Page ${pages.page}`}
      />
    </section>
  );
}
