/**
 * The console's shell: the header with the navigation and the session, hash routing between the pages
 * (#/account, #/usage, #/memories, #/live, #/apps, #/operator), and signing in and out.
 */
import type { ComponentChild } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { call, onBalance, onUnauthorized } from './api';
import { cents } from './format';
import { AccountPage } from './pages/account';
import { AppsPage } from './pages/apps';
import { LiveDataPage } from './pages/live-data';
import { MemoriesPage } from './pages/memories';
import { OperatorPage } from './pages/operator';
import { SignInPage } from './pages/sign-in';
import { UsagePage } from './pages/usage';
import { session } from './session';
import type { Account, Ping } from './types';

export type Route = 'account' | 'usage' | 'memories' | 'live' | 'apps' | 'operator';
const ROUTES: readonly Route[] = ['account', 'usage', 'memories', 'live', 'apps', 'operator'];
const TITLES: Record<Route, string> = {
  account: 'Account',
  usage: 'Usage',
  memories: 'Memories',
  live: 'Live data',
  apps: 'Connected apps',
  operator: 'Operator',
};

function routeOf(hash: string): Route {
  const name = hash.replace(/^#\/?/, '');
  return (ROUTES as readonly string[]).includes(name) ? (name as Route) : 'account';
}

export function App() {
  const [key, setKey] = useState<string | null>(() => session.key());
  const [adminToken, setAdminToken] = useState<string | null>(() => session.adminToken());
  const [route, setRoute] = useState<Route>(() => routeOf(window.location.hash));
  const [navigated, setNavigated] = useState(false);
  const [ping, setPing] = useState<Ping | null>(null);
  const [balance, setBalance] = useState<number | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [adminNotice, setAdminNotice] = useState<string | null>(null);

  useEffect(() => {
    const changed = () => {
      if (!window.location.hash.startsWith('#/') && window.location.hash !== '') return;
      setRoute(routeOf(window.location.hash));
      setNavigated(true);
    };
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);

  useEffect(() => {
    call<Ping>('/api/ac/ping', { auth: 'none' }).then(
      (answer) => setPing(answer.body),
      () => setPing(null),
    );
  }, []);

  useEffect(() => {
    const offBalance = onBalance(setBalance);
    const offUnauthorized = onUnauthorized(({ auth, message }) => {
      if (auth === 'agent') {
        session.setKey(null);
        setKey(null);
        setBalance(null);
        setNotice(`Signed out: the key was refused. ${message}`);
      } else if (auth === 'admin') {
        session.setAdminToken(null);
        setAdminToken(null);
        setAdminNotice(`Signed out of the operator view: the token was refused. ${message}`);
      }
    });
    return () => {
      offBalance();
      offUnauthorized();
    };
  }, []);

  useEffect(() => {
    const page = route === 'operator' || key ? TITLES[route] : 'Sign in';
    document.title = `${page} · agent-context console`;
  }, [route, key]);

  const signIn = (newKey: string, account: Account) => {
    session.setKey(newKey);
    setKey(newKey);
    setBalance(account.credit_balance_cents);
    setNotice(null);
    if (route === 'operator') window.location.hash = '#/account';
  };
  const signOut = () => {
    session.setKey(null);
    session.setAdminToken(null);
    setKey(null);
    setAdminToken(null);
    setBalance(null);
    setNotice('Signed out. The key was removed from this tab.');
    setAdminNotice(null);
    if (window.location.hash !== '#/account') window.location.hash = '#/account';
  };
  const useKey = (newKey: string) => {
    session.setKey(newKey);
    setKey(newKey);
  };
  const adminSignIn = (token: string) => {
    session.setAdminToken(token);
    setAdminToken(token);
    setAdminNotice(null);
  };
  const adminSignOut = () => {
    session.setAdminToken(null);
    setAdminToken(null);
    setAdminNotice('Signed out of the operator view.');
  };

  const showOperator = ping?.admin_api === true;
  const links: { route: Route; label: string }[] = key
    ? [
        { route: 'account', label: 'Account' },
        { route: 'usage', label: 'Usage' },
        { route: 'memories', label: 'Memories' },
        { route: 'live', label: 'Live data' },
        { route: 'apps', label: 'Connected apps' },
      ]
    : [{ route: 'account', label: 'Sign in' }];
  if (showOperator) links.push({ route: 'operator', label: 'Operator' });

  let page: ComponentChild;
  if (route === 'operator') {
    page = showOperator ? (
      <OperatorPage
        focus={navigated}
        token={adminToken}
        notice={adminNotice}
        onSignIn={adminSignIn}
        onSignOut={adminSignOut}
      />
    ) : (
      <section aria-labelledby="no-operator">
        <h1 id="no-operator">Operator</h1>
        <p>
          {ping === null
            ? 'Checking whether this server offers the operator view…'
            : 'This server has no operator view: it is offered only while AC_ADMIN_TOKEN is set.'}
        </p>
      </section>
    );
  } else if (!key) {
    page = <SignInPage focus={navigated} notice={notice} onSignedIn={signIn} />;
  } else if (route === 'usage') {
    page = <UsagePage focus={navigated} />;
  } else if (route === 'memories') {
    page = <MemoriesPage focus={navigated} />;
  } else if (route === 'live') {
    page = <LiveDataPage focus={navigated} />;
  } else if (route === 'apps') {
    page = <AppsPage focus={navigated} />;
  } else {
    page = <AccountPage focus={navigated} onKeyRotated={useKey} />;
  }

  const current = !key && route !== 'operator' ? 'account' : route;
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="top">
        <div class="top-inner">
          <a class="brand" href="#/account">
            agent-context <span>console</span>
          </a>
          <nav aria-label="Main">
            <ul>
              {links.map((link) => (
                <li key={link.route}>
                  <a href={`#/${link.route}`} aria-current={current === link.route ? 'page' : undefined}>
                    {link.label}
                  </a>
                </li>
              ))}
              <li>
                <a href="/docs">API reference</a>
              </li>
            </ul>
          </nav>
          {key || adminToken ? (
            <div class="session">
              {key && balance !== null ? (
                <span class="balance">
                  Balance <strong data-testid="header-balance">{cents(balance)}</strong>
                </span>
              ) : null}
              <button type="button" class="quiet" onClick={signOut}>
                Sign out
              </button>
            </div>
          ) : null}
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {page}
      </main>
      <footer class="foot">
        <p>
          agent-context {ping ? `${ping.version} · ` : ''}
          <a href="/docs">API reference</a> · <a href="/api/ac/openapi.json">OpenAPI document</a>
        </p>
      </footer>
    </>
  );
}
