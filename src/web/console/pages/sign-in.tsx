/** Signing in with an API key: checked against GET /api/ac/account before it is kept. */
import { ApiError, call } from '../api';
import { ErrorMessage, PageHeading, useCredentialForm } from '../components';
import type { Account } from '../types';

export function SignInPage(props: {
  focus: boolean;
  notice: string | null;
  onSignedIn: (key: string, account: Account) => void;
}) {
  const form = useCredentialForm(
    async (candidate) => {
      const answer = await call<Account>('/api/ac/account', { credential: candidate });
      props.onSignedIn(candidate, answer.body);
    },
    'Paste your API key first.',
    (err) =>
      err instanceof ApiError && err.status === 401
        ? new Error(`That key was not accepted. ${err.message}`)
        : err,
  );

  return (
    <section class="narrow" aria-labelledby="sign-in-title">
      <div class="card">
        <PageHeading title="Sign in" focus={props.focus} id="sign-in-title" />
        <p>
          Paste the API key of your agent (it starts with <code>ac_</code>). It is kept in this browser tab
          only and sent to this service as the <code>X-API-Key</code> header; closing the tab or signing out
          forgets it.
        </p>
        {props.notice ? (
          <p class="message message-info" role="status">
            {props.notice}
          </p>
        ) : null}
        <form onSubmit={form.submit} class="stack" aria-labelledby="sign-in-title">
          <div class="field">
            <label for="api-key">API key</label>
            <input
              id="api-key"
              name="api-key"
              type="password"
              autocomplete="off"
              spellcheck={false}
              value={form.value}
              onInput={(e) => form.setValue(e.currentTarget.value)}
              aria-describedby="api-key-hint"
            />
            <span id="api-key-hint" class="hint">
              No key yet? Register with <code>POST /api/ac/register</code>: see the{' '}
              <a href="/docs">API reference</a>.
            </span>
          </div>
          <ErrorMessage error={form.error} />
          <div class="actions">
            <button type="submit" class="primary" disabled={form.busy}>
              {form.busy ? 'Signing in…' : 'Sign in'}
            </button>
          </div>
        </form>
      </div>
    </section>
  );
}
