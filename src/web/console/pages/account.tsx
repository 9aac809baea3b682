/** The account: balance and plan, today's spend against the daily limit, and key rotation. */
import { useState } from 'preact/hooks';
import { ApiError, call } from '../api';
import { ConfirmDialog, CostNote, ErrorMessage, Item, PageHeading, Time, useLoad } from '../components';
import { cents, fromNow } from '../format';
import type { Account, RotateAnswer, Usage } from '../types';

export function AccountPage(props: { focus: boolean; onKeyRotated: (key: string) => void }) {
  const account = useLoad(async () => (await call<Account>('/api/ac/account')).body, []);
  const usage = useLoad(
    async () => (await call<Usage>('/api/ac/account/usage', { query: { days: 1 } })).body,
    [],
  );
  const [confirming, setConfirming] = useState(false);
  const [rotating, setRotating] = useState(false);
  const [rotateError, setRotateError] = useState<unknown>(null);
  const [newKey, setNewKey] = useState<string | null>(null);
  const [copied, setCopied] = useState<string | null>(null);

  const rotate = async () => {
    setConfirming(false);
    setRotating(true);
    setRotateError(null);
    setCopied(null);
    try {
      const answer = await call<RotateAnswer>('/api/ac/account/rotate-key', { method: 'POST', body: {} });
      props.onKeyRotated(answer.body.agent_key);
      setNewKey(answer.body.agent_key);
    } catch (err) {
      setRotateError(err);
    } finally {
      setRotating(false);
    }
  };

  const copy = async () => {
    if (!newKey) return;
    try {
      await navigator.clipboard.writeText(newKey);
      setCopied('Copied to the clipboard.');
    } catch {
      const field = document.getElementById('new-key') as HTMLInputElement | null;
      field?.select();
      setCopied('Selected: press Ctrl+C (⌘C on a Mac) to copy it.');
    }
  };

  const a = account.data;
  const today = usage.data?.today;
  return (
    <>
      <PageHeading title="Account" focus={props.focus} />
      <ErrorMessage error={account.error} />
      <div class="grid">
        <section class="card" aria-labelledby="balance-title">
          <h2 id="balance-title">Balance</h2>
          {a ? (
            <>
              <p class="figure" data-testid="balance">
                {cents(a.credit_balance_cents)}
              </p>
              <dl class="items">
                <Item term="E-mail">{a.email}</Item>
                {a.name ? <Item term="Name">{a.name}</Item> : null}
                <Item term="Plan">
                  <span class="badge">{a.plan}</span>
                </Item>
                <Item term="Since">
                  <Time iso={a.created_at} />
                </Item>
              </dl>
              <p class="hint">
                {a.plan === 'unlimited'
                  ? 'On the unlimited plan every charge is recorded with its cost but never refused for credit.'
                  : 'Pay-as-you-go: each paid operation is taken from the balance; the operator adds credit.'}
              </p>
            </>
          ) : account.loading ? (
            <p>Loading…</p>
          ) : null}
        </section>

        <section class="card" aria-labelledby="today-title">
          <h2 id="today-title">Today</h2>
          {today ? <TodaySpend today={today} /> : null}
          {usage.loading ? <p>Loading…</p> : null}
          {usage.error ? (
            <p class="hint">
              {usage.error instanceof ApiError && usage.error.status === 404
                ? 'This server does not report usage yet.'
                : `Usage could not be read: ${String((usage.error as Error).message)}`}
            </p>
          ) : null}
          <p>
            <a href="#/usage">Usage and ledger →</a>
          </p>
        </section>

        <section class="card wide" aria-labelledby="rotate-title">
          <h2 id="rotate-title">Rotate the API key</h2>
          <p>
            Rotating issues a new key and stops the current one at once. Agents that use the current key must
            be given the new one. Balance, plan, ledger and memories stay.
          </p>
          <CostNote>Free.</CostNote>
          <div class="actions">
            <button type="button" class="danger" disabled={rotating} onClick={() => setConfirming(true)}>
              {rotating ? 'Rotating…' : 'Rotate key…'}
            </button>
          </div>
          <ErrorMessage error={rotateError} />
          {newKey ? (
            <div class="new-key" role="status">
              <p>
                <strong>Your new key is shown only this once.</strong> Copy it now and give it to your agents.
                This tab already uses it.
              </p>
              <div class="field">
                <label for="new-key">New API key</label>
                <div class="inline">
                  <input
                    id="new-key"
                    type="text"
                    readOnly
                    value={newKey}
                    spellcheck={false}
                    onFocus={(e) => e.currentTarget.select()}
                  />
                  <button type="button" onClick={copy}>
                    Copy
                  </button>
                </div>
              </div>
              {copied ? <p class="hint">{copied}</p> : null}
            </div>
          ) : null}
        </section>
      </div>
      <ConfirmDialog
        open={confirming}
        title="Rotate the API key?"
        confirmLabel="Rotate key"
        danger
        onConfirm={rotate}
        onCancel={() => setConfirming(false)}
      >
        <p>The current key stops working immediately, for every agent that uses it.</p>
      </ConfirmDialog>
    </>
  );
}

function TodaySpend({ today }: { today: Usage['today'] }) {
  const limit = today.daily_limit_cents;
  const share = limit ? Math.min(1, today.spent_cents / limit) : 0;
  return (
    <>
      <p class="figure" data-testid="today-spent">
        {cents(today.spent_cents)}
      </p>
      <p>
        {limit === null ? (
          <>spent today (UTC). Your plan has no daily spending limit.</>
        ) : (
          <>
            spent today of a daily limit of {cents(limit)}; {cents(Math.max(0, limit - today.spent_cents))}{' '}
            left.
          </>
        )}
      </p>
      {limit !== null ? (
        <svg
          class="meter"
          width="100%"
          height="14"
          role="img"
          aria-label={`${Math.round(share * 100)} % of the daily limit spent`}
        >
          <rect x="0" y="0" width="100%" height="14" rx="4" class="inline-bar-track" />
          <rect
            x="0"
            y="0"
            width={`${share * 100}%`}
            height="14"
            rx="4"
            class={share >= 0.9 ? 'inline-bar-fill warn' : 'inline-bar-fill'}
          />
        </svg>
      ) : null}
      <p class="hint">
        The day resets at <Time iso={today.resets_at} /> ({fromNow(today.resets_at)}).
      </p>
    </>
  );
}
