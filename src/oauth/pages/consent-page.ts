/** The consent step: which client asks, where its answer goes, what it may do, and allow or deny. */
import { html, page } from './html.js';

export interface ConsentView {
  action: string;
  clientName: string;
  /** Where the answer goes (the redirect URI's host), and the client's own address when it has one. */
  redirectHost: string;
  clientIdUrl?: string;
  /** The redirect goes to this computer (a loopback address). */
  localRedirect: boolean;
  accountEmail: string;
  scopes: { name: string; description: string }[];
}

export function consentPage(view: ConsentView): string {
  return page(
    'Allow access',
    html`<h1><span class="client">${view.clientName}</span> asks to use your agent-context account</h1>
<p>Signed in as <strong>${view.accountEmail}</strong>.</p>
<p>Its answer goes to <span class="host">${view.redirectHost}</span>${
      view.clientIdUrl
        ? html`; the client describes itself at <span class="host">${view.clientIdUrl}</span>`
        : ''
    }.</p>
${
  view.localRedirect
    ? html`<p class="warning" role="note">The answer goes to a program on this computer (a localhost address). Allow
only if you started ${view.clientName} here yourself just now.</p>`
    : ''
}
<h2>It will be able to</h2>
<ul class="scopes">${view.scopes.map((scope) => html`<li><strong>${scope.name}</strong>: ${scope.description}</li>`)}</ul>
<p class="muted">What it spends comes from this account's balance; the console lists the clients you allowed and
revokes any of them.</p>
<form method="post" action="${view.action}">
<div class="actions">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</div>
</form>`,
  );
}
