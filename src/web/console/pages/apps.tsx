/**
 * Connected apps: the OAuth clients (Claude, ChatGPT, an editor…) this account has allowed to use it through
 * /mcp (GET /api/ac/oauth/clients), what each may do and when it was last used, and revoking one (DELETE, after
 * a confirmation), which stops every token of that app at once. On a server with OAuth off the list is a 404:
 * the page then says so, and how the operator turns it on.
 */
import { useRef, useState } from 'preact/hooks';
import { ApiError, call } from '../api';
import {
  ConfirmDialog,
  ErrorMessage,
  PageHeading,
  StatusMessage,
  TableWrap,
  Time,
  useLoad,
} from '../components';
import type { OAuthClient, OAuthClients } from '../types';

const SCOPE_NAMES: Record<string, string> = { read: 'Read', write: 'Write' };

function scopeName(scope: string): string {
  return SCOPE_NAMES[scope] ?? scope;
}

/** The list's 404: this server has no authorization server (OAuth is off). */
function oauthOff(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404;
}

export function AppsPage(props: { focus: boolean }) {
  const list = useLoad(async () => (await call<OAuthClients>('/api/ac/oauth/clients')).body, []);
  const [target, setTarget] = useState<OAuthClient | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [revoking, setRevoking] = useState<string | null>(null);
  const [revokeError, setRevokeError] = useState<unknown>(null);
  const [status, setStatus] = useState<string | null>(null);
  const listHeading = useRef<HTMLHeadingElement>(null);

  const drop = (clientId: string) =>
    list.setData((current) =>
      current ? { clients: current.clients.filter((c) => c.client_id !== clientId) } : current,
    );

  const revoke = async () => {
    const client = target;
    setConfirming(false);
    if (!client) return;
    setRevoking(client.client_id);
    setRevokeError(null);
    setStatus(null);
    try {
      await call<{ revoked: boolean; client_id: string }>('/api/ac/oauth/clients', {
        method: 'DELETE',
        query: { client_id: client.client_id },
      });
      drop(client.client_id);
      setStatus(`Revoked ${client.client_name}: its access stopped at once.`);
      listHeading.current?.focus();
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        // Revoked meanwhile (in another tab, say): it is gone either way.
        drop(client.client_id);
        setStatus(`${client.client_name} was no longer allowed.`);
        listHeading.current?.focus();
      } else {
        setRevokeError(err);
      }
    } finally {
      setRevoking(null);
    }
  };

  const clients = list.data?.clients;
  return (
    <>
      <PageHeading title="Connected apps" focus={props.focus} />
      {oauthOff(list.error) ? (
        <section class="card narrow" aria-labelledby="apps-off-title">
          <h2 id="apps-off-title">OAuth is off on this server</h2>
          <p data-testid="oauth-off">
            Apps such as Claude or ChatGPT cannot connect to this server as a connector. The operator turns
            OAuth on by serving it behind HTTPS with <code>AC_PUBLIC_URL</code> set to its https address (see{' '}
            <code>docs/mcp.md</code>).
          </p>
          <p class="hint">Agents that send the API key work as before.</p>
        </section>
      ) : (
        <>
          <p>
            These are the apps you allowed to use this account through OAuth. Each one spends from this
            account’s balance as your agents do. Revoking an app stops its access at once; it can ask again
            later.
          </p>
          <StatusMessage text={status} />
          <section class="card" aria-labelledby="apps-title" aria-busy={list.loading}>
            <h2 id="apps-title" ref={listHeading} tabIndex={-1}>
              Allowed apps
            </h2>
            <ErrorMessage error={list.error} />
            <ErrorMessage error={revokeError} />
            {clients === undefined ? (
              list.loading ? (
                <p>Loading…</p>
              ) : null
            ) : clients.length === 0 ? (
              <p data-testid="apps-empty">
                No app has been allowed yet. Apps such as Claude or ChatGPT ask for access when you add this
                server as a connector.
              </p>
            ) : (
              <>
                <TableWrap label="Allowed apps">
                  <table class="stack-table apps" data-testid="apps">
                    <thead>
                      <tr>
                        <th scope="col">App</th>
                        <th scope="col">Access</th>
                        <th scope="col">Allowed on</th>
                        <th scope="col">Last used</th>
                        <th scope="col">
                          <span class="visually-hidden">Actions</span>
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {clients.map((c) => (
                        <tr key={c.client_id}>
                          <th scope="row">
                            <span class="app-name">{c.client_name}</span>
                            <span class="app-host">{c.client_host}</span>
                          </th>
                          <td data-label="Access">
                            <span class="badges">
                              {c.scopes.map((scope) => (
                                <span key={scope} class="badge">
                                  {scopeName(scope)}
                                </span>
                              ))}
                            </span>
                          </td>
                          <td data-label="Allowed on">
                            <Time iso={c.allowed_at} />
                          </td>
                          <td data-label="Last used">
                            {c.last_used_at ? <Time iso={c.last_used_at} /> : 'never'}
                          </td>
                          <td data-label="" class="row-action">
                            <button
                              type="button"
                              class="danger small"
                              disabled={revoking !== null}
                              onClick={() => {
                                setTarget(c);
                                setConfirming(true);
                              }}
                            >
                              {revoking === c.client_id ? (
                                'Revoking…'
                              ) : (
                                <>
                                  Revoke…<span class="visually-hidden"> {c.client_name}</span>
                                </>
                              )}
                            </button>
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableWrap>
                <dl class="scope-legend hint">
                  <div>
                    <dt>Read</dt>
                    <dd>
                      retrieve, search and list memories and their history, see the account and balance, fetch
                      live data.
                    </dd>
                  </div>
                  <div>
                    <dt>Write</dt>
                    <dd>store, change, restore, import and delete memories.</dd>
                  </div>
                </dl>
              </>
            )}
          </section>
        </>
      )}
      <ConfirmDialog
        open={confirming}
        title={`Revoke ${target?.client_name ?? 'this app'}?`}
        confirmLabel="Revoke"
        danger
        onConfirm={revoke}
        onCancel={() => setConfirming(false)}
      >
        <p>
          {target?.client_name ?? 'The app'}
          {target ? ` (${target.client_host})` : null} loses access to this account at once: every token it
          holds stops working. To use it again, add it as a connector again and allow it.
        </p>
      </ConfirmDialog>
    </>
  );
}
