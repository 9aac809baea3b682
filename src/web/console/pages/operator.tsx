/**
 * The operator's view, signed in with AC_ADMIN_TOKEN (Authorization: Bearer): accounts with their balances
 * and plans, top-ups and plan changes, and the health of the live-data providers and cache.
 */
import { useState } from 'preact/hooks';
import { call } from '../api';
import {
  ErrorMessage,
  PageHeading,
  Pager,
  StatusMessage,
  TableWrap,
  Time,
  useCredentialForm,
  useCursorPages,
  useLoad,
} from '../components';
import { cents, percent } from '../format';
import type { AdminAccounts, AdminStatus, Plan, ProviderStatus } from '../types';

export function OperatorPage(props: {
  focus: boolean;
  token: string | null;
  notice: string | null;
  onSignIn: (token: string) => void;
  onSignOut: () => void;
}) {
  return (
    <>
      <PageHeading title="Operator" focus={props.focus} />
      {props.token ? (
        <OperatorView onSignOut={props.onSignOut} />
      ) : (
        <OperatorSignIn notice={props.notice} onSignIn={props.onSignIn} />
      )}
    </>
  );
}

function OperatorSignIn(props: { notice: string | null; onSignIn: (token: string) => void }) {
  const form = useCredentialForm(async (candidate) => {
    await call<AdminStatus>('/api/ac/admin/status', { auth: 'admin', credential: candidate });
    props.onSignIn(candidate);
  }, 'Paste the admin token first.');
  return (
    <section class="card narrow" aria-labelledby="admin-sign-in-title">
      <h2 id="admin-sign-in-title">Sign in as the operator</h2>
      <p>
        Paste the server’s <code>AC_ADMIN_TOKEN</code>. It is kept in this browser tab only and sent as{' '}
        <code>Authorization: Bearer</code>.
      </p>
      {props.notice ? (
        <p class="message message-info" role="status">
          {props.notice}
        </p>
      ) : null}
      <form class="stack" onSubmit={form.submit} aria-labelledby="admin-sign-in-title">
        <div class="field">
          <label for="admin-token">Admin token</label>
          <input
            id="admin-token"
            type="password"
            autocomplete="off"
            spellcheck={false}
            value={form.value}
            onInput={(e) => form.setValue(e.currentTarget.value)}
          />
        </div>
        <ErrorMessage error={form.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={form.busy}>
            {form.busy ? 'Signing in…' : 'Sign in as operator'}
          </button>
        </div>
      </form>
    </section>
  );
}

function OperatorView(props: { onSignOut: () => void }) {
  const [email, setEmail] = useState('');
  const [round, setRound] = useState(0);
  const [status, setStatus] = useState<string | null>(null);
  const [target, setTarget] = useState('');
  const refresh = () => setRound((r) => r + 1);
  return (
    <>
      <div class="actions toolbar">
        <button type="button" onClick={refresh}>
          Refresh
        </button>
        <button type="button" class="quiet" onClick={props.onSignOut}>
          Leave the operator view
        </button>
      </div>
      <StatusMessage text={status} />
      <div class="grid">
        <Accounts
          round={round}
          email={email}
          onFilter={setEmail}
          onManage={(address) => {
            setTarget(address);
            document.getElementById('top-up-email')?.focus();
          }}
        />
        <TopUp
          target={target}
          onTarget={setTarget}
          onDone={(message) => {
            setStatus(message);
            refresh();
          }}
        />
        <PlanChange
          target={target}
          onTarget={setTarget}
          onDone={(message) => {
            setStatus(message);
            refresh();
          }}
        />
        <Status round={round} />
      </div>
    </>
  );
}

function Accounts(props: {
  round: number;
  email: string;
  onFilter: (email: string) => void;
  onManage: (email: string) => void;
}) {
  const [filter, setFilter] = useState(props.email);
  const pages = useCursorPages();
  const list = useLoad(
    async () =>
      (
        await call<AdminAccounts>('/api/ac/admin/accounts', {
          auth: 'admin',
          query: { limit: 50, cursor: pages.cursor, email: props.email },
        })
      ).body,
    [pages.cursor, props.email, props.round],
  );
  const next = list.data?.next_cursor ?? null;
  return (
    <section class="card wide" aria-labelledby="accounts-title">
      <h2 id="accounts-title">Accounts</h2>
      <form
        class="search-form"
        onSubmit={(event) => {
          event.preventDefault();
          pages.first();
          props.onFilter(filter.trim());
        }}
      >
        <div class="field grow">
          <label for="account-filter">E-mail contains</label>
          <input
            id="account-filter"
            type="search"
            value={filter}
            onInput={(e) => setFilter(e.currentTarget.value)}
          />
        </div>
        <div class="actions end">
          <button type="submit">Find</button>
        </div>
      </form>
      <ErrorMessage error={list.error} />
      {list.data ? (
        <>
          <p class="hint">
            {list.data.total} {list.data.total === 1 ? 'account' : 'accounts'}
            {props.email ? ` whose e-mail contains “${props.email}”` : ''}.
          </p>
          <TableWrap label="Accounts">
            <table data-testid="accounts" class="stack-table">
              <thead>
                <tr>
                  <th scope="col">E-mail</th>
                  <th scope="col">Name</th>
                  <th scope="col">Plan</th>
                  <th scope="col" class="num">
                    Balance
                  </th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.accounts.map((a) => (
                  <tr key={a.email}>
                    <th scope="row" class="email">
                      {a.email}
                    </th>
                    <td data-label="Name">{a.name ?? ''}</td>
                    <td data-label="Plan">
                      <span class="badge">{a.plan}</span>
                    </td>
                    <td data-label="Balance" class="num">
                      {cents(a.credit_balance_cents)}
                    </td>
                    <td data-label="Created">
                      <Time iso={a.created_at} />
                    </td>
                    <td data-label="">
                      <button type="button" class="small" onClick={() => props.onManage(a.email)}>
                        Manage<span class="visually-hidden"> {a.email}</span>
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        </>
      ) : list.loading ? (
        <p>Loading…</p>
      ) : null}
      <Pager
        label="Account pages"
        hasPrevious={pages.hasPrevious}
        hasNext={next !== null && !list.error}
        busy={list.loading}
        onPrevious={pages.back}
        onNext={() => pages.forward(next)}
        note={`Page ${pages.page}`}
      />
    </section>
  );
}

function TopUp(props: {
  target: string;
  onTarget: (email: string) => void;
  onDone: (message: string) => void;
}) {
  const [amount, setAmount] = useState('100');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    const centsToAdd = Number(amount);
    if (!Number.isInteger(centsToAdd) || centsToAdd < 1) {
      setError(new Error('The amount must be a whole number of cents, at least 1.'));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const answer = await call<{ email: string; credited_cents: number; credit_balance_cents: number }>(
        '/api/ac/admin/credits',
        { auth: 'admin', method: 'POST', body: { email: props.target.trim(), cents: centsToAdd } },
      );
      props.onDone(
        `Added ${cents(answer.body.credited_cents)} to ${answer.body.email}: the balance is now ${cents(answer.body.credit_balance_cents)}.`,
      );
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card" aria-labelledby="top-up-title">
      <h2 id="top-up-title">Top up</h2>
      <form class="stack" onSubmit={submit} aria-labelledby="top-up-title">
        <div class="field">
          <label for="top-up-email">E-mail</label>
          <input
            id="top-up-email"
            type="email"
            value={props.target}
            onInput={(e) => props.onTarget(e.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="top-up-cents">Cents to add</label>
          <input
            id="top-up-cents"
            type="number"
            min={1}
            step={1}
            value={amount}
            onInput={(e) => setAmount(e.currentTarget.value)}
          />
        </div>
        <ErrorMessage error={error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            Add credit
          </button>
        </div>
      </form>
    </section>
  );
}

function PlanChange(props: {
  target: string;
  onTarget: (email: string) => void;
  onDone: (message: string) => void;
}) {
  const [plan, setPlan] = useState<Plan>('unlimited');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const answer = await call<{ email: string; plan: Plan; previous_plan: Plan; changed: boolean }>(
        '/api/ac/admin/plan',
        { auth: 'admin', method: 'POST', body: { email: props.target.trim(), plan } },
      );
      const b = answer.body;
      props.onDone(
        b.changed
          ? `${b.email} moved from ${b.previous_plan} to ${b.plan}.`
          : `${b.email} is on ${b.plan} already.`,
      );
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card" aria-labelledby="plan-title">
      <h2 id="plan-title">Change a plan</h2>
      <form class="stack" onSubmit={submit} aria-labelledby="plan-title">
        <div class="field">
          <label for="plan-email">E-mail</label>
          <input
            id="plan-email"
            type="email"
            value={props.target}
            onInput={(e) => props.onTarget(e.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="plan-name">Plan</label>
          <select id="plan-name" value={plan} onChange={(e) => setPlan(e.currentTarget.value as Plan)}>
            <option value="pay-as-you-go">pay-as-you-go</option>
            <option value="unlimited">unlimited</option>
          </select>
        </div>
        <ErrorMessage error={error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>
            Change plan
          </button>
        </div>
      </form>
    </section>
  );
}

function chainOf(p: ProviderStatus): string {
  return p.chain ?? p.query_types?.join(', ') ?? '';
}

function Status({ round }: { round: number }) {
  const status = useLoad(
    async () => (await call<AdminStatus>('/api/ac/admin/status', { auth: 'admin' })).body,
    [round],
  );
  const s = status.data;
  return (
    <>
      <section class="card wide" aria-labelledby="providers-title">
        <h2 id="providers-title">Live-data providers</h2>
        <ErrorMessage error={status.error} />
        {s ? (
          <TableWrap label="Providers">
            <table data-testid="providers" class="stack-table">
              <thead>
                <tr>
                  <th scope="col">Provider</th>
                  <th scope="col">Chain</th>
                  <th scope="col">Breaker</th>
                  <th scope="col">Tokens</th>
                  <th scope="col">Recent failures</th>
                </tr>
              </thead>
              <tbody>
                {s.providers.map((p) => (
                  <tr key={`${chainOf(p)}/${p.id}`}>
                    <th scope="row">{p.id}</th>
                    <td data-label="Chain">{chainOf(p)}</td>
                    <td data-label="Breaker">
                      <span class={`badge breaker-${p.breaker}`}>{p.breaker}</span>
                    </td>
                    <td data-label="Tokens" class="nowrap">
                      {p.tokens ? `${Math.floor(p.tokens.available * 10) / 10} of ${p.tokens.capacity}` : '—'}
                    </td>
                    <td data-label="Failures">
                      {p.recent_failures.length === 0 ? (
                        'none'
                      ) : (
                        <ul class="failures">
                          {p.recent_failures.map((f, i) => (
                            <li key={i}>
                              <Time iso={f.at} />: {f.message}
                            </li>
                          ))}
                        </ul>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        ) : status.loading ? (
          <p>Loading…</p>
        ) : null}
      </section>
      <section class="card" aria-labelledby="cache-title">
        <h2 id="cache-title">Live-data cache</h2>
        {s ? (
          <>
            <p class="figure" data-testid="cache-rate">
              {percent(s.cache.hit_rate)}
            </p>
            <p>
              {s.cache.hit_rate === null
                ? `No live-data answers ${s.cache.day ? `on ${s.cache.day} (UTC)` : 'yet'}.`
                : `hit rate${s.cache.day ? ` on ${s.cache.day} (UTC)` : ''}`}
            </p>
            <dl class="items compact">
              <div class="item">
                <dt>Entries</dt>
                <dd>{s.cache.entries}</dd>
              </div>
              <div class="item">
                <dt>Hits</dt>
                <dd>{s.cache.hits}</dd>
              </div>
              <div class="item">
                <dt>Misses</dt>
                <dd>{s.cache.misses}</dd>
              </div>
            </dl>
          </>
        ) : null}
      </section>
    </>
  );
}
